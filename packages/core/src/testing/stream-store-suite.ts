import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { StreamHubOptions } from '../completions/streams/hub.js';
import { type StorageStreamStoreOptions, storageStreamStore } from '../completions/streams/storage-stream-store.js';
import type { StreamRecord, StreamStore } from '../completions/streams/stream-store.js';
import { isPlatformError } from '../errors.js';
import { createMemoryNotifier } from '../notify/notifier.js';
import type { StorageAdapter } from '../storage/types.js';

/** The options a suite's store is made with: limits, clock, and for stores with a writer lease, the lease and polling. */
export type StreamStoreCaseOptions = StreamHubOptions & Pick<StorageStreamStoreOptions, 'writerLeaseMs' | 'heartbeatMs' | 'pollMs'>;

export interface StreamStoreSuiteOptions {
  /** A new store holding no streams, with these options (its defaults otherwise; a store without a writer lease ignores those). */
  create(options: StreamStoreCaseOptions): Promise<StreamStore>;
}

let n = 0;
const chunk = (text: string): StreamRecord => ({
  type: 'chunk',
  chunk: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: text }, finish_reason: null }] } as never,
});
const text = (e: StreamRecord) => (e.type === 'chunk' ? (e.chunk.choices[0]?.delta.content ?? '') : `error:${e.code}`);

async function collect(events: AsyncIterable<{ id: number; data: StreamRecord }>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of events) out.push(`${e.id}:${text(e.data)}`);
  return out;
}

async function code(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return isPlatformError(error) ? error.code : String(error);
}

/** The behaviour every `StreamStore` must have. */
export function describeStreamStore(name: string, options: StreamStoreSuiteOptions): void {
  describe(`StreamStore conformance: ${name}`, () => {
    const open: StreamStore[] = [];
    const make = async (o: StreamStoreCaseOptions = {}) => {
      const store = await options.create(o);
      open.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((s) => s.close?.()));
    });
    const fresh = async (store: StreamStore, userId = 'user_a', chatId = 'chat_1') => {
      const id = `stream_${Date.now()}_${++n}`;
      await store.create({ id, chatId, userId, createdAt: new Date(1_000) });
      return id;
    };

    it('replays typed events from the start or after an id, follows live ones, and ends with the stream', async () => {
      const store = await make();
      const id = await fresh(store);
      expect(await store.get('user_a', 'chat_1', id)).toEqual({ id, chatId: 'chat_1', createdAt: new Date(1_000) });
      const whole = collect(store.read('user_a', 'chat_1', id)); // waits for the writer
      const writer = await store.openWriter('user_a', 'chat_1', id);
      await writer.append(chunk('a'));
      await writer.append(chunk('b'));
      const live = collect(store.read('user_a', 'chat_1', id, 1));
      await writer.append({ type: 'error', code: 'upstream_error', message: 'model failed' });
      await writer.end();
      await writer.end();
      expect(await whole).toEqual(['1:a', '2:b', '3:error:upstream_error']);
      expect(await live).toEqual(['2:b', '3:error:upstream_error']);
      expect(await collect(store.read('user_a', 'chat_1', id, 2))).toEqual(['3:error:upstream_error']);
      expect(await collect(store.read('user_a', 'chat_1', id, 3))).toEqual([]);
      expect(await store.length(id)).toBe(3);
    });

    it('has one writer at a time; an ended stream may be written again, continuing its ids', async () => {
      const store = await make();
      const id = await fresh(store);
      const first = await store.openWriter('user_a', 'chat_1', id);
      expect(await code(store.openWriter('user_a', 'chat_1', id))).toBe('conflict');
      await first.append(chunk('a'));
      await first.end();
      const second = await store.openWriter('user_a', 'chat_1', id);
      await second.append(chunk('b'));
      await second.end();
      expect(await collect(store.read('user_a', 'chat_1', id))).toEqual(['1:a', '2:b']);
    });

    it('a reader whose signal aborts yields nothing more, even of events it has already read', async () => {
      const store = await make();
      const id = await fresh(store);
      const writer = await store.openWriter('user_a', 'chat_1', id);
      for (const t of ['a', 'b', 'c', 'd']) await writer.append(chunk(t));
      const stop = new AbortController();
      const seen: string[] = [];
      for await (const e of store.read('user_a', 'chat_1', id, 0, stop.signal)) {
        seen.push(`${e.id}:${text(e.data)}`);
        if (seen.length === 2) stop.abort();
      }
      expect(seen).toEqual(['1:a', '2:b']);
      await writer.end();
    });

    it('a follower holds at most one listener on its signal however many events it waits for', async () => {
      const store = await make();
      const id = await fresh(store);
      const writer = await store.openWriter('user_a', 'chat_1', id);
      const follow = new AbortController();
      const followed = collect(store.read('user_a', 'chat_1', id, 0, follow.signal));
      for (let i = 0; i < 30; i++) {
        await writer.append(chunk(String(i % 10)));
        await new Promise((resolve) => setTimeout(resolve, 2)); // the follower reads and waits again
      }
      expect(getEventListeners(follow.signal, 'abort').length).toBeLessThanOrEqual(1);
      await writer.end();
      expect(await followed).toHaveLength(30);
      expect(getEventListeners(follow.signal, 'abort')).toHaveLength(0);
    });

    it('finds a stream only for its user and chat', async () => {
      const store = await make();
      const id = await fresh(store);
      expect(await store.get('user_b', 'chat_1', id)).toBeUndefined();
      expect(await store.get('user_a', 'chat_2', id)).toBeUndefined();
      expect(await code(store.openWriter('user_b', 'chat_1', id))).toBe('not_found');
      expect(await code(collect(store.read('user_b', 'chat_1', id)))).toBe('not_found');
      expect(await code(collect(store.read('user_a', 'chat_1', 'stream_none')))).toBe('not_found');
    });

    it('drops a stream never written after unwrittenTtlMs, and an ended one ttlMs after its last read', async () => {
      let at = Date.parse('2026-01-01T00:00:00Z');
      const store = await make({ clock: { now: () => new Date(at) }, unwrittenTtlMs: 60_000, ttlMs: 120_000 });
      const unwritten = await fresh(store);
      at += 59_999;
      expect(await store.get('user_a', 'chat_1', unwritten)).toBeDefined();
      at += 1;
      expect(await store.get('user_a', 'chat_1', unwritten)).toBeUndefined();
      expect(await code(store.openWriter('user_a', 'chat_1', unwritten))).toBe('not_found');
      const ended = await fresh(store);
      const writer = await store.openWriter('user_a', 'chat_1', ended);
      at += 600_000; // being written, it stays
      await writer.append(chunk('a'));
      await writer.end();
      at += 100_000;
      expect(await collect(store.read('user_a', 'chat_1', ended))).toEqual(['1:a']); // a read keeps it
      at += 119_999;
      expect(await store.get('user_a', 'chat_1', ended)).toBeDefined();
      at += 1;
      expect(await store.get('user_a', 'chat_1', ended)).toBeUndefined();
    });

    it("ends a stream whose writer's lease ran out with one error event, once; followers end, the writer is fenced off, places free", async (context) => {
      let at = Date.parse('2026-01-01T00:00:00Z');
      const clock = { now: () => new Date(at) };
      // A heartbeat far off in real time: the writers below are silent, as if their instance died.
      const store = await make({ clock, writerLeaseMs: 10_000, heartbeatMs: 3_600_000, pollMs: 20, maxOpenPerUser: 2 });
      if (store.writerLeaseMs === undefined) return context.skip(); // writers live in this process only
      expect(store.writerLeaseMs).toBe(10_000);
      const id = await fresh(store);
      const writer = await store.openWriter('user_a', 'chat_1', id);
      const unread = await fresh(store);
      const other = await store.openWriter('user_a', 'chat_1', unread);
      await writer.append(chunk('a'));
      at += 9_000;
      await writer.append(chunk('b')); // appending extends the lease
      await other.append(chunk('x'));
      const following = collect(store.read('user_a', 'chat_1', id));
      at += 9_999;
      await new Promise((r) => setTimeout(r, 100)); // the follower polls: nothing lapsed yet
      expect(await store.length(id)).toBe(2);
      expect(await code(fresh(store))).toBe('rate_limited');
      at += 1;
      // Several readers find it lapsed at once: one ends it, one error event is written.
      const readers = await Promise.all([1, 2, 3].map(() => collect(store.read('user_a', 'chat_1', id, 2))));
      for (const r of readers) expect(r).toEqual(['3:error:unavailable']);
      expect(await following).toEqual(['1:a', '2:b', '3:error:unavailable']);
      expect(await code(writer.append(chunk('late')))).toBe('conflict'); // a late write of the lost writer lands nowhere
      await writer.end(); // and its end changes nothing
      expect(await collect(store.read('user_a', 'chat_1', id))).toEqual(['1:a', '2:b', '3:error:unavailable']);
      // Both places are free: the read one's, and the unread one's, ended by the creation that needed it.
      await fresh(store);
      await fresh(store);
      expect(await collect(store.read('user_a', 'chat_1', unread))).toEqual(['1:x', '2:error:unavailable']);
      const again = await store.openWriter('user_a', 'chat_1', id); // a lapsed stream can be written again
      await again.append(chunk('c'));
      await again.end();
      expect(await collect(store.read('user_a', 'chat_1', id, 3))).toEqual(['4:c']);
    });

    it("a writer's heartbeat keeps its stream while the writer is silent, over many leases", async (context) => {
      let at = Date.parse('2026-01-01T00:00:00Z');
      const store = await make({ clock: { now: () => new Date(at) }, writerLeaseMs: 1_000, heartbeatMs: 20, pollMs: 20 });
      if (store.writerLeaseMs === undefined) return context.skip();
      const id = await fresh(store);
      const writer = await store.openWriter('user_a', 'chat_1', id);
      const following = collect(store.read('user_a', 'chat_1', id));
      // Time runs at five times real speed: three leases pass while the follower keeps polling.
      for (let i = 0; i < 10; i++) {
        at += 300;
        await new Promise((r) => setTimeout(r, 60));
      }
      await writer.append(chunk('y'));
      await writer.end();
      expect(await following).toEqual(['1:y']);
    });

    it('bounds the open streams of one user; an ended one makes room', async () => {
      const store = await make({ maxOpenPerUser: 3 });
      const ids = [await fresh(store), await fresh(store), await fresh(store)];
      expect(await code(fresh(store))).toBe('rate_limited');
      await fresh(store, 'user_b'); // another user's limit is their own
      const writer = await store.openWriter('user_a', 'chat_1', ids[0] as string);
      await writer.end();
      await fresh(store);
      expect(await code(fresh(store))).toBe('rate_limited');
    });
  });
}

/** `storageStreamStore` over a storage adapter's `streams` (an in-process notifier), closing the adapter with it: for `describeStreamStore`. */
export function streamStoreOnStorage(storage: StorageAdapter, options: StreamStoreCaseOptions): StreamStore {
  if (!storage.streams) throw new TypeError('this storage adapter keeps no streams');
  const store = storageStreamStore({ streams: storage.streams, notifier: createMemoryNotifier(), ...options });
  return {
    ...store,
    async close() {
      await store.close?.();
      await storage.close();
    },
  };
}
