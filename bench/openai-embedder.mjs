// OpenAI-compatible embedder (`openaiEmbedder`) against bench/fake-embedder.mjs in a child
// process (its JSON work stays off this process's main thread): texts per second, the requests
// it sends (how it batches), and this process's main thread while it runs (the longest gap
// between ticks of a 5 ms timer, and its busy share: event-loop utilisation), for three loads:
// - `chunks`: SciFact abstracts (~300 tokens, 1.5 KB) in calls of 32, as the knowledge
//   pipeline calls it;
// - `one call`: the same abstracts in one call (about 1 MB: the counts decide the requests);
// - `long`: texts of 30 abstracts each (~45 KB, ~9,500 tokens: each one cut to 8,191).
// The first call of the process (loading the tokenizer) is reported apart, as `cold`.
// Knobs: BENCH_OPENAI_CHUNKS (640), BENCH_OPENAI_ROUNDS (5).
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openaiEmbedder } from '@agent-platform/adapters-embedding/openai';
import { loopGaps } from './embedder.mjs';
import { startFakeEmbedder } from './fake-embedder.mjs';
import { loadCorpus } from './ingest.mjs';
import { median } from './load.mjs';

const CHUNKS = Number(process.env.BENCH_OPENAI_CHUNKS ?? 640);
const ROUNDS = Number(process.env.BENCH_OPENAI_ROUNDS ?? 5);

// The child: the fake upstream, its URL sent to the parent; it ends when the parent disconnects.
if (process.argv[2] === 'upstream') {
  const embedder = await startFakeEmbedder();
  process.send({ url: embedder.urlFor('bench') });
  process.on('disconnect', () => embedder.close().then(() => process.exit(0)));
}

/** The main thread while `run` runs: its longest stall and its busy share. */
async function watched(run) {
  const gaps = loopGaps();
  const elu = performance.eventLoopUtilization();
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  return { ms, gapMs: gaps(), busy: performance.eventLoopUtilization(elu).utilization };
}

export async function openaiEmbedderThroughput() {
  const child = fork(fileURLToPath(import.meta.url), ['upstream'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const { url } = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`the fake upstream exited ${code}`)));
  });
  try {
    const chunks = (await loadCorpus(CHUNKS)).map((d) => d.text);
    const long = Array.from({ length: Math.floor(chunks.length / 30) }, (_, i) => chunks.slice(i * 30, i * 30 + 30).join('\n\n'));
    let requests = 0;
    const counting = (input, init) => {
      requests++;
      return fetch(input, init);
    };
    const model = openaiEmbedder({ model: 'fake-embed', apiKey: 'sk-bench', baseURL: url, fetch: counting });
    const loads = {
      chunks: {
        texts: chunks,
        run: async () => {
          for (let i = 0; i < chunks.length; i += 32) await model.embed(chunks.slice(i, i + 32));
        },
      },
      'one call': { texts: chunks, run: () => model.embed(chunks) },
      long: { texts: long, run: () => model.embed(long) },
    };
    // Cold: the first call that counts (the tokenizer loads), on texts no load uses.
    const cold = await watched(() => model.embed(['a cold start: '.repeat(700)]));
    const rows = [];
    for (let round = 0; round < ROUNDS; round++) {
      const row = {};
      for (const [name, load] of Object.entries(loads)) {
        requests = 0;
        const w = await watched(load.run);
        row[name] = { ...w, requests, rate: load.texts.length / (w.ms / 1000) };
      }
      rows.push(row);
      console.log(
        `  round ${round + 1}: ${Object.entries(row)
          .map(([n, r]) => `${n} ${r.rate.toFixed(0)} texts/s, ${r.requests} requests, main thread busy ${(r.busy * 100).toFixed(0)}%, stalled up to ${r.gapMs.toFixed(0)} ms`)
          .join('; ')}`,
      );
    }
    await model.close?.();
    const figures = Object.fromEntries(
      Object.entries(loads).map(([name, load]) => [
        name,
        {
          texts: load.texts.length,
          charsAvg: Math.round(load.texts.reduce((a, t) => a + t.length, 0) / load.texts.length),
          requests: median(rows.map((r) => r[name].requests)),
          textsPerSec: median(rows.map((r) => r[name].rate)),
          mainThreadBusy: median(rows.map((r) => r[name].busy)),
          maxStallMs: Math.max(...rows.map((r) => r[name].gapMs)),
        },
      ]),
    );
    return { name: `openai embedder against a loopback fake, ${chunks.length} SciFact abstracts`, coldMs: cold.ms, coldStallMs: cold.gapMs, ...figures };
  } finally {
    child.disconnect();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== 'upstream') console.log(JSON.stringify(await openaiEmbedderThroughput(), null, 2));
