import { appendFile, mkdtemp, readdir, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeVectorStore, worstTick } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HnswIndex } from '../src/builtin/hnsw.js';
import { type BuiltinVectorStore, builtinVectorStore } from '../src/builtin/index.js';
import { BLOCK_ROWS, VectorMatrix } from '../src/builtin/matrix.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-vectors-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const folders = new WeakMap<object, string>();
async function openIn(folder: string) {
  const store = await builtinVectorStore({ dir: folder });
  folders.set(store, folder);
  return store;
}

describeVectorStore('builtin (memory)', { create: () => builtinVectorStore() });
describeVectorStore('builtin (folder)', {
  create: () => openIn(join(dir, `s${++n}`)),
  async reopen(store) {
    await store.close();
    return openIn(folders.get(store) as string);
  },
});

/** Clustered unit vectors: what sentence embeddings look like (random ones are HNSW's worst case). */
function clustered(count: number, dims: number, clusters: number, seed = 1): Float32Array[] {
  let s = seed;
  const rand = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  const centers = Array.from({ length: clusters }, () => Float32Array.from({ length: dims }, rand));
  return Array.from({ length: count }, (_, i) => {
    const c = centers[i % clusters] as Float32Array;
    const v = Float32Array.from(c, (x) => x + rand() * 0.6);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

async function recallAt10(exact: BuiltinVectorStore, approx: BuiltinVectorStore, queries: Float32Array[]): Promise<number> {
  let found = 0;
  for (const q of queries) {
    const truth = new Set((await exact.query('ns', { vector: q, topK: 10 })).map((h) => h.id));
    const got = await approx.query('ns', { vector: q, topK: 10 });
    found += got.filter((h) => truth.has(h.id)).length;
  }
  return found / (10 * queries.length);
}

describe('builtin vector store specifics', () => {
  it('past the threshold, HNSW finds ≥ 95% of the exact top 10, also after re-indexing', async () => {
    const vectors = clustered(20_000, 64, 50);
    const exact = await builtinVectorStore({ approximateThreshold: Number.POSITIVE_INFINITY });
    const approx = await builtinVectorStore({ approximateThreshold: 5_000 });
    const records = vectors.map((vector, i) => ({ id: `v${i}`, documentId: `d${i % 100}`, vector }));
    await exact.upsert('ns', records);
    await approx.upsert('ns', records);
    // The index builds in slices in the background; queries meanwhile are exact.
    expect(approx.isApproximate('ns')).toBe(false);
    while (!approx.isApproximate('ns')) await new Promise((r) => setTimeout(r, 20));
    const queries = clustered(100, 64, 50, 99);
    expect(await recallAt10(exact, approx, queries)).toBeGreaterThanOrEqual(0.95);

    // Re-index half of the documents with new vectors (delete, then upsert under new ids), and
    // replace 2,000 vectors in place: the index follows (deleted slots are reused).
    const fresh = clustered(10_000, 64, 50, 7);
    const replacements = clustered(2_000, 64, 50, 11);
    for (const store of [exact, approx]) {
      for (let d = 0; d < 50; d++) await store.deleteDocument('ns', `d${d}`);
      await store.upsert(
        'ns',
        fresh.map((vector, i) => ({ id: `w${i}`, documentId: `d${i % 50}`, vector })),
      );
      await store.upsert(
        'ns',
        replacements.map((vector, i) => ({ id: `w${i}`, documentId: `d${i % 50}`, vector })),
      );
    }
    expect(await approx.count('ns')).toBe(20_000);
    expect(approx.isApproximate('ns')).toBe(true);
    expect(await recallAt10(exact, approx, queries)).toBeGreaterThanOrEqual(0.95);
    await Promise.all([exact.close(), approx.close()]);
  }, 60_000);

  it('keeps the event loop free while thousands of vectors go into an indexed namespace and while the index builds', async () => {
    const store = await builtinVectorStore({ approximateThreshold: 2_000 });
    const records = (from: number, count: number, documentId: string) => clustered(count, 64, 20).map((vector, i) => ({ id: `v${from + i}`, documentId, vector }));
    const first = records(0, 3_000, 'a');
    const more = records(3_000, 15_000, 'b');
    const started = performance.now();
    const { worst } = await worstTick(async () => {
      // Past the threshold: the index builds in the background...
      await store.upsert('ns', first);
      // ...and 15,000 more vectors each become an HNSW insertion (about 2-4 s of CPU in all).
      await store.upsert('ns', more);
      while (!store.isApproximate('ns')) await new Promise((resolve) => setTimeout(resolve, 20));
    }, 5);
    const took = performance.now() - started;
    expect(await store.count('ns')).toBe(18_000);
    // Before, one upsert held the loop for its whole length (seconds, most of the run); now
    // slices of ~20 ms: the loop never waits a tenth of the run.
    expect(worst).toBeLessThan(took / 10);
    await store.close();
  });

  it('applies writes of one namespace in call order, also while a big upsert is still being applied', async () => {
    const store = await builtinVectorStore({ approximateThreshold: 1_000 });
    await store.upsert(
      'ns',
      clustered(2_000, 32, 10).map((vector, i) => ({ id: `a${i}`, documentId: 'a', vector })),
    );
    const upsert = store.upsert(
      'ns',
      clustered(5_000, 32, 10).map((vector, i) => ({ id: `b${i}`, documentId: 'b', vector })),
    );
    // Called before the upsert has been applied: the delete still sees every vector of b.
    const deleted = store.deleteDocument('ns', 'b');
    await upsert;
    expect(await deleted).toBe(5_000);
    expect(await store.count('ns')).toBe(2_000);
    await store.close();
  });

  it('reuses the HNSW slots of deleted and replaced vectors', async () => {
    const matrix = new VectorMatrix(64);
    for (const [i, v] of clustered(2_000, 64, 20).entries()) matrix.set(`v${i}`, 'd', v);
    const index = new HnswIndex(matrix);
    await index.build();
    expect(index.slots).toBe(2_000);
    for (let round = 0; round < 3; round++) {
      for (const [i, v] of clustered(2_000, 64, 20, round + 10).entries()) {
        const { row, replacedLabel } = matrix.set(`v${i}`, 'd', v);
        if (replacedLabel !== undefined) index.removed(replacedLabel);
        index.added(row);
      }
    }
    expect(index.slots).toBe(2_000);
    const label = matrix.remove('v0');
    if (label !== undefined) index.removed(label);
    expect(index.search(matrix.row(0), 5).length).toBe(5);
  });

  it('keeps writes made right after a drop of the same namespace', async () => {
    const folder = join(dir, 'drop-then-write');
    const store = await openIn(folder);
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: Float32Array.of(1, 0) }]);
    const dropped = store.dropNamespace('ns');
    const written = store.upsert('ns', [{ id: 'b', documentId: 'd', vector: Float32Array.of(0, 1) }]);
    await Promise.all([dropped, written]);
    await store.close();
    const again = await openIn(folder);
    expect((await again.query('ns', { vector: Float32Array.of(0, 1), topK: 5 })).map((h) => h.id)).toEqual(['b']);
    await again.close();
  });

  it('appends through one file handle per namespace, closed when the namespace is dropped or the store closed', async () => {
    const folder = join(dir, 'handles');
    // Descriptors of this process open on files of the folder (Linux /proc).
    const open = async () => {
      const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
      return targets.filter((t) => t.startsWith(`${folder}/`)).length;
    };
    const store = await openIn(folder);
    for (let i = 0; i < 20; i++) await store.upsert('a', [{ id: `v${i}`, documentId: `d${i % 3}`, vector: Float32Array.of(1, i) }]);
    await store.deleteDocument('a', 'd1');
    await store.upsert('b', [{ id: 'w', documentId: 'd', vector: Float32Array.of(0, 1) }]);
    expect(await open()).toBe(2); // one log each of a and b, kept open
    await store.dropNamespace('b');
    expect(await open()).toBe(1);
    await store.close();
    expect(await open()).toBe(0);
    const again = await openIn(folder);
    expect(await again.count('a')).toBe(13);
    expect(await again.count('b')).toBe(0);
    await again.close();
  });

  it('exact search ranks and scores by the dot product, whatever the dimension count', () => {
    // The scan sums four lanes at a time and the remainder one by one: 7 and 9 dimensions take
    // both paths, 8 only the first.
    for (const dims of [7, 8, 9]) {
      const matrix = new VectorMatrix(dims, 4);
      const rows = clustered(300, dims, 5, dims);
      for (const [i, v] of rows.entries()) matrix.set(`v${i}`, `d${i % 7}`, v);
      const query = clustered(1, dims, 1, 99)[0] as Float32Array;
      const dot = (v: Float32Array) => v.reduce((sum, x, i) => sum + x * (query[i] as number), 0);
      const expected = rows
        .map((v, row) => ({ row, score: dot(v) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10);
      const found = matrix.search(query, 10).sorted();
      expect(found.map((h) => h.row)).toEqual(expected.map((h) => h.row));
      for (const [i, h] of found.entries()) expect(h.score).toBeCloseTo((expected[i] as { score: number }).score, 4);
      // Only the rows of the documents asked for.
      const only = new Set([matrix.documentIndex('d3') as number]);
      expect(
        matrix
          .search(query, 10, only)
          .sorted()
          .every((h) => matrix.docOf[h.row] === only.values().next().value),
      ).toBe(true);
    }
  });

  it('keeps vectors in fixed blocks: growing copies no vector, deletes move rows across blocks', () => {
    // One array doubled as it filled copied every vector at once on the server's thread.
    const dims = 9;
    const matrix = new VectorMatrix(dims);
    const rows = clustered(3 * BLOCK_ROWS + 10, dims, 5, 3);
    for (const [i, v] of rows.slice(0, 10).entries()) matrix.set(`v${i}`, 'd', v);
    const first = matrix.blocks[0];
    for (const [i, v] of rows.entries()) matrix.set(`v${i}`, `d${i % 5}`, v);
    expect(matrix.blocks[0]).toBe(first);
    expect(matrix.blocks).toHaveLength(4);
    // Delete from the first block: the last rows (in the fourth block) move into the holes.
    for (let i = 0; i < 20; i++) matrix.remove(`v${i}`);
    expect(matrix.blocks).toHaveLength(3); // the fourth emptied
    for (const [i, v] of rows.entries()) {
      const row = matrix.rowOf(`v${i}`);
      if (i < 20) expect(row).toBeUndefined();
      else expect(Array.from(matrix.row(row as number))).toEqual(Array.from(v));
    }
    const query = rows[40] as Float32Array;
    const dot = (v: Float32Array) => v.reduce((sum, x, i) => sum + x * (query[i] as number), 0);
    const expected = rows
      .slice(20)
      .map((v, i) => ({ id: `v${i + 20}`, score: dot(v) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 10);
    expect(
      matrix
        .search(query, 10)
        .sorted()
        .map((h) => matrix.ids[h.row]),
    ).toEqual(expected.map((h) => h.id));
  });

  it('refuses a query vector of another length than the namespace has, and caps topK', async () => {
    const store = await builtinVectorStore();
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: Float32Array.of(1, 0) }]);
    await expect(store.query('ns', { vector: Float32Array.of(1, 0, 0), topK: 1 })).rejects.toThrow(/dimensions/);
    expect(await store.query('ns', { vector: Float32Array.of(1, 0), topK: 1e9 })).toHaveLength(1);
    await store.close();
  });

  it('cuts off a record torn by a crash and keeps the rest', async () => {
    const folder = join(dir, 'torn');
    const store = await openIn(folder);
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: Float32Array.of(1, 0) }]);
    await store.close();
    const log = (await readdir(folder)).find((f) => f.endsWith('.vectors')) as string;
    const size = (await stat(join(folder, log))).size;
    await appendFile(join(folder, log), Buffer.from([1, 5, 0, 0x61])); // a header with no body
    const again = await openIn(folder);
    expect(await again.count('ns')).toBe(1);
    expect((await stat(join(folder, log))).size).toBe(size);
    await again.upsert('ns', [{ id: 'b', documentId: 'd', vector: Float32Array.of(0, 1) }]);
    await again.close();
    expect(await (await openIn(folder)).count('ns')).toBe(2);
  });

  it('refuses vectors of another length than the namespace has', async () => {
    const store = await builtinVectorStore();
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: Float32Array.of(1, 0) }]);
    await expect(store.upsert('ns', [{ id: 'b', documentId: 'd', vector: Float32Array.of(1, 0, 0) }])).rejects.toThrow(/dimensions/);
    expect(await store.count('ns')).toBe(1);
  });
});
