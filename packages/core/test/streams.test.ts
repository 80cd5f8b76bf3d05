import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { StreamHub } from '../src/completions/streams/hub.js';
import { memoryStreamStore } from '../src/completions/streams/stream-store.js';
import { isPlatformError } from '../src/errors.js';
import { describeStreamStore } from '../src/testing/stream-store-suite.js';

/** A clock the test moves by hand. */
function manualClock(start = Date.parse('2026-01-01T00:00:00Z')) {
  let now = start;
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}

const MINUTE = 60_000;
let n = 0;
const create = (hub: StreamHub, userId = 'user_a', chatId = 'chat_1') => {
  const id = `stream_${++n}`;
  hub.create({ id, chatId, userId, createdAt: new Date() });
  return id;
};

async function collect(iterable: AsyncIterable<{ data: string }>): Promise<string[]> {
  const out: string[] = [];
  for await (const event of iterable) out.push(event.data);
  return out;
}

describe('StreamHub expiry', () => {
  it('drops a stream never written after unwrittenTtlMs, ending its waiting readers', async () => {
    const clock = manualClock();
    const hub = new StreamHub({ clock, unwrittenTtlMs: 10 * MINUTE });
    const id = create(hub);
    const reader = collect(hub.read('user_a', 'chat_1', id));
    clock.advance(10 * MINUTE - 1);
    expect(hub.get('user_a', 'chat_1', id)).toBeDefined();
    clock.advance(1);
    expect(hub.get('user_a', 'chat_1', id)).toBeUndefined();
    expect(hub.size).toBe(0);
    expect(() => hub.openWriter('user_a', 'chat_1', id)).toThrow('Stream not found');
    // The reader that waited for a writer ends instead of waiting forever.
    expect(await reader).toEqual([]);
  });

  it('keeps a stream while it is written, then drops it ttlMs after its last write or read', async () => {
    const clock = manualClock();
    const hub = new StreamHub({ clock, unwrittenTtlMs: MINUTE, ttlMs: 60 * MINUTE });
    const id = create(hub);
    const writer = hub.openWriter('user_a', 'chat_1', id);
    writer.write('a');
    clock.advance(5 * MINUTE); // longer than unwrittenTtlMs: being written, it stays
    expect(hub.get('user_a', 'chat_1', id)).toBeDefined();
    writer.write('b');
    writer.end();
    clock.advance(59 * MINUTE);
    // A read keeps it another ttlMs.
    expect(await collect(hub.read('user_a', 'chat_1', id))).toEqual(['a', 'b']);
    clock.advance(59 * MINUTE);
    expect(hub.get('user_a', 'chat_1', id)).toBeDefined();
    clock.advance(MINUTE);
    expect(hub.get('user_a', 'chat_1', id)).toBeUndefined();
    expect(hub.size).toBe(0);
  });

  it('drops expired streams of every user and chat, not only the ones asked for', () => {
    const clock = manualClock();
    const hub = new StreamHub({ clock, unwrittenTtlMs: MINUTE });
    for (let i = 0; i < 50; i++) create(hub, `user_${i % 5}`, `chat_${i}`);
    expect(hub.size).toBe(50);
    clock.advance(MINUTE);
    const fresh = create(hub);
    expect(hub.size).toBe(1);
    expect(hub.get('user_a', 'chat_1', fresh)).toBeDefined();
  });
});

describe('StreamHub limits', () => {
  it('bounds the open streams of one user (429 naming the limit); ended and expired ones make room', () => {
    const clock = manualClock();
    const hub = new StreamHub({ clock, maxOpenPerUser: 3, unwrittenTtlMs: MINUTE });
    const ids = [create(hub), create(hub), create(hub)];
    let error: unknown;
    try {
      create(hub);
    } catch (caught) {
      error = caught;
    }
    expect(isPlatformError(error) && error.code).toBe('rate_limited');
    expect((error as Error).message).toMatch(/^Too many open streams: at most 3 per user\./);
    // Another user is not affected.
    create(hub, 'user_b');
    // An ended stream is no longer open.
    const writer = hub.openWriter('user_a', 'chat_1', ids[0] as string);
    writer.end();
    create(hub);
    expect(() => create(hub)).toThrow(/at most 3 per user/);
    // Never-written streams that expired free their places.
    clock.advance(MINUTE);
    create(hub);
    create(hub);
  });

  it('creating a stream costs the same with 50,000 streams held as with none', () => {
    const timeCreates = (hub: StreamHub, users: number) => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        const started = performance.now();
        for (let i = 0; i < 2000; i++) create(hub, `extra_${round}_${i % users}`);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const empty = timeCreates(new StreamHub({ maxOpenPerUser: 10_000 }), 1000);
    const full = new StreamHub({ maxOpenPerUser: 10_000 });
    for (let i = 0; i < 50_000; i++) create(full, `user_${i % 100}`);
    const loaded = timeCreates(full, 1000);
    // A scan per create (the old sweep) made this about 500 times slower; allow noise, not growth.
    expect(loaded / Math.max(empty, 0.5)).toBeLessThan(8);
  });
});

describeStreamStore('memory', { create: async (o) => memoryStreamStore(o) });
