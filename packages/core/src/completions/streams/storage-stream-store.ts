import { type Clock, systemClock } from '../../clock.js';
import { PlatformError } from '../../errors.js';
import { randomString } from '../../ids.js';
import type { Notifier } from '../../notify/notifier.js';
import type { StreamRepository } from '../../storage/types.js';
import { DEFAULT_MAX_OPEN_STREAMS, type StreamHubOptions } from './hub.js';
import type { StreamRecord, StreamStore } from './stream-store.js';

export interface StorageStreamStoreOptions extends StreamHubOptions {
  /** The database's streams (`storage.streams` of the SQLite and PostgreSQL adapters). */
  readonly streams: StreamRepository;
  /** Wakes followers when a stream is written, on any instance (`postgresNotifier` across instances). */
  readonly notifier: Notifier;
  /** How often a follower reads again without being woken (a missed message, a lapsed writer). Default 1,000 ms. */
  readonly pollMs?: number;
  /**
   * The writer's lease (ms): a stream whose writer has neither appended nor sent a heartbeat for
   * this long is ended with an `unavailable` error event by whichever reader (or stream creation)
   * finds it first; followers then end. Default {@link DEFAULT_STREAM_LEASE_MS}.
   */
  readonly writerLeaseMs?: number;
  /** How often a writer extends its lease while the model is silent (a tool call). Default a third of `writerLeaseMs`. */
  readonly heartbeatMs?: number;
}

/** The default lease of a stream's writer: 30 s, as the indexing jobs'. */
export const DEFAULT_STREAM_LEASE_MS = 30_000;

/** The notifier channel of written streams: `{ streamId }`. */
export const STREAM_CHANNEL = 'chat.stream';

/** Events read from the database at a time. */
const PAGE = 200;

/**
 * Chat streams in the database, for several instances: a stream written on one instance is
 * followed and resumed on any other. Followers wait for a notifier message that the stream was
 * written (no busy polling) and read again every `pollMs` in case one was missed. Expiry as
 * `StreamStore` says; expired streams are deleted when streams are created. A writer holds its
 * stream by a lease in the database (`writerLeaseMs`), extended as it appends and by a heartbeat:
 * when its instance dies, the stream is ended with an error event by the first reader that finds
 * the lease over (or the next stream creation), so followers end and the user's open places free.
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
  const leaseMs = options.writerLeaseMs ?? DEFAULT_STREAM_LEASE_MS;
  const heartbeatMs = options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3));
  const now = () => clock.now().getTime();
  /** Heartbeats of this instance's open writers, stopped at `close`. */
  const heartbeats = new Set<ReturnType<typeof setInterval>>();
  const waiters = new Map<string, Set<() => void>>();
  const wake = (id: string) => {
    for (const w of [...(waiters.get(id) ?? [])]) w();
  };
  const stop = notifier.subscribe(STREAM_CHANNEL, (payload) => {
    const id = (payload as { streamId?: unknown } | null)?.streamId;
    if (typeof id === 'string') wake(id);
  });
  const written = (id: string) => notifier.publish(STREAM_CHANNEL, { streamId: id }).catch(() => wake(id));
  /** A wait for a write to stream `id` (or `pollMs`, or the signal); `cancel` ends it at once. */
  const wait = (id: string, signal?: AbortSignal) => {
    let cancel = () => {};
    const woken = new Promise<void>((resolve) => {
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
      cancel = done;
    });
    return { woken, cancel };
  };

  /**
   * Ends the streams (one, or all) whose writer's lease ran out: its instance died or hangs.
   * The repository's guarded UPDATE makes one caller of all instances end each one; its
   * followers everywhere are woken to read the error event and stop.
   */
  const endLapsed = async (id?: string) => {
    const at = now();
    const event: StreamRecord = {
      type: 'error',
      code: 'unavailable',
      message: `The instance writing this stream stopped (its writer's lease of ${leaseMs} ms ran out); the answer is incomplete: send the message again`,
    };
    const ended = await streams.endLapsed({ now: at, expiresAt: at + ttlMs, event, ...(id !== undefined ? { id } : {}) });
    await Promise.all(ended.map((e) => written(e)));
  };

  return {
    writerLeaseMs: leaseMs,
    async create(input) {
      await streams.sweep(now());
      await endLapsed(); // their open places are free again
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
      await endLapsed(id); // a dead writer's stream may be written again
      const claimed = await streams.claim(userId, chatId, id, writer, now(), now() + leaseMs);
      if (claimed === 'not_found') throw PlatformError.notFound('Stream not found');
      if (claimed === 'conflict') throw new PlatformError('conflict', `Stream ${id} is being written by another completion`);
      let ended = false;
      // Keeps the lease while the model is silent (a tool call, a slow first token); stops
      // when the stream is ended, by this writer or by another instance after a lapse.
      const heartbeat = setInterval(() => {
        streams.heartbeat(id, writer, now() + leaseMs).then(
          (held) => held || stopHeartbeat(),
          () => {}, // the database is unreachable: the next beat tries again
        );
      }, heartbeatMs);
      heartbeat.unref?.();
      heartbeats.add(heartbeat);
      const stopHeartbeat = () => {
        clearInterval(heartbeat);
        heartbeats.delete(heartbeat);
      };
      return {
        async append(event) {
          if ((await streams.append(id, writer, event, now() + leaseMs)) === undefined) {
            stopHeartbeat();
            throw new PlatformError('conflict', `Stream ${id} is no longer written by this completion`);
          }
          await written(id);
        },
        async end() {
          if (ended) return;
          ended = true;
          stopHeartbeat();
          await streams.end(id, writer, now() + ttlMs);
          await written(id);
        },
      };
    },
    async *read(userId, chatId, id, afterId = 0, signal) {
      if (!(await streams.get(userId, chatId, id, now()))) throw PlatformError.notFound('Stream not found');
      let next = Math.max(0, afterId);
      // The current wait, ended whenever the reader reads again or stops (its timer and its
      // listener on the signal would otherwise outlive it).
      let waiting: ReturnType<typeof wait> | undefined;
      try {
        for (;;) {
          // Registered before reading, so a write between the read and the wait is not missed.
          waiting?.cancel();
          waiting = wait(id, signal);
          const page = await streams.read(id, next, PAGE, now(), now() + ttlMs);
          if (!page) return; // expired (a stream never written ends its readers)
          for (const e of page.events) {
            if (signal?.aborted) return; // the reader went away: nothing more, not even what this page holds
            next = e.id;
            yield { id: e.id, data: e.event as StreamRecord };
          }
          if (page.events.length === PAGE) continue;
          if (page.row.state === 'ended' || signal?.aborted) return;
          if (page.row.state === 'writing' && page.row.leaseUntil !== null && page.row.leaseUntil <= now()) {
            await endLapsed(id); // then the next read has the error event, and the stream's end
            continue;
          }
          await waiting.woken;
        }
      } finally {
        waiting?.cancel();
      }
    },
    async close() {
      stop();
      for (const h of heartbeats) clearInterval(h);
      heartbeats.clear();
      for (const id of [...waiters.keys()]) wake(id);
    },
  };
}
