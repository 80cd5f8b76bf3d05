// The Chroma adapter against the chromadb client used directly, the same way, in one run on one
// real Chroma server (chromadb npm package, `chroma run`, cosine HNSW):
// - ingest: 10,000 × 512-d vectors upserted in batches of 1,000 with the same ids and metadata
//   ({ namespace, documentId, chunkId }), each side into a fresh collection; rounds alternate
//   which side goes first; the median of the rounds.
// - query: 500 top-10 queries with a namespace filter, one at a time, both sides on the same
//   collection, in alternating blocks of 50; the direct side asks for the same fields
//   (metadatas, distances) and skips the adapter's mapping to hits. For scale, the same queries
//   without the filter (direct): what Chroma's metadata filter costs, which the adapter always
//   uses (one collection for all namespaces).
// ratio = the adapter's throughput ÷ the direct client's (as in run.mjs, higher is better); the
// target, "the adapter adds ≤ 10%" to ingest and to query time, is a ratio ≥ 1 / 1.1 for both.
// addedPercent = how much longer the adapter took.
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChromaVectorStore } from '@agent-platform/adapters-vector/chroma';
import { ChromaClient } from 'chromadb';
import { embeddingsLike, startChroma } from './vectors.mjs';

const DIMS = 512;
const COUNT = Number(process.env.BENCH_CHROMA_VECTORS ?? 10_000);
const QUERIES = Number(process.env.BENCH_CHROMA_QUERIES ?? 500);
const ROUNDS = Number(process.env.BENCH_CHROMA_ROUNDS ?? 4);
const BATCH = 1000; // the adapter's upsert batch
const BLOCK = 50;
const NAMESPACE = 'proj_bench:builtin:use-lite-512';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** The direct side: the client as a user would call it, with the adapter's ids and metadata. */
async function directIngest(client, name, records) {
  const collection = await client.getOrCreateCollection({ name, embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } } });
  const prefix = `${createHash('sha256').update(NAMESPACE).digest('hex').slice(0, 16)}:`;
  for (let i = 0; i < records.length; i += BATCH) {
    const batch = records.slice(i, i + BATCH);
    await collection.upsert({
      ids: batch.map((r) => prefix + r.id),
      embeddings: batch.map((r) => Array.from(r.vector)),
      metadatas: batch.map((r) => ({ namespace: NAMESPACE, documentId: r.documentId, chunkId: r.id })),
    });
  }
}

async function adapterIngest(endpoint, name, records) {
  const store = createChromaVectorStore({ endpoint, indexName: name });
  await store.upsert(NAMESPACE, records);
  await store.close();
}

async function timed(fn) {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

export async function chromaAdapter() {
  const vectors = embeddingsLike(COUNT, DIMS, 1);
  const queries = embeddingsLike(QUERIES, DIMS, 2);
  const records = vectors.map((vector, i) => ({ id: `c${i}`, documentId: `d${i % 100}`, vector }));
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-chroma-adapter-'));
  const chroma = await startChroma(dir);
  const endpoint = `http://127.0.0.1:${chroma.port}`;
  const client = new ChromaClient({ host: '127.0.0.1', port: chroma.port });
  try {
    // Ingest rounds: each side into a fresh collection; alternate who goes first.
    const ingest = { adapter: [], direct: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        ['adapter', () => adapterIngest(endpoint, `bench-adapter-${round}`, records)],
        ['direct', () => directIngest(client, `bench-direct-${round}`, records)],
      ];
      if (round % 2 === 1) sides.reverse();
      for (const [side, run] of sides) ingest[side].push(await timed(run));
      console.log(`  ingest round ${round + 1}: adapter ${ingest.adapter[round].toFixed(2)} s, direct ${ingest.direct[round].toFixed(2)} s`);
      if (round < ROUNDS - 1) {
        await client.deleteCollection({ name: `bench-adapter-${round}` });
        await client.deleteCollection({ name: `bench-direct-${round}` });
      }
    }

    // Queries, both sides on the adapter's last collection.
    const name = `bench-adapter-${ROUNDS - 1}`;
    const store = createChromaVectorStore({ endpoint, indexName: name });
    const collection = await client.getCollection({ name });
    const sides = {
      adapter: async (q) => (await store.query(NAMESPACE, { vector: q, topK: 10 })).length,
      direct: async (q) => (await collection.query({ queryEmbeddings: [Array.from(q)], nResults: 10, where: { namespace: NAMESPACE }, include: ['metadatas', 'distances'] })).ids[0].length,
      directWithoutFilter: async (q) => (await collection.query({ queryEmbeddings: [Array.from(q)], nResults: 10, include: ['metadatas', 'distances'] })).ids[0].length,
    };
    for (const q of queries.slice(0, 20)) for (const run of Object.values(sides)) await run(q); // warm-up
    const ms = { adapter: [], direct: [], directWithoutFilter: [] };
    const hits = { adapter: 0, direct: 0, directWithoutFilter: 0 };
    for (let start = 0, block = 0; start < queries.length; start += BLOCK, block++) {
      const order = block % 2 === 0 ? ['adapter', 'direct', 'directWithoutFilter'] : ['direct', 'adapter', 'directWithoutFilter'];
      for (const side of order) {
        for (const q of queries.slice(start, start + BLOCK)) {
          const t = performance.now();
          hits[side] += await sides[side](q);
          ms[side].push(performance.now() - t);
        }
      }
    }
    await store.close();
    if (hits.adapter !== hits.direct) throw new Error(`the sides found different numbers of hits: ${hits.adapter} vs ${hits.direct}`);

    const ingestSeconds = { adapter: median(ingest.adapter), direct: median(ingest.direct) };
    const sum = (xs) => xs.reduce((a, b) => a + b, 0);
    const query = (side) => ({ qps: (1000 * ms[side].length) / sum(ms[side]), p50: percentile(ms[side], 50), p99: percentile(ms[side], 99) });
    const result = {
      name: `chroma adapter vs chromadb client: ingest ${COUNT} × ${DIMS}-d (batches of ${BATCH}), ${QUERIES} top-10 queries with a namespace filter`,
      ingest: {
        adapter: { seconds: ingestSeconds.adapter, vectorsPerSecond: COUNT / ingestSeconds.adapter },
        direct: { seconds: ingestSeconds.direct, vectorsPerSecond: COUNT / ingestSeconds.direct },
        rounds: ingest,
        // Per round (the two sides ran back to back), then the median: the server's load drifts
        // from round to round (background indexing of earlier collections).
        ratio: median(ingest.adapter.map((a, i) => ingest.direct[i] / a)),
        addedPercent: 100 * (1 / median(ingest.adapter.map((a, i) => ingest.direct[i] / a)) - 1),
      },
      query: {
        adapter: query('adapter'),
        direct: query('direct'),
        directWithoutFilter: query('directWithoutFilter'),
        ratio: sum(ms.direct) / sum(ms.adapter),
        addedPercent: 100 * (sum(ms.adapter) / sum(ms.direct) - 1),
      },
      target: 1 / 1.1,
    };
    result.ratio = Math.min(result.ingest.ratio, result.query.ratio);
    return result;
  } finally {
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
