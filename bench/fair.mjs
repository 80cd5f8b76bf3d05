// Fair ingestion: how long another user's small document takes to be indexed while one user
// floods the indexing queue, against its time on the idle server in the same run. The real
// built server (bench/servers.mjs `ours`, its default reader processes and queue) in a child
// process, embeddings from the fake loopback embedder (bench/fake-embedder.mjs). The flood: one
// user uploads BENCH_FAIR_FLOOD documents (default 40) of 4 MB of `. `, each keeping a reader
// process busy for the whole document time limit (the server's --document-timeout, here
// BENCH_FAIR_TIMEOUT_MS, default 2000) and then fail; first-come, the last of them would end
// after about FLOOD × timeout ÷ 2 processes. Meanwhile a second user posts BENCH_FAIR_SAMPLES
// (default 20) small documents one after the other, each timed from the request to its
// `completed` answer (POST /api/knowledge/documents waits for the indexing). The same posts on
// the idle server, half before the flood and half after it, are the baseline (so a machine
// whose load drifts during the run weighs on both).
// Target: the small document's median time during the flood ≤ 2 × its median time alone.
//   node bench/fair.mjs        (or `pnpm bench fair`); BENCH_STORAGE=sqlite|postgres|both (bench/modes.mjs).
// `fairIngestion()` is what the hostile bench (or any other) calls to include this figure.
import { pathToFileURL } from 'node:url';
import { startFakeEmbedder } from './fake-embedder.mjs';
import { median, percentile } from './load.mjs';
import { withStorageModes } from './modes.mjs';

const FLOOD = Number(process.env.BENCH_FAIR_FLOOD ?? 40);
const SAMPLES = Number(process.env.BENCH_FAIR_SAMPLES ?? 20);
const TIMEOUT_MS = Number(process.env.BENCH_FAIR_TIMEOUT_MS ?? 2000);
/** What each document of the flood is: 4 MB of `. `, which a reader takes longer than the time limit to chunk. */
const SLOW = Buffer.from('. '.repeat(2 * 1024 * 1024));
const TARGET = 2;

const stats = (ms) => ({ samples: ms.length, median: median(ms), p90: percentile(ms, 90), max: Math.max(...ms) });

/** The flood and the small documents against the real server of one storage mode. */
export async function fairIn(mode) {
  const embedder = await startFakeEmbedder();
  // Two users, made before the server starts.
  const platform = await mode.openPlatform();
  const flooder = await platform.createUserWithKey({ name: 'flooder' });
  const other = await platform.createUserWithKey({ name: 'other' });
  await platform.close();
  const server = await mode.start({ OPENAI_BASE_URL: embedder.urlFor('fair'), OPENAI_API_KEY: 'sk-bench', BENCH_DOCUMENT_TIMEOUT_MS: String(TIMEOUT_MS) });
  const call = async (key, method, path, body) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
  const project = async (key, name) => {
    const id = (await call(key, 'POST', '/api/projects/create', { name, model: 'm', provider: 'openai' })).body.project.id;
    await call(key, 'PUT', '/api/knowledge/settings', { projectId: id, settings: { embeddingModel: 'openai:fake-embed' } });
    return id;
  };
  const documents = async (key, projectId) => (await call(key, 'GET', `/api/knowledge/documents?projectId=${projectId}&limit=100`)).body.documents;
  try {
    const floodProject = await project(flooder.key, 'flood');
    const smallProject = await project(other.key, 'small');
    let n = 0;
    /** One small document of the second user, timed from the request to `completed`. */
    const small = async () => {
      const started = performance.now();
      let { body } = await call(other.key, 'POST', '/api/knowledge/documents', {
        projectId: smallProject,
        fileName: `small-${++n}.txt`,
        fileType: 'txt',
        sourceType: 'upload',
        content: `Refunds within ${n} days.`,
      });
      // Answered `processing` when indexing took longer than the server waits (5 s): followed to its end.
      while (body.status === 'processing' || body.document?.status === 'processing' || body.document?.status === 'pending') {
        await new Promise((r) => setTimeout(r, 20));
        body = (await call(other.key, 'GET', `/api/knowledge/documents/${body.documentId ?? body.document.id}`)).body;
      }
      const status = body.status ?? body.document?.status;
      if (status !== 'completed') throw new Error(`the small document ended ${status}: ${JSON.stringify(body).slice(0, 300)}`);
      return performance.now() - started;
    };
    // Warm, as a server in service is (a reader process started, the routes compiled).
    for (let i = 0; i < 3; i++) await small();
    const alone = [];
    for (let i = 0; i < SAMPLES / 2; i++) alone.push(await small());

    // The flood, uploaded in batches of 3 (12 MB, under the default 16 MiB upload limit) without waiting for indexing.
    const floodStarted = performance.now();
    for (let batch = 0; batch * 3 < FLOOD; batch++) {
      const form = new FormData();
      form.set('projectId', floodProject);
      for (let i = batch * 3; i < Math.min(FLOOD, batch * 3 + 3); i++) form.append('files', new Blob([SLOW]), `slow-${i}.md`);
      const res = await fetch(`${server.url}/api/knowledge/upload?wait=false`, { method: 'POST', headers: { authorization: `Bearer ${flooder.key}` }, body: form });
      if (res.status !== 200) throw new Error(`the flood's upload answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    }
    const uploadedSeconds = (performance.now() - floodStarted) / 1000;
    // Every reader process busy with the flood (and the spare one warmed meanwhile).
    await new Promise((r) => setTimeout(r, TIMEOUT_MS));
    const unfinished = async () => (await documents(flooder.key, floodProject)).filter((d) => d.status === 'pending' || d.status === 'processing').length;
    const before = await unfinished();
    const during = [];
    for (let i = 0; i < SAMPLES; i++) during.push(await small());
    const after = await unfinished();
    // The flood's own end: each of its documents fails at the time limit.
    while ((await unfinished()) > 0) await new Promise((r) => setTimeout(r, 200));
    const floodSeconds = (performance.now() - floodStarted) / 1000;
    const failed = (await documents(flooder.key, floodProject)).filter((d) => d.status === 'failed').length;
    for (let i = 0; i < SAMPLES / 2; i++) alone.push(await small());

    const row = {
      name: `another user's small document while one user floods the indexing queue (real server, ${mode.label})`,
      flood: {
        documents: FLOOD,
        bytesEach: SLOW.byteLength,
        timeoutMs: TIMEOUT_MS,
        uploadSeconds: uploadedSeconds,
        waitingBeforeSamples: before,
        waitingAfterSamples: after,
        endedSeconds: floodSeconds,
        failedAtTheLimit: failed,
      },
      alone: stats(alone),
      during: { ...stats(during), each: during.map((ms) => Math.round(ms)) },
      ratio: median(during) / median(alone),
      target: TARGET,
      lowerIsBetter: true,
    };
    console.log(
      `  ${mode.label}: small document alone median ${row.alone.median.toFixed(0)} ms (max ${row.alone.max.toFixed(0)}); during the flood median ${row.during.median.toFixed(0)} ms (p90 ${row.during.p90.toFixed(0)}, max ${row.during.max.toFixed(0)}): ${row.ratio.toFixed(2)}× (target ≤ ${TARGET}); flood documents unfinished ${before} → ${after}, all ${FLOOD} ended after ${floodSeconds.toFixed(1)} s`,
    );
    return row;
  } finally {
    await server.stop();
    await embedder.close();
  }
}

/** Every storage mode BENCH_STORAGE names (SQLite by default); with several, the worst ratio is the figure. */
export async function fairIngestion() {
  return withStorageModes('fair', async (modes) => {
    const results = [];
    for (const mode of modes) results.push(await fairIn(mode));
    if (results.length === 1) return results[0];
    return {
      name: "another user's small document while one user floods the indexing queue (real server)",
      modes: Object.fromEntries(modes.map((m, i) => [m.label, results[i]])),
      ratio: Math.max(...results.map((r) => r.ratio)),
      target: TARGET,
      lowerIsBetter: true,
    };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await fairIngestion(), null, 2));
