import { type Clock, systemClock } from '../clock.js';
import { PlatformError } from '../errors.js';
import { randomString } from '../ids.js';
import type { Notifier } from '../notify/notifier.js';
import type { StreamRepository } from '../storage/types.js';
import type { StreamRecord, StreamStore } from './stream-store.js';
import { DEFAULT_MAX_OPEN_STREAMS, type StreamHubOptions } from './streams.js';

export interface StorageStreamStoreOptions extends StreamHubOptions {
  /** The database's streams (`storage.streams` of the SQLite and PostgreSQL adapters). */
  readonly streams: StreamRepository;
  /** Wakes followers when a stream is written, on any instance (`postgresNotifier` across instances). */
  readonly notifier: Notifier;
  /** How often a follower reads again without being woken (a missed message). Default 1,000 ms. */
  readonly pollMs?: number;
}

/** The notifier channel of written streams: `{ streamId }`. */
export const STREAM_CHANNEL = 'chat.stream';

/** Events read from the database at a time. */
const PAGE = 200;

/**
 * Chat streams in the database, for several instances: a stream written on one instance is
 * followed and resumed on any other. Followers wait for a notifier message that the stream was
 * written (no busy polling) and read again every `pollMs` in case one was missed. Expiry as
 * `StreamStore` says; expired streams are deleted when streams are created.
 *
 * @example
 * const streamStore = storageStreamStore({ streams: storage.streams!, notifier });
 */
export function storageStreamStore(options: StorageStreamStoreOptions): StreamStore {
  const { streams, notifier } = options;
  const clock: Clock = options.clock ?? systemClock;
  const ttlMs = options.ttlMs ?? 3_600_000;
  const unwrittenTtlMs = options.unwrittenTtlMs ?? 600_000;
  const maxOpen = options.maxOpenPerUser ?? DEFAULT_MAX_OPEN_STREAMS;
  const pollMs = options.pollMs ?? 1000;
  const now = () => clock.now().getTime();
  const waiters = new Map<string, Set<() => void>>();
  const wake = (id: string) => {
    for (const w of [...(waiters.get(id) ?? [])]) w();
  };
  const stop = notifier.subscribe(STREAM_CHANNEL, (payload) => {
    const id = (payload as { streamId?: unknown } | null)?.streamId;
    if (typeof id === 'string') wake(id);
  });
  const written = (id: string) => notifier.publish(STREAM_CHANNEL, { streamId: id }).catch(() => wake(id));
  const wait = (id: string, signal?: AbortSignal) =>
    new Promise<void>((resolve) => {
      const set = waiters.get(id) ?? new Set();
      waiters.set(id, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      set.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });

  return {
    async create(input) {
      await streams.sweep(now());
      if (!(await streams.create(input, { maxOpen, expiresAt: now() + unwrittenTtlMs, now: now() }))) {
        throw new PlatformError(
          'rate_limited',
          `Too many open streams: at most ${maxOpen} per user. A stream is open until a completion has written to it and ended; one never written is dropped ${Math.round(unwrittenTtlMs / 1000)} s after it was created`,
        );
      }
    },
    async get(userId, chatId, id) {
      const row = await streams.get(userId, chatId, id, now());
      return row && { id: row.id, chatId: row.chatId, createdAt: row.createdAt };
    },
    async length(id) {
      // After the largest sequence number a column holds (4-byte integer): the row only.
      return (await streams.read(id, 2_147_483_647, 1, now(), now() + ttlMs))?.row.length ?? 0;
    },
    async openWriter(userId, chatId, id) {
      const writer = `writer_${randomString(16)}`;
      const claimed = await streams.claim(userId, chatId, id, writer, now());
      if (claimed === 'not_found') throw PlatformError.notFound('Stream not found');
      if (claimed === 'conflict') throw new PlatformError('conflict', `Stream ${id} is being written by another completion`);
      let ended = false;
      return {
        async append(event) {
          if ((await streams.append(id, writer, event)) === undefined) throw new PlatformError('conflict', `Stream ${id} is no longer written by this completion`);
          await written(id);
        },
        async end() {
          if (ended) return;
          ended = true;
          await streams.end(id, writer, now() + ttlMs);
          await written(id);
        },
      };
    },
    async *read(userId, chatId, id, afterId = 0, signal) {
      if (!(await streams.get(userId, chatId, id, now()))) throw PlatformError.notFound('Stream not found');
      let next = Math.max(0, afterId);
      for (;;) {
        // Registered before reading, so a write between the read and the wait is not missed.
        const woken = wait(id, signal);
        const page = await streams.read(id, next, PAGE, now(), now() + ttlMs);
        if (!page) return; // expired (a stream never written ends its readers)
        for (const e of page.events) {
          if (signal?.aborted) return; // the reader went away: nothing more, not even what this page holds
          next = e.id;
          yield { id: e.id, data: e.event as StreamRecord };
        }
        if (page.events.length === PAGE) continue;
        if (page.row.state === 'ended' || signal?.aborted) return;
        await woken;
      }
    },
    async close() {
      stop();
      for (const id of [...waiters.keys()]) wake(id);
    },
  };
}
