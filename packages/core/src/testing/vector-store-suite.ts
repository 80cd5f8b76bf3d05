import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { VectorStore } from '../knowledge/interfaces.js';

export interface VectorStoreSuiteOptions {
  create(): Promise<VectorStore> | VectorStore;
  /** Closes the store and opens the same data again, for stores that persist. */
  reopen?(store: VectorStore): Promise<VectorStore>;
  /**
   * For stores whose namespaces take one fixed vector length (at least 16): every test vector
   * is padded with zeros to it. By default the tests use 3 to 16 dimensions.
   */
  dimensions?: number;
}

/** The behaviour every `VectorStore` must have. */
export function describeVectorStore(name: string, options: VectorStoreSuiteOptions): void {
  /** A unit vector from components (zero-padded to `options.dimensions`). */
  const unit = (...xs: number[]) => {
    const norm = Math.hypot(...xs);
    const v = new Float32Array(Math.max(xs.length, options.dimensions ?? 0));
    for (const [i, x] of xs.entries()) v[i] = x / norm;
    return v;
  };

  describe(`VectorStore conformance: ${name}`, () => {
    let store: VectorStore;
    beforeEach(async () => {
      store = await options.create();
    });
    afterEach(async () => {
      await store.close();
    });

    const seed = () =>
      store.upsert('ns', [
        { id: 'a', documentId: 'd1', vector: unit(1, 0, 0) },
        { id: 'b', documentId: 'd1', vector: unit(1, 1, 0) },
        { id: 'c', documentId: 'd2', vector: unit(0, 1, 0) },
        { id: 'd', documentId: 'd3', vector: unit(-1, 0, 0) },
      ]);

    it('answers the nearest vectors by cosine similarity, best first, with exact scores', async () => {
      await seed();
      const best = await store.query('ns', { vector: unit(1, 0, 0), topK: 1 });
      expect(best).toEqual([{ id: 'a', documentId: 'd1', score: expect.closeTo(1, 5) }]);
      const hits = await store.query('ns', { vector: unit(1, 0, 0), topK: 3 });
      expect(hits.map((h) => [h.id, h.documentId])).toEqual([
        ['a', 'd1'],
        ['b', 'd1'],
        ['c', 'd2'],
      ]);
      expect(hits[0]?.score).toBeCloseTo(1, 5);
      expect(hits[1]?.score).toBeCloseTo(Math.SQRT1_2, 5);
      expect(hits[2]?.score).toBeCloseTo(0, 5);
      expect(hits[0]?.vector).toBeUndefined();
      // cos((1,1,0), (1,2,0)) = 3 / (√2·√5)
      const scored = await store.query('ns', { vector: unit(1, 2, 0), topK: 2 });
      expect(scored.map((h) => h.id)).toEqual(['b', 'c']);
      expect(scored[0]?.score).toBeCloseTo(3 / Math.sqrt(10), 5);
      expect(scored[1]?.score).toBeCloseTo(2 / Math.sqrt(5), 5);
      const all = await store.query('ns', { vector: unit(1, 0, 0), topK: 10 });
      expect(all.map((h) => h.id)).toEqual(['a', 'b', 'c', 'd']);
      expect(all[3]?.score).toBeCloseTo(-1, 5);
      expect(await store.count('ns')).toBe(4);
    });

    it('filters by document and returns vectors when asked', async () => {
      await seed();
      const hits = await store.query('ns', { vector: unit(1, 0, 0), topK: 5, documentIds: ['d2', 'd3'], includeVectors: true });
      expect(hits.map((h) => h.id)).toEqual(['c', 'd']);
      expect(Array.from(hits[1]?.vector ?? [])).toEqual(Array.from(unit(-1, 0, 0)));
      expect(await store.query('ns', { vector: unit(1, 0, 0), topK: 5, documentIds: ['nope'] })).toEqual([]);
    });

    it('replaces a vector upserted again under the same id', async () => {
      await seed();
      await store.upsert('ns', [{ id: 'a', documentId: 'd1', vector: unit(0, 0, 1) }]);
      expect(await store.count('ns')).toBe(4);
      const hits = await store.query('ns', { vector: unit(0, 0, 1), topK: 1 });
      expect(hits.map((h) => h.id)).toEqual(['a']);
      expect(hits[0]?.score).toBeCloseTo(1, 5);
    });

    it("deletes a document's vectors, keeps namespaces apart, and drops a namespace", async () => {
      await seed();
      await store.upsert('other', [{ id: 'a', documentId: 'd1', vector: unit(0, 0, 1) }]);
      expect(await store.deleteDocument('ns', 'd1')).toBe(2);
      expect(await store.deleteDocument('ns', 'd1')).toBe(0);
      expect((await store.query('ns', { vector: unit(1, 0, 0), topK: 10 })).map((h) => h.id)).toEqual(['c', 'd']);
      expect(await store.count('other')).toBe(1);
      expect((await store.query('other', { vector: unit(1, 0, 0), topK: 10 })).map((h) => h.id)).toEqual(['a']);
      expect((await store.query('other', { vector: unit(0, 0, 1), topK: 10 }))[0]?.score).toBeCloseTo(1, 5);
      await store.dropNamespace('ns');
      expect(await store.count('ns')).toBe(0);
      expect(await store.query('ns', { vector: unit(1, 0, 0), topK: 3 })).toEqual([]);
      expect(await store.count('other')).toBe(1);
    });

    it("prunes a document's vectors to the ids it keeps, in its namespace only (stores with pruneDocument)", async (context) => {
      const pruneDocument = store.pruneDocument?.bind(store);
      if (!pruneDocument) return context.skip();
      const prune = (namespace: string, documentId: string, keep: readonly string[]) => pruneDocument(namespace, documentId, keep);
      await seed();
      // A document's new vectors written beside its old ones, as a re-index does before pruning.
      await store.upsert('ns', [
        { id: 'a2', documentId: 'd1', vector: unit(1, 0, 1) },
        { id: 'b2', documentId: 'd1', vector: unit(0, 0, 1) },
      ]);
      await store.upsert('other', [{ id: 'a', documentId: 'd1', vector: unit(1, 0, 0) }]);
      expect(await prune('ns', 'd1', ['a2', 'b2', 'c'])).toBe(2);
      expect(await prune('ns', 'd1', ['a2', 'b2'])).toBe(0);
      const all = await store.query('ns', { vector: unit(1, 0, 1), topK: 10 });
      expect(all.map((h) => h.id).sort()).toEqual(['a2', 'b2', 'c', 'd']);
      expect(await store.count('other')).toBe(1);
      // Keeping nothing removes the document's vectors; unknown names remove nothing.
      expect(await prune('ns', 'd1', [])).toBe(2);
      expect(await store.count('ns')).toBe(2);
      expect(await prune('missing', 'd1', ['x'])).toBe(0);
    });

    it('knows nothing of unknown namespaces and accepts empty writes', async () => {
      expect(await store.query('missing', { vector: unit(1, 0, 0), topK: 3 })).toEqual([]);
      expect(await store.count('missing')).toBe(0);
      expect(await store.deleteDocument('missing', 'd')).toBe(0);
      await store.upsert('ns', []);
      expect(await store.count('ns')).toBe(0);
      await store.dropNamespace('missing');
    });

    it('handles many vectors (growth, deletes in the middle)', async () => {
      const dims = 16;
      const vec = (i: number) => unit(...Array.from({ length: dims }, (_, j) => Math.sin(i * 5.3 + j * 1.3) + (j === i % dims ? 3 : 0)));
      await store.upsert(
        'big',
        Array.from({ length: 3000 }, (_, i) => ({ id: `v${i}`, documentId: `d${i % 30}`, vector: vec(i) })),
      );
      expect(await store.deleteDocument('big', 'd7')).toBe(100);
      expect(await store.count('big')).toBe(2900);
      const hits = await store.query('big', { vector: vec(1234), topK: 5 });
      expect(hits[0]?.id).toBe('v1234');
      expect(hits[0]?.score).toBeCloseTo(1, 4);
      expect(hits.every((h) => h.documentId !== 'd7')).toBe(true);
    });

    if (options.reopen) {
      const reopen = options.reopen;
      it('keeps vectors, replacements and deletions after close and reopen', async () => {
        await seed();
        await store.upsert('ns', [{ id: 'a', documentId: 'd1', vector: unit(0, 0, 1) }]);
        await store.deleteDocument('ns', 'd3');
        await store.upsert('second', [{ id: 'x', documentId: 'dx', vector: unit(0, 1, 1) }]);
        await store.dropNamespace('second');
        await store.upsert('third', [{ id: 'y', documentId: 'dy', vector: unit(1, 1, 1) }]);
        store = await reopen(store);
        expect(await store.count('ns')).toBe(3);
        expect(await store.count('second')).toBe(0);
        expect(await store.count('third')).toBe(1);
        const hits = await store.query('ns', { vector: unit(0, 0, 1), topK: 3 });
        expect(hits[0]?.id).toBe('a');
        expect(hits[0]?.score).toBeCloseTo(1, 5);
        expect(hits.map((h) => h.id).sort()).toEqual(['a', 'b', 'c']);
      });
    }
  });
}
