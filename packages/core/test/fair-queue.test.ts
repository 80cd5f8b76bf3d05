import { describe, expect, it } from 'vitest';
import { FairQueue, FairScheduler } from '../src/tools/fair-queue.js';

describe('FairQueue', () => {
  it('takes owners round-robin, the owner with the fewest running first', () => {
    const queue = new FairQueue<string>({ maxPerOwner: 10, maxTotal: 100 }, 'runs');
    for (let i = 0; i < 4; i++) queue.push('a', `a${i}`);
    queue.push('b', 'b0');
    queue.push('c', 'c0');
    expect([1, 2, 3, 4, 5, 6].map(() => queue.shift()?.item)).toEqual(['a0', 'b0', 'c0', 'a1', 'a2', 'a3']);
    queue.push('a', 'a4');
    queue.push('b', 'b1');
    const running: Record<string, number> = { a: 2, b: 0 };
    expect(queue.shift((owner) => running[owner] ?? 0)?.item).toBe('b1');
  });

  it('refuses with rate_limited naming the limit per owner and in all', () => {
    const queue = new FairQueue<number>({ maxPerOwner: 2, maxTotal: 3 }, 'tool runs');
    queue.push('a', 1);
    queue.push('a', 2);
    expect(() => queue.push('a', 3)).toThrow(expect.objectContaining({ code: 'rate_limited', message: expect.stringMatching(/Too many tool runs waiting: 2 of this user's .*per user/) }));
    queue.push('b', 4);
    expect(() => queue.push('c', 5)).toThrow(expect.objectContaining({ code: 'rate_limited', message: expect.stringMatching(/3 are already queued \(the limit of the server\)/) }));
    expect(queue.remove('a', 1)).toBe(true);
    queue.push('c', 5);
    expect(queue.size).toBe(3);
  });
});

describe('FairScheduler', () => {
  it("starts another owner's task before the rest of a flood", async () => {
    const scheduler = new FairScheduler(2, { maxPerOwner: 100, maxTotal: 100 }, 'runs');
    const order: string[] = [];
    const releases: (() => void)[] = [];
    const task = (name: string) => () =>
      new Promise<string>((resolve) => {
        order.push(name);
        releases.push(() => resolve(name));
      });
    const flood = Array.from({ length: 10 }, (_, i) => scheduler.run('a', task(`a${i}`)));
    const other = scheduler.run('b', task('b0'));
    expect(order).toEqual(['a0', 'a1']);
    releases.shift()?.();
    await new Promise((ok) => setTimeout(ok, 0));
    expect(order).toEqual(['a0', 'a1', 'b0']);
    while (releases.length > 0) {
      releases.shift()?.();
      await new Promise((ok) => setTimeout(ok, 0));
    }
    expect(await other).toBe('b0');
    expect(await Promise.all(flood)).toHaveLength(10);
  });

  it('drops a waiting task whose signal aborts and refuses everything once closed', async () => {
    const scheduler = new FairScheduler(1, { maxPerOwner: 10, maxTotal: 10 }, 'runs');
    let release!: () => void;
    const first = scheduler.run('a', () => new Promise<void>((ok) => (release = ok)));
    const controller = new AbortController();
    const second = scheduler.run('a', async () => 'ran', controller.signal);
    controller.abort();
    await expect(second).rejects.toMatchObject({ code: 'aborted' });
    const third = scheduler.run('a', async () => 'ran');
    scheduler.close(new Error('closed'));
    await expect(third).rejects.toThrow('closed');
    release();
    await first;
  });
});
