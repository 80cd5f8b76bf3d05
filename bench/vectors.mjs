// Vector search: p50/p99 of a top-10 query at 10k and 100k vectors of 512 dimensions, side by
// side in one run: a bare Float32Array dot-product loop (the machine's limit), the built-in
// store exact, the built-in store as configured (HNSW from 20k vectors), and a real Chroma
// server (chromadb npm package, HNSW, cosine). Recall@10 of each against the exact answer.
// Data: synthetic unit vectors with a low intrinsic dimension (a random 32-d latent point,
// projected into 512-d by a fixed random matrix, plus a little isotropic noise), which is how
// sentence embeddings behave. Uniform random 512-d vectors would be the worst case for any
// approximate index and unlike real data (their top 10 is a near-tie).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinVectorStore, DEFAULT_APPROXIMATE_THRESHOLD } from '@agent-platform/adapters-vector/builtin';
import { ChromaClient } from 'chromadb';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIMS = 512;

export function embeddingsLike(count, dims, seed, latent = 32) {
  let s = 12345;
  const rand = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  const projection = Array.from({ length: latent }, () => Float32Array.from({ length: dims }, rand));
  s = seed;
  const gauss = () => rand() + rand() + rand() + rand();
  return Array.from({ length: count }, () => {
    const v = new Float32Array(dims);
    for (let l = 0; l < latent; l++) {
      const w = gauss();
      const p = projection[l];
      for (let i = 0; i < dims; i++) v[i] += w * p[i];
    }
    for (let i = 0; i < dims; i++) v[i] += rand() * 0.3;
    let n = 0;
    for (const x of v) n += x * x;
    n = Math.sqrt(n);
    return v.map((x) => x / n);
  });
}

/** The limit: one contiguous matrix, a dot product per row, top 10 kept in a small sorted array. */
function bareSearch(matrix, count, query, k) {
  const topScores = new Float32Array(k).fill(-Infinity);
  const topRows = new Int32Array(k).fill(-1);
  for (let row = 0, off = 0; row < count; row++, off += DIMS) {
    let sum = 0;
    for (let i = 0; i < DIMS; i++) sum += matrix[off + i] * query[i];
    if (sum > topScores[k - 1]) {
      let j = k - 1;
      while (j > 0 && topScores[j - 1] < sum) {
        topScores[j] = topScores[j - 1];
        topRows[j] = topRows[j - 1];
        j--;
      }
      topScores[j] = sum;
      topRows[j] = row;
    }
  }
  return topRows;
}

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function time(queries, fn) {
  for (const q of queries.slice(0, 10)) await fn(q); // warm-up
  const ms = [];
  const results = [];
  for (const q of queries) {
    const t = performance.now();
    results.push(await fn(q));
    ms.push(performance.now() - t);
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99), results };
}

/** A port that was free on 127.0.0.1 a moment ago. */
export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

/** A real Chroma server (the chromadb npm package's CLI) on 127.0.0.1, data in `dir`, once it answers. */
export async function startChroma(dir) {
  const port = await freePort();
  const child = spawn(join(root, 'node_modules/.bin/chroma'), ['run', '--path', dir, '--host', '127.0.0.1', '--port', String(port)], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v2/heartbeat`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    stop: () =>
      new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
      }),
  };
}

async function measureSize(count) {
  const vectors = embeddingsLike(count, DIMS, 1);
  const queries = embeddingsLike(200, DIMS, 2);
  const matrix = new Float32Array(count * DIMS);
  for (const [i, v] of vectors.entries()) matrix.set(v, i * DIMS);
  const ids = vectors.map((_, i) => `v${i}`);

  const bare = await time(queries, (q) => bareSearch(matrix, count, q, 10));
  const truth = bare.results.map((rows) => new Set(Array.from(rows, (r) => `v${r}`)));
  const recall = (results) => results.reduce((s, hits, i) => s + hits.filter((id) => truth[i].has(id)).length, 0) / (10 * results.length);

  const records = vectors.map((vector, i) => ({ id: ids[i], documentId: `d${i % 1000}`, vector }));
  const exactStore = await builtinVectorStore({ approximateThreshold: Number.POSITIVE_INFINITY });
  await exactStore.upsert('ns', records);
  const exact = await time(queries, async (q) => (await exactStore.query('ns', { vector: q, topK: 10 })).map((h) => h.id));
  await exactStore.close();

  const store = await builtinVectorStore();
  const rssBefore = process.memoryUsage().rss;
  let t = performance.now();
  await store.upsert('ns', records);
  while (count >= DEFAULT_APPROXIMATE_THRESHOLD && !store.isApproximate('ns')) await new Promise((r) => setTimeout(r, 50));
  const builtinLoadSeconds = (performance.now() - t) / 1000;
  const rssAfter = process.memoryUsage().rss;
  const builtin = await time(queries, async (q) => (await store.query('ns', { vector: q, topK: 10 })).map((h) => h.id));
  await store.close();

  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-chroma-'));
  const chroma = await startChroma(dir);
  let chromaResult;
  try {
    const client = new ChromaClient({ host: '127.0.0.1', port: chroma.port });
    const collection = await client.createCollection({ name: 'bench', embeddingFunction: null, configuration: { hnsw: { space: 'cosine' } } });
    t = performance.now();
    for (let i = 0; i < count; i += 4000) {
      await collection.add({ ids: ids.slice(i, i + 4000), embeddings: vectors.slice(i, i + 4000).map((v) => Array.from(v)) });
    }
    const chromaLoadSeconds = (performance.now() - t) / 1000;
    const timed = await time(queries, async (q) => (await collection.query({ queryEmbeddings: [Array.from(q)], nResults: 10 })).ids[0]);
    chromaResult = { ...timed, loadSeconds: chromaLoadSeconds };
  } finally {
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }

  return {
    vectors: count,
    bare: { p50: bare.p50, p99: bare.p99 },
    builtinExact: { p50: exact.p50, p99: exact.p99, recall: recall(exact.results), vsBare: exact.p50 / bare.p50 },
    builtin: { p50: builtin.p50, p99: builtin.p99, recall: recall(builtin.results), loadSeconds: builtinLoadSeconds, rssMB: (rssAfter - rssBefore) / 2 ** 20 },
    chroma: { p50: chromaResult.p50, p99: chromaResult.p99, recall: recall(chromaResult.results), loadSeconds: chromaResult.loadSeconds },
  };
}

export async function vectorSearch() {
  const sizes = (process.env.BENCH_VECTOR_SIZES ?? '10000,100000').split(',').map(Number);
  const rows = [];
  for (const size of sizes) {
    const row = await measureSize(size);
    console.log(JSON.stringify(row));
    rows.push(row);
  }
  return { name: 'vector search, top 10 of 512-d vectors (ms)', rows };
}
