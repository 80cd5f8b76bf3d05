import { PlatformError } from '../errors.js';

/** A notification's payload: plain JSON (ids and small values, never documents). */
export type NotificationPayload = null | boolean | number | string | readonly NotificationPayload[] | { readonly [key: string]: NotificationPayload };

/** Called with each payload published on a channel it subscribed to, by this instance or another. */
export type NotificationHandler = (payload: NotificationPayload) => void;

/**
 * Most bytes of one notification as sent (channel and payload as JSON, UTF-8). PostgreSQL's
 * NOTIFY takes under 8000 bytes; every notifier keeps to it, so what works in one process
 * works across instances.
 */
export const MAX_NOTIFICATION_BYTES = 7900;

/**
 * Messages between the instances of one deployment: in-process by default
 * ({@link createMemoryNotifier}), PostgreSQL LISTEN/NOTIFY when instances share a database
 * (`postgresNotifier` in `@agent-platform/adapters-storage/postgres`).
 *
 * Delivery is at most once and asynchronous (never inside `publish`), in publishing order per
 * publisher: a handler must not rely on hearing every message (a listener reconnecting misses
 * what was sent meanwhile), so what it learns must also be readable from storage.
 */
export interface Notifier {
  /**
   * Sends `payload` to every subscriber of `channel` on every instance, this one included.
   * Rejects with `PlatformError` `invalid_request` when the message is over
   * {@link MAX_NOTIFICATION_BYTES}, `unavailable` when the notifier is closed or cannot send.
   */
  publish(channel: string, payload: NotificationPayload): Promise<void>;
  /** Calls `handler` with each payload published on `channel` from now on; answers the unsubscribe function. */
  subscribe(channel: string, handler: NotificationHandler): () => void;
  /** Stops delivering and frees its connection. Idempotent. */
  close(): Promise<void>;
}

/** The message as sent: `{channel, payload}` as JSON, checked against the size limit. */
export function encodeNotification(channel: string, payload: NotificationPayload): string {
  const body = JSON.stringify({ c: channel, p: payload });
  const bytes = Buffer.byteLength(body);
  if (bytes > MAX_NOTIFICATION_BYTES) {
    throw PlatformError.invalid(`notification on ${channel} is ${bytes} bytes, over the limit of ${MAX_NOTIFICATION_BYTES}: send ids, not documents`);
  }
  return body;
}

/** The channel and payload of a message made by {@link encodeNotification}; undefined for anything else. */
export function decodeNotification(body: string): { channel: string; payload: NotificationPayload } | undefined {
  try {
    const message = JSON.parse(body) as { c?: unknown; p?: NotificationPayload };
    return typeof message.c === 'string' ? { channel: message.c, payload: message.p ?? null } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Handlers by channel, shared by the notifiers: each delivers decoded messages here. A handler
 * that throws does not stop the others.
 */
export class NotificationHandlers {
  readonly #handlers = new Map<string, Set<NotificationHandler>>();

  add(channel: string, handler: NotificationHandler): () => void {
    const set = this.#handlers.get(channel) ?? new Set();
    this.#handlers.set(channel, set);
    // Wrapped, so one function subscribed twice is called twice and unsubscribes once each.
    const entry: NotificationHandler = (payload) => handler(payload);
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.#handlers.get(channel) === set) this.#handlers.delete(channel);
    };
  }

  deliver(channel: string, payload: NotificationPayload): void {
    for (const handler of [...(this.#handlers.get(channel) ?? [])]) {
      try {
        handler(payload);
      } catch {
        // A handler's failure is its own; the other subscribers still hear the message.
      }
    }
  }

  clear(): void {
    this.#handlers.clear();
  }
}

/**
 * The notifier of one process: messages reach the subscribers of this process only, on a later
 * microtask. The default, for one instance.
 *
 * @example
 * const notifier = createMemoryNotifier();
 * const stop = notifier.subscribe('settings', (p) => console.log(p));
 * await notifier.publish('settings', { projectId: 'prj_1' });
 */
export function createMemoryNotifier(): Notifier {
  const handlers = new NotificationHandlers();
  let closed = false;
  return {
    async publish(channel, payload) {
      if (closed) throw new PlatformError('unavailable', 'the notifier is closed');
      // Through the encoding, so a message over the limit fails here as it would on PostgreSQL,
      // and handlers get a copy, not the publisher's object.
      const message = decodeNotification(encodeNotification(channel, payload));
      if (message) queueMicrotask(() => handlers.deliver(message.channel, message.payload));
    },
    subscribe: (channel, handler) => handlers.add(channel, handler),
    async close() {
      closed = true;
      handlers.clear();
    },
  };
}
