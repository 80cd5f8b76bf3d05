import { describe, expect, it } from 'vitest';
import { createCoalescer } from '../src/coalescer.js';

/** A send that records its batches and settles each when told. */
function recorder(answer?: (batch: readonly number[]) => readonly unknown[] | undefined) {
  const batches: number[][] = [];
  const pending: (() => void)[] = [];
  const send = (batch: readonly number[]) =>
    new Promise<readonly unknown[] | undefined>((resolve) => {
      batches.push([...batch]);
      pending.push(() => resolve(answer?.(batch)));
    });
  const settleNext = async () => {
    while (pending.length === 0) await new Promise((r) => setImmediate(r));
    (pending.shift() as () => void)();
  };
  return { batches, send, settleNext };
}

describe('createCoalescer', () => {
  it('sends the first item at once, and those added while a batch is in flight together in the next, in order', async () => {
    const r = recorder();
    const coalescer = createCoalescer(r.send, (batch) => batch.length < 3);
    const settled: number[] = [];
    const adds = [1, 2, 3, 4, 5, 6].map((n) => coalescer.add(n).then(() => settled.push(n)));
    expect(r.batches).toEqual([[1]]);
    await r.settleNext();
    await r.settleNext();
    await r.settleNext();
    await Promise.all(adds);
    // The cap of 3 splits the five that waited.
    expect(r.batches).toEqual([[1], [2, 3, 4], [5, 6]]);
    expect(settled).toEqual([1, 2, 3, 4, 5, 6]);
    // Idle again: the next item goes at once, alone.
    const later = coalescer.add(7);
    expect(r.batches.at(-1)).toEqual([7]);
    await r.settleNext();
    await later;
  });

  it("fails a batch's items with its error, or each with its own when send answers one per item", async () => {
    const failing = createCoalescer(
      async () => {
        throw new Error('down');
      },
      () => true,
    );
    await expect(Promise.all([failing.add(1), failing.add(2)])).rejects.toThrow('down');
    const r = recorder((batch) => batch.map((n) => (n % 2 ? new Error(`odd ${n}`) : undefined)));
    const some = createCoalescer(r.send, () => true);
    const outcomes = Promise.allSettled([1, 2, 3, 4].map((n) => some.add(n)));
    await r.settleNext();
    await r.settleNext();
    expect((await outcomes).map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'ok'))).toEqual(['odd 1', 'ok', 'odd 3', 'ok']);
  });
});
