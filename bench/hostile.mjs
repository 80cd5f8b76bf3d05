// /health while hostile documents are processed: the real built server (bench/servers.mjs
// `ours`, SQLite, its default document limits and reader processes) in a child process, the
// documents of packages/server/test/knowledge-bombs.test.ts (hostileDocuments of
// @agent-platform/core/testing: DOCX bombs, deep nesting, 100,000 PDF pages, 4 MB repetitions),
// each posted with an ordinary document beside it, while a worker thread of this process
// probes GET /health every 20 ms until both are indexed (and for at least a second). Embeddings
// come from the fake loopback embedder (bench/fake-embedder.mjs): the documents that complete
// make thousands of chunks. The same probes against the idle server, in the same run, are the baseline.
// Target (issue 15): every /health probe answered within 100 ms, during every document.
//   node bench/hostile.mjs        (or `pnpm bench hostile`); BENCH_STORAGE=sqlite|postgres|both
//   (bench/modes.mjs); BENCH_HOSTILE_ONLY=TEXT runs only the documents whose name contains TEXT.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { hostileDocuments } from '@agent-platform/core/testing';
import { startFakeEmbedder } from './fake-embedder.mjs';
import { percentile } from './load.mjs';
import { withStorageModes } from './modes.mjs';

const stats = (ms) => ({ probes: ms.length, p50: percentile(ms, 50), p95: percentile(ms, 95), max: Math.max(...ms) });

/**
 * The prober: a worker thread with an event loop of its own, so the probes time the server and
 * not this thread, which builds the documents and sends them (decoding 4 MB, JSON.stringify,
 * FormData: 100-350 ms here, that probes sent from this thread waited for and counted).
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const latencies = [];
const errors = [];
let done = false;
parentPort.once('message', () => { done = true; });
(async () => {
  // Untimed: a worker's first fetch loads its HTTP client (100+ ms), which is not the server's time.
  await (await fetch(workerData.url + '/health')).text();
  parentPort.postMessage('ready');
  const until = performance.now() + 1000;
  while (!done || performance.now() < until) {
    const started = performance.now();
    try {
      await (await fetch(workerData.url + '/health')).text();
    } catch (error) {
      // A dropped connection is counted and the probe goes on: is the server still there?
      errors.push(error.message + ': ' + (error.cause?.message ?? ''));
    }
    latencies.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 20));
  }
  parentPort.postMessage({ latencies, errors });
})();
`;

/** Probes `${url}/health` every ~20 ms (from a worker thread, see PROBER) while `during` runs, and for at least a second. */
async function probing(url, during) {
  const worker = new Worker(PROBER, { eval: true, workerData: { url } });
  const next = () =>
    new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
  await next(); // ready
  const probed = next();
  probed.catch(() => {}); // awaited below; a failure of `during` first must not leave it unhandled
  try {
    const result = await during();
    worker.postMessage('done');
    const { latencies, errors } = await probed;
    return { result, latencies, errors };
  } finally {
    await worker.terminate();
  }
}

/** The documents against the real server of one storage mode (bench/modes.mjs). */
async function hostileIn(mode) {
  const embedder = await startFakeEmbedder();
  const server = await mode.start({ OPENAI_BASE_URL: embedder.urlFor('hostile'), OPENAI_API_KEY: 'sk-bench' });
  const headers = { authorization: `Bearer ${server.firstKey}` };
  const call = async (method, path, body) => {
    const res = await fetch(server.url + path, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return res.json();
  };
  try {
    const projectId = (await call('POST', '/api/projects/create', { name: 'hostile', model: 'm', provider: 'openai' })).project.id;
    await call('PUT', '/api/knowledge/settings', { projectId, settings: { embeddingModel: 'openai:fake-embed' } });
    const post = async (fileName, content) => (await call('POST', '/api/knowledge/documents', { projectId, fileName, fileType: fileName.split('.').pop(), sourceType: 'upload', content })).documentId;
    const upload = async (fileName, bytes) => {
      const form = new FormData();
      form.append('projectId', projectId);
      form.append('files', new Blob([Buffer.from(bytes)]), fileName);
      // Once more on a dropped connection (seen here: EPIPE writing the body on a kept-alive
      // socket while the probes ran; the server itself stayed up), so the run measures /health.
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await fetch(`${server.url}/api/knowledge/upload`, { method: 'POST', headers: { ...headers, connection: 'close' }, body: form });
          return (await res.json()).files[0].documentId;
        } catch (error) {
          if (attempt === 3) throw error;
          console.log(`  upload of ${fileName}: ${error.cause?.message ?? error.message}; again`);
        }
      }
    };
    const indexed = async (id) => {
      for (;;) {
        const { document } = await call('GET', `/api/knowledge/documents/${id}`);
        if (document.status === 'completed' || document.status === 'failed') return document;
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // Warm, as a server in service is (a reader process started).
    await indexed(await post('warm.txt', 'Warming up.'));
    const idle = await probing(server.url, () => new Promise((r) => setTimeout(r, 2000)));
    const rows = [];
    for (const doc of hostileDocuments.filter((d) => d.name.includes(process.env.BENCH_HOSTILE_ONLY ?? ''))) {
      const bytes = doc.make();
      const t = performance.now();
      const { result, latencies, errors } = await probing(server.url, async () => {
        const id = doc.text ? await post(doc.fileName, new TextDecoder().decode(bytes)) : await upload(doc.fileName, bytes);
        const other = await post('other.md', '# Refunds\n\nCustomers can ask for a refund within 30 days.');
        return { bomb: await indexed(id), other: await indexed(other) };
      });
      const row = { name: doc.name, status: result.bomb.status, chunks: result.bomb.chunkCount, other: result.other.status, seconds: (performance.now() - t) / 1000, ...stats(latencies), probeErrors: errors.length, firstError: errors[0] };
      rows.push(row);
      console.log(`  ${doc.name}: ${row.status} (${row.chunks} chunks) in ${row.seconds.toFixed(1)} s; /health p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)}, max ${row.max.toFixed(0)} over ${row.probes} probes`);
    }
    const worstP95 = Math.max(...rows.map((r) => r.p95));
    const worstMax = Math.max(...rows.map((r) => r.max));
    return { name: `/health every 20 ms while hostile documents are indexed (real server, ${mode.label})`, idle: stats(idle.latencies), documents: rows, worstP95, worstMax, ratio: worstMax, target: 100, lowerIsBetter: true };
  } finally {
    await server.stop();
    await embedder.close();
  }
}

/** Every storage mode BENCH_STORAGE names (SQLite by default); with several, the worst probe of any is the figure. */
export async function hostileHealth() {
  return withStorageModes('hostile', async (modes) => {
    const results = [];
    for (const mode of modes) {
      if (modes.length > 1) console.log(`${mode.label}:`);
      results.push(await hostileIn(mode));
    }
    if (results.length === 1) return results[0];
    const worstMax = Math.max(...results.map((r) => r.worstMax));
    return { name: '/health every 20 ms while hostile documents are indexed (real server)', modes: Object.fromEntries(modes.map((m, i) => [m.label, results[i]])), worstMax, ratio: worstMax, target: 100, lowerIsBetter: true };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await hostileHealth(), null, 2));
