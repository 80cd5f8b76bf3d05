// `pnpm bench hostile`: the real built server (bench/servers.mjs `ours`) in a child process, probed
// on GET /health every 20 ms from a worker thread while it is fed hostile work, one part at a
// time (BENCH_HOSTILE_PARTS=documents,upstreams,fair picks some; every part by default):
// - documents: the documents of packages/server/test/knowledge-bombs.test.ts (hostileDocuments of
//   @agent-platform/core/testing: DOCX bombs, deep nesting, 100,000 PDF pages, 4 MB
//   repetitions), each posted with an ordinary document beside it, until both are indexed (and
//   for at least a second). Embeddings come from the fake loopback embedder
//   (bench/fake-embedder.mjs): the documents that complete make thousands of chunks. The same
//   probes against the idle server, in the same run, are the baseline. Target: every probe
//   answered within 100 ms, during every document. BENCH_HOSTILE_ONLY=TEXT runs only the
//   documents whose name contains TEXT.
// - upstreams: several users at once (BENCH_HOSTILE_USERS, default 4) each drive every hostile
//   upstream of packages/server/test/hostile-upstreams.test.ts (startHostileUpstreams of
//   @agent-platform/core/testing: model servers answering 100 MB, endless streams and lines, MCP
//   servers over HTTP and SSE with 100 MB tool lists and results and endless lines, a local
//   runtime whose listing never ends, a vector store and an embeddings server answering 100 MB),
//   BENCH_HOSTILE_ROUNDS times (default 2), while the server's resident memory is sampled too.
//   Targets: /health p99 within 100 ms, and the server's RSS growth within the configured
//   limits times the users (see upstreamBound).
// - fair: bench/fair.mjs (`pnpm bench fair` alone): another user's small document while one user
//   floods the indexing queue, against its time alone. Target: at most 2×.
// A part is a function of a storage mode (bench/modes.mjs) answering its figures with `ratio`
// and `target` (lowerIsBetter); a new part is one more entry of PARTS.
//   node bench/hostile.mjs        (or `pnpm bench hostile`); BENCH_STORAGE=sqlite|postgres|both
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DEFAULT_UPSTREAM_LIMITS } from '@agent-platform/core';
import { hostileDocuments, startHostileUpstreams } from '@agent-platform/core/testing';
import { fairIn } from './fair.mjs';
import { startFakeEmbedder } from './fake-embedder.mjs';
import { percentile } from './load.mjs';
import { withStorageModes } from './modes.mjs';
import { startBenchUpstream } from './upstream.mjs';

const stats = (ms) => ({ probes: ms.length, p50: percentile(ms, 50), p95: percentile(ms, 95), max: Math.max(...ms) });

/**
 * The prober: a worker thread with an event loop of its own, so the probes time the server and
 * not this thread, which builds the documents and sends them (decoding 4 MB, JSON.stringify,
 * FormData: 100-350 ms here, that probes sent from this thread waited for and counted).
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const latencies = [];
const errors = [];
let done = false;
// With a pid: the process's resident memory, sampled every 10 ms (kB of /proc/PID/status's VmRSS).
let rssMaxKb = 0;
const rssKb = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/' + workerData.pid + '/status', 'utf8'))?.[1] ?? 0);
const sampler = workerData.pid ? setInterval(() => { rssMaxKb = Math.max(rssMaxKb, rssKb()); }, 10) : undefined;
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
  if (sampler) clearInterval(sampler);
  parentPort.postMessage({ latencies, errors, rssMaxKb });
})();
`;

/**
 * Probes `${url}/health` every ~20 ms (from a worker thread, see PROBER) while `during` runs, and
 * for at least a second; with `pid`, samples that process's RSS meanwhile (`rssMaxKb`).
 */
async function probing(url, during, pid) {
  const worker = new Worker(PROBER, { eval: true, workerData: { url, pid } });
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
    const { latencies, errors, rssMaxKb } = await probed;
    return { result, latencies, errors, rssMaxKb };
  } finally {
    await worker.terminate();
  }
}

/** The documents against the real server of one storage mode (bench/modes.mjs). */
async function documentsIn(mode) {
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
      const row = {
        name: doc.name,
        status: result.bomb.status,
        chunks: result.bomb.chunkCount,
        other: result.other.status,
        seconds: (performance.now() - t) / 1000,
        ...stats(latencies),
        probeErrors: errors.length,
        firstError: errors[0],
      };
      rows.push(row);
      console.log(
        `  ${doc.name}: ${row.status} (${row.chunks} chunks) in ${row.seconds.toFixed(1)} s; /health p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)}, max ${row.max.toFixed(0)} over ${row.probes} probes`,
      );
    }
    const worstP95 = Math.max(...rows.map((r) => r.p95));
    const worstMax = Math.max(...rows.map((r) => r.max));
    return {
      name: `/health every 20 ms while hostile documents are indexed (real server, ${mode.label})`,
      idle: stats(idle.latencies),
      documents: rows,
      worstP95,
      worstMax,
      ratio: worstMax,
      target: 100,
      lowerIsBetter: true,
    };
  } finally {
    await server.stop();
    await embedder.close();
  }
}

const MiB = 1024 * 1024;

/**
 * The hostile upstreams one user drives, each a call through the API and what its answer must
 * say (the limit's flag): `setup(user)` makes what the call needs (a credential, a project, an
 * MCP server) before the measurement; `run(user, made)` makes the call and answers its outcome.
 * Paths are those of `startHostileUpstreams`.
 */
const UPSTREAM_CASES = [
  { name: 'model: 100 MB answer, not streamed', model: '/model/json/0/v1', call: 'complete', expect: '--max-model-answer' },
  { name: 'model: endless stream', model: '/model/stream/v1', call: 'complete', expect: '--max-message' },
  { name: 'model: endless stream, streamed to the client', model: '/model/stream/v1', call: 'stream', expect: '--max-message' },
  { name: 'model: an event line that never ends', model: '/model/line/v1', call: 'complete', expect: '--max-model-answer' },
  { name: 'MCP (HTTP): 100 MB tool list', mcp: ['http', '/mcp/tools-json/0'], call: 'add-mcp', expect: '--max-mcp-message' },
  { name: 'MCP (SSE): tool list line that never ends', mcp: ['sse', '/mcp-sse/tools-line/0/sse'], call: 'add-mcp', expect: '--max-mcp-message' },
  { name: 'MCP (HTTP): 100 MB tool result', mcp: ['http', '/mcp/result-json/0'], call: 'mcp-tool', expect: '--max-mcp-message' },
  { name: 'MCP (SSE): 100 MB tool result', mcp: ['sse', '/mcp-sse/result-json/0/sse'], call: 'mcp-tool', expect: '--max-mcp-message' },
  { name: 'MCP (HTTP): 2 MB tool result', mcp: ['http', `/mcp/result-json/${2 * MiB}`], call: 'mcp-tool', expect: '--max-mcp-tool-result' },
  { name: 'local runtime: endless listing', call: 'runtime', expect: '--max-runtime-answer' },
  { name: 'vector store: 100 MB answer', call: 'vector', expect: '--max-vector-answer' },
  { name: 'embeddings: 100 MB answer', call: 'embed', expect: '--max-embeddings-answer' },
];

/**
 * What the server may hold at once of the answers of the cases above, by the configured limits
 * (the defaults): per user, the largest limit in play, counted twice (the bytes read and the
 * string or objects made of them), times the users, who each run one call at a time.
 */
export function upstreamBound(users, limits = DEFAULT_UPSTREAM_LIMITS) {
  const largest = Math.max(...Object.values(limits));
  return { perUserBytes: 2 * largest, bytes: 2 * largest * users };
}

/** Several users at once against the hostile upstreams (UPSTREAM_CASES), on the real server of one storage mode. */
async function upstreamsIn(mode) {
  const users = Number(process.env.BENCH_HOSTILE_USERS ?? 4);
  const rounds = Number(process.env.BENCH_HOSTILE_ROUNDS ?? 2);
  const hostile = await startHostileUpstreams();
  // The model of the MCP cases: it calls the hostile tool (`mcp__hostile__dump`), then answers.
  const upstream = await startBenchUpstream({ words: 5, toolSuffix: '__dump' });
  const platform = await mode.openPlatform();
  const keys = [];
  for (let i = 0; i < users; i++) keys.push((await platform.createUserWithKey({ name: `hostile-${i}` })).key);
  await platform.close();
  const server = await mode.start({
    // The operator's embeddings server (`openai:` embedding models) is a hostile one.
    OPENAI_BASE_URL: `${hostile.url}/embed/0/v1`,
    OPENAI_API_KEY: 'sk-bench',
    LOG_LEVEL: 'silent',
    // The users' upstreams are on loopback: the operator allows it.
    AGENT_PLATFORM_ALLOWED_HOSTS: '127.0.0.1',
  });
  const api = async (key, method, path, body) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
  const project = async (key, baseUrl) => {
    const credential = await api(key, 'POST', '/api/v1/credentials', { name: `c${Math.random()}`, provider: 'openai', apiKey: 'sk-user', baseUrl });
    const made = await api(key, 'POST', '/api/projects/create', { name: `p${Math.random()}`, model: 'm', provider: 'openai', credentialId: credential.body.credential.id });
    if (made.status !== 201) throw new Error(`project: ${made.status} ${JSON.stringify(made.body)}`);
    return made.body.project.id;
  };
  const complete = (key, model) => api(key, 'POST', '/api/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
  const text = (body) => JSON.stringify(body);

  /** Makes what a case needs for one user. */
  const setup = async (key, c) => {
    if (c.model) return { projectId: await project(key, `${hostile.url}${c.model}`) };
    const projectId = await project(key, upstream.url);
    if (c.call === 'mcp-tool') {
      const added = await api(key, 'POST', '/api/mcp/add-server', { projectId, name: 'hostile', transport: c.mcp[0], url: `${hostile.url}${c.mcp[1]}` });
      if (added.status !== 201) throw new Error(`MCP server: ${added.status} ${text(added.body)}`);
    }
    if (c.call === 'embed') await api(key, 'PUT', '/api/knowledge/settings', { projectId, settings: { embeddingModel: 'openai:text-embedding-3-small' } });
    return { projectId };
  };
  /** Runs a case once; answers whether the answer named the expected flag (for the MCP tool results: the model went on). */
  const run = async (key, c, { projectId }) => {
    switch (c.call) {
      case 'complete':
        return text((await complete(key, projectId)).body).includes(c.expect);
      case 'stream': {
        const res = await fetch(`${server.url}/api/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: projectId, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
        });
        return (await res.text()).includes(c.expect);
      }
      case 'add-mcp':
        return text((await api(key, 'POST', '/api/mcp/add-server', { projectId, name: `h${Math.random()}`.replace('.', ''), transport: c.mcp[0], url: `${hostile.url}${c.mcp[1]}` })).body).includes(
          c.expect,
        );
      case 'mcp-tool': {
        // The tool's error (naming the limit) reaches the model, which answers: a 200.
        const res = await complete(key, projectId);
        return res.status === 200;
      }
      case 'runtime':
        return text((await api(key, 'GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(`${hostile.url}/runtime`)}`)).body).includes(c.expect);
      case 'vector':
        return text(
          (
            await api(key, 'PUT', '/api/knowledge/settings', {
              projectId,
              settings: { vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: `${hostile.url}/vector/0`, indexName: 'hostile' } },
            })
          ).body,
        ).includes(c.expect);
      case 'embed': {
        const posted = await api(key, 'POST', '/api/knowledge/documents', { projectId, fileName: 'a.md', fileType: 'md', sourceType: 'upload', content: '# A\n\nSome text.' });
        if (text(posted.body).includes(c.expect)) return true;
        // Still indexing when the route stopped waiting: its outcome, polled.
        for (;;) {
          const { body } = await api(key, 'GET', `/api/knowledge/documents/${posted.body.documentId}`);
          if (body.document?.status === 'failed' || body.document?.status === 'completed') return text(body).includes(c.expect);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }
    throw new Error(`no such call ${c.call}`);
  };

  try {
    const made = [];
    for (const key of keys) made.push(await Promise.all(UPSTREAM_CASES.map((c) => setup(key, c))));
    // Warm, as a server in service is: one round of one user (JIT, a reader process, clients).
    for (const [i, c] of UPSTREAM_CASES.entries()) await run(keys[0], c, made[0][i]);
    const idle = await probing(server.url, () => new Promise((r) => setTimeout(r, 2000)), server.pid);
    const baselineKb = idle.rssMaxKb;
    const sentBefore = hostile.sent();
    const perCase = new Map(UPSTREAM_CASES.map((c) => [c.name, { ms: [], ok: 0, calls: 0 }]));
    const started = performance.now();
    const { latencies, errors, rssMaxKb } = await probing(
      server.url,
      () =>
        Promise.all(
          keys.map(async (key, u) => {
            // Each user starts at another case, so that different upstreams run at once.
            for (let round = 0; round < rounds; round++) {
              for (let k = 0; k < UPSTREAM_CASES.length; k++) {
                const i = (k + u * 3) % UPSTREAM_CASES.length;
                const c = UPSTREAM_CASES[i];
                const t = performance.now();
                const ok = await run(key, c, made[u][i]);
                const row = perCase.get(c.name);
                row.ms.push(performance.now() - t);
                row.calls++;
                if (ok) row.ok++;
              }
            }
          }),
        ),
      server.pid,
    );
    const seconds = (performance.now() - started) / 1000;
    const health = stats(latencies);
    const p99 = percentile(latencies, 99);
    const bound = upstreamBound(users);
    const growthBytes = (rssMaxKb - baselineKb) * 1024;
    const cases = [...perCase].map(([name, r]) => ({ name, calls: r.calls, named: r.ok, medianMs: percentile(r.ms, 50), maxMs: Math.max(...r.ms) }));
    for (const c of cases) console.log(`  ${c.name}: ${c.named}/${c.calls} answered naming the limit, median ${c.medianMs.toFixed(0)} ms, max ${c.maxMs.toFixed(0)} ms`);
    console.log(
      `  ${users} users x ${rounds} rounds in ${seconds.toFixed(1)} s; /health p50 ${health.p50.toFixed(1)} ms, p99 ${p99.toFixed(1)}, max ${health.max.toFixed(0)} over ${health.probes} probes (idle p99 ${percentile(idle.latencies, 99).toFixed(1)}); ` +
        `RSS ${(baselineKb / 1024).toFixed(0)} MiB idle, peak ${(rssMaxKb / 1024).toFixed(0)} MiB: +${(growthBytes / MiB).toFixed(0)} MiB (bound ${(bound.bytes / MiB).toFixed(0)} MiB); upstreams sent ${((hostile.sent() - sentBefore) / MiB).toFixed(0)} MiB`,
    );
    if (growthBytes > bound.bytes) console.log(`  MISSED TARGET: RSS grew ${(growthBytes / MiB).toFixed(0)} MiB > ${(bound.bytes / MiB).toFixed(0)} MiB`);
    return {
      name: `/health every 20 ms and the server's RSS while ${users} users drive hostile upstreams (real server, ${mode.label})`,
      users,
      rounds,
      seconds,
      idle: { ...stats(idle.latencies), p99: percentile(idle.latencies, 99) },
      health: { ...health, p99 },
      probeErrors: errors.length,
      firstError: errors[0],
      rss: { idleMiB: baselineKb / 1024, peakMiB: rssMaxKb / 1024, growthMiB: growthBytes / MiB, boundMiB: bound.bytes / MiB, withinBound: growthBytes <= bound.bytes },
      sentMiB: (hostile.sent() - sentBefore) / MiB,
      cases,
      allNamed: cases.every((c) => c.named === c.calls),
      // The figure against the target: /health p99 (ms), counted as missed past 100 ms or past the RSS bound.
      ratio: growthBytes <= bound.bytes ? p99 : Math.max(p99, 101),
      target: 100,
      lowerIsBetter: true,
    };
  } finally {
    await server.stop();
    await Promise.all([hostile.close(), upstream.close()]);
  }
}

/** The parts of the benchmark (see the top of this file): name → part of one storage mode. */
const PARTS = { documents: documentsIn, upstreams: upstreamsIn, fair: fairIn };

/** The parts BENCH_HOSTILE_PARTS names (comma-separated), every one by default. */
function selectedParts(value = process.env.BENCH_HOSTILE_PARTS) {
  if (!value) return Object.keys(PARTS);
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  for (const name of names) if (!PARTS[name]) throw new Error(`BENCH_HOSTILE_PARTS: no part "${name}" (parts: ${Object.keys(PARTS).join(', ')})`);
  return names;
}

/**
 * Every part BENCH_HOSTILE_PARTS names on every storage mode BENCH_STORAGE names (SQLite by
 * default). The entry's `ratio` is the worst part's figure over its target (1 or less: every
 * target met), each part's own figures under `parts` (by mode when there are several).
 */
export async function hostileHealth() {
  const names = selectedParts();
  return withStorageModes('hostile', async (modes) => {
    const parts = {};
    const ratios = [];
    for (const mode of modes) {
      for (const name of names) {
        console.log(modes.length > 1 ? `${mode.label}, ${name}:` : `${name}:`);
        const result = await PARTS[name](mode);
        if (modes.length > 1) {
          parts[name] ??= {};
          parts[name][mode.label] = result;
        } else parts[name] = result;
        ratios.push(result.ratio / result.target);
        if (result.ratio > result.target) console.log(`  ${name} (${mode.label}) MISSED TARGET: ${result.ratio.toFixed(1)} > ${result.target}`);
      }
    }
    return { name: 'hostile work against the real server: /health, and memory under hostile upstreams', parts, ratio: Math.max(...ratios), target: 1, lowerIsBetter: true };
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await hostileHealth(), null, 2));
