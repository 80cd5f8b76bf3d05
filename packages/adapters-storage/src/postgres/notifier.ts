import { type Notifier, PlatformError } from '@agent-platform/core';
import { createCoalescer, decodeNotification, encodeNotification, NotificationHandlers } from '@agent-platform/core/internal';
import type pg from 'pg';

export interface PostgresNotifierOptions {
  /** `postgres://USER:PASSWORD@HOST:PORT/DATABASE`: the database the instances share. */
  readonly connectionString: string;
  /** The PostgreSQL channel all messages travel on (their own channel is inside the payload). Default `agent_platform`. */
  readonly channel?: string;
  /** Longest wait between two attempts to reconnect the listening connection. Default 5,000 ms. */
  readonly maxReconnectMs?: number;
}

/** Most messages sent in one statement. */
const MAX_BATCH = 100;

/** The listening connection's `application_name`, so operators (and tests) can tell it apart. */
export const NOTIFIER_APPLICATION_NAME = 'agent_platform_notifier';

/**
 * A notifier over PostgreSQL's LISTEN/NOTIFY: every instance on the database hears every
 * message. One dedicated connection LISTENs (it is never returned to a pool, where a LISTEN
 * would be lost or leak to another user); messages go out with `pg_notify` through a pool of
 * one, those published while one is being sent together in the next statement. When the listening connection breaks, it reconnects with a growing delay (100 ms doubling
 * up to `maxReconnectMs`) and listens again; messages sent meanwhile are not heard (a
 * notifier delivers at most once: see `Notifier`). Resolves once it listens.
 *
 * @example
 * const notifier = await postgresNotifier({ connectionString: process.env.AGENT_PLATFORM_DATABASE_URL! });
 * const platform = new AgentPlatform({ storage, notifier });
 */
export async function postgresNotifier(options: PostgresNotifierOptions): Promise<Notifier> {
  const { default: pgModule } = await import('pg');
  const channel = options.channel ?? 'agent_platform';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw PlatformError.invalid(`channel: "${channel}" must be a lower-case SQL identifier of at most 63 characters`);
  const maxDelay = options.maxReconnectMs ?? 5000;
  const handlers = new NotificationHandlers();
  const sender = new pgModule.Pool({ connectionString: options.connectionString, max: 1, application_name: `${NOTIFIER_APPLICATION_NAME}_send` });
  // A broken idle sending connection is dropped by pg; the next publish opens another.
  sender.on('error', () => {});
  let closed = false;
  let listener: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const listen = async (): Promise<void> => {
    const client = new pgModule.Client({ connectionString: options.connectionString, application_name: NOTIFIER_APPLICATION_NAME });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (listener === client) listener = undefined;
      client.end().catch(() => {});
      if (!closed) reconnect(100);
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (message) => {
      if (message.channel !== channel || message.payload === undefined) return;
      const decoded = decodeNotification(message.payload);
      if (decoded) handlers.deliver(decoded.channel, decoded.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    listener = client;
  };

  const reconnect = (delay: number) => {
    retry = setTimeout(() => {
      retry = undefined;
      if (closed) return;
      listen().catch(() => {
        if (!closed) reconnect(Math.min(delay * 2, maxDelay));
      });
    }, delay);
    retry.unref();
  };

  try {
    await listen();
  } catch (error) {
    await sender.end().catch(() => {});
    throw error;
  }

  // Messages published while a statement is in flight go together in the next one (its
  // pg_notify calls run in order, in one transaction): a burst costs one round trip, not one
  // each. A statement never carries one message twice: PostgreSQL delivers identical
  // notifications of one transaction once, and every publish must be sent as it was.
  const outbox = createCoalescer<string>(
    async (bodies) => {
      const calls = bodies.map((_, i) => `pg_notify($1, $${i + 2})`).join(', ');
      try {
        await sender.query(`SELECT ${calls}`, [channel, ...bodies]);
      } catch (error) {
        throw new PlatformError('unavailable', `could not send a notification: ${(error as Error).message}`, { cause: error });
      }
    },
    (batch, body) => batch.length < MAX_BATCH && !batch.includes(body),
  );

  return {
    async publish(name, payload) {
      if (closed) throw new PlatformError('unavailable', 'the notifier is closed');
      return outbox.add(encodeNotification(name, payload));
    },
    subscribe: (name, handler) => handlers.add(name, handler),
    async close() {
      if (closed) return;
      closed = true;
      if (retry) clearTimeout(retry);
      handlers.clear();
      const client = listener;
      listener = undefined;
      await Promise.all([client?.end().catch(() => {}), sender.end().catch(() => {})]);
    },
  };
}
