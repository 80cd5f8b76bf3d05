// `pnpm bench mastra` (opt-in by name): our server and Mastra's side by side in one run, both real
// servers in child processes on the same loopback upstream (bench/upstream.mjs: streamed chat
// completions and fake bag-of-words embeddings, answered at once), sides interleaved:
//   list        ours GET /api/v1/projects?limit=20 (BENCH_MASTRA_ROWS projects) vs Mastra's
//               GET /api/memory/threads?perPage=20 (as many memory threads of the caller), each
//               as a ratio to a bare node:http answering its bytes, and each stack's floor (h3 on
//               srvx, Hono on @hono/node-server) answering the same bytes; autocannon as `projects`;
//   completion  added time to first token vs the upstream called directly, p50: ours plain model,
//               ours agent (a project), Mastra's agent on its documented streaming route
//               POST /api/agents/:agentId/stream (an agent without memory), and both with memory
//               (a new chat / thread per request: created, the turn stored);
//   ingest      SciFact abstracts per second with the same fake embeddings: ours over
//               POST /api/knowledge/documents until completed, Mastra's documented RAG pipeline
//               (MDocument chunk, embedMany, LibSQLVector upsert) behind a route of the peer
//               script (Mastra has no HTTP route that ingests text);
//   search      p50 of one query (embed + vector query, top 5): ours semantic search, Mastra's
//               embed + LibSQLVector query behind a route of the peer script.
// Mastra is installed on demand into bench/peers/mastra (its own package.json, pinned; not part
// of the workspace). Knobs: BENCH_MASTRA_ROWS (2000), BENCH_CONNECTIONS (10), BENCH_DURATION,
// BENCH_ROUNDS, BENCH_COMPLETIONS (200), BENCH_MASTRA_DOCS (200), BENCH_MASTRA_INGEST_ROUNDS (3),
// BENCH_INGEST_INFLIGHT (32), BENCH_MASTRA_CHUNKING (recursive | token).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPlatform } from '@agent-platform/server';
import { startChild, startServerScript } from './child.mjs';
import { interleaved, round, streamOnce } from './completions.mjs';
import { FAKE_DIMENSIONS } from './fake-embedder.mjs';
import { loadCorpus } from './ingest.mjs';
import { load, median, pool } from './load.mjs';
import { ensurePeer, peerScript, peerVersions } from './peers/install.mjs';
import { startBenchUpstream } from './upstream.mjs';

const ROWS = Number(process.env.BENCH_MASTRA_ROWS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const COMPLETIONS = Number(process.env.BENCH_COMPLETIONS ?? 200);
const DOCS = Number(process.env.BENCH_MASTRA_DOCS ?? 200);
const INGEST_ROUNDS = Number(process.env.BENCH_MASTRA_INGEST_ROUNDS ?? 3);
const INFLIGHT = Number(process.env.BENCH_INGEST_INFLIGHT ?? 32);
const CHUNKING = process.env.BENCH_MASTRA_CHUNKING ?? 'recursive';
const TOKEN = 'sk-bench-mastra';

/**
 * Mastra's chunking closest to ours (512 tokens, 64 overlap): `recursive` (its default strategy,
 * in characters: 2,048 and 256, about 4 characters a token) or `token` (512 and 64 tokens of
 * cl100k, as ours counts; Mastra builds the tokenizer on every chunk() call).
 */
const CHUNKINGS = { recursive: { strategy: 'recursive', maxSize: 2048, overlap: 256 }, token: { strategy: 'token', maxSize: 512, overlap: 64 } };

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

export async function mastraSideBySide() {
  if (!CHUNKINGS[CHUNKING]) throw new Error(`BENCH_MASTRA_CHUNKING must be one of ${Object.keys(CHUNKINGS).join(', ')}`);
  const peer = ensurePeer('mastra');
  const loadBefore = loadavg();
  const upstream = await startBenchUpstream({ words: 20 });
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-mastra-'));
  const children = [];
  const start = async (promise) => {
    const child = await promise;
    children.push(child);
    return child;
  };
  try {
    // Ours: a user with ROWS projects (the list), one agent project, one project per ingest round.
    const platform = await openPlatform(join(dir, 'ours'));
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const create = async (name) => (await platform.createProject({ userId }, { name, model: 'gpt-bench', provider: 'openai', description: `Bench project ${name}` })).project.id;
    const agentId = await create('agent');
    const ingestIds = [];
    for (let i = 0; i <= INGEST_ROUNDS; i++) ingestIds.push(await create(`ingest ${i}`));
    for (let i = ingestIds.length + 1; i < ROWS; i++) await create(`Project ${i}`);
    await platform.close();
    const env = { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' };
    const ours = await start(startChild('ours', join(dir, 'ours'), env));
    const oursHeaders = { authorization: `Bearer ${key}` };
    const oursCall = async (method, path, body) => {
      const res = await fetch(ours.url + path, { method, headers: { ...oursHeaders, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
      if (!res.ok) throw new Error(`ours ${method} ${path} answered ${res.status}: ${await res.text()}`);
      return res.json();
    };
    for (const projectId of ingestIds) await oursCall('PUT', '/api/knowledge/settings', { projectId, settings: { embeddingModel: 'openai:fake-embed' } });

    // Mastra: the same number of memory threads of the caller; the peer starts them itself.
    const config = { dir, upstream: upstream.url, token: TOKEN, threads: ROWS, chunking: CHUNKINGS[CHUNKING], dimensions: FAKE_DIMENSIONS };
    const mastraStarted = performance.now();
    const mastra = await start(startServerScript(peerScript('mastra'), 'mastra', JSON.stringify(config), { MASTRA_TELEMETRY_DISABLED: '1' }));
    console.log(`  Mastra started with ${ROWS} threads in ${((performance.now() - mastraStarted) / 1000).toFixed(1)} s`);
    const mastraHeaders = { authorization: `Bearer ${TOKEN}` };
    const mastraCall = async (path, body) => {
      const res = await fetch(mastra.url + path, { method: 'POST', headers: { ...mastraHeaders, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`Mastra POST ${path} answered ${res.status}: ${await res.text()}`);
      return res.json();
    };

    const list = await listRows(dir, start, { ours, oursHeaders, mastra, mastraHeaders });
    const completions = await completionRows({ ours, oursHeaders, agentId, mastra, mastraHeaders, upstream });
    const ingest = await ingestRows({ oursCall, ingestIds, mastraCall });
    const search = await searchRows({ oursCall, projectId: ingestIds.at(-1), mastraCall, index: `bench_${INGEST_ROUNDS}` });
    return {
      name: `side by side with Mastra (${ROWS} rows listed, ${COMPLETIONS} completions per side, ${DOCS} SciFact abstracts per ingest round)`,
      versions: peerVersions('mastra'),
      installedNow: peer.installed,
      loadavg: { before: loadBefore, after: loadavg() },
      list,
      completions,
      ingest,
      search,
    };
  } finally {
    for (const child of children) await child.stop();
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** List routes under autocannon: each side, its bare node:http twin and its stack's floor, per round in rotating order. */
async function listRows(dir, start, { ours, oursHeaders, mastra, mastraHeaders }) {
  const paths = { ours: '/api/v1/projects?limit=20', mastra: '/api/memory/threads?agentId=bench&perPage=20' };
  const servers = { ours: { ...ours, headers: oursHeaders }, mastra: { ...mastra, headers: mastraHeaders } };
  for (const side of ['ours', 'mastra']) {
    const res = await fetch(servers[side].url + paths[side], { headers: servers[side].headers });
    const body = Buffer.from(await res.arrayBuffer());
    if (!res.ok) throw new Error(`${side} list answered ${res.status}: ${body}`);
    const file = join(dir, `${side}-body.json`);
    await writeFile(file, body);
    servers[side].bytes = body.length;
    servers[`${side}Bare`] = { ...(await start(startChild('bare', file))), headers: {} };
    servers[`${side}Floor`] = { ...(await start(side === 'ours' ? startChild('floor', file) : startServerScript(peerScript('mastra'), 'floor', file))), headers: {} };
  }
  const names = Object.keys(servers);
  const rows = [];
  await load(ours.url + paths.ours, oursHeaders); // warm-up (JIT, page caches)
  await load(mastra.url + paths.mastra, mastraHeaders);
  for (let r = 0; r < ROUNDS; r++) {
    const row = {};
    for (const name of [...names.slice(r % names.length), ...names.slice(0, r % names.length)]) {
      const s = servers[name];
      row[name] = await load(s.url + paths[name.startsWith('ours') ? 'ours' : 'mastra'], s.headers, s.pid);
    }
    rows.push(row);
    console.log(`  list round ${r + 1}: ${names.map((n) => `${n} ${row[n].rps.toFixed(0)} req/s (${row[n].cpuUs.toFixed(0)} µs CPU)`).join(', ')}`);
  }
  const side = (name) => ({
    route: paths[name],
    bodyBytes: servers[name].bytes,
    rps: median(rows.map((r) => r[name].rps)),
    p99: median(rows.map((r) => r[name].p99)),
    cpuUsPerRequest: median(rows.map((r) => r[name].cpuUs)),
    bareRps: median(rows.map((r) => r[`${name}Bare`].rps)),
    ratioToBare: median(rows.map((r) => r[name].rps / r[`${name}Bare`].rps)),
    // CPU per request of bare ÷ the side's: the ratio each would reach on a core of its own.
    cpuRatioToBare: median(rows.map((r) => r[`${name}Bare`].cpuUs / r[name].cpuUs)),
    floorRatioToBare: median(rows.map((r) => r[`${name}Floor`].rps / r[`${name}Bare`].rps)),
    floorCpuRatioToBare: median(rows.map((r) => r[`${name}Bare`].cpuUs / r[`${name}Floor`].cpuUs)),
  });
  return { rows: ROWS, ours: side('ours'), mastra: side('mastra') };
}

/** Streaming completions, every side once per iteration in rotating order. */
async function completionRows({ ours, oursHeaders, agentId, mastra, mastraHeaders, upstream }) {
  const messages = [{ role: 'user', content: 'What does topic 12 say?' }];
  const completions = `${ours.url}/api/v1/chat/completions`;
  const agentStream = (id) => `${mastra.url}/api/agents/${id}/stream`;
  const mastraMarker = '"text":"word';
  const sides = await interleaved(COMPLETIONS, {
    direct: () => streamOnce(`${upstream.url}/chat/completions`, {}, { model: 'gpt-bench', messages, stream: true }),
    oursPlain: () => streamOnce(completions, oursHeaders, { model: 'gpt-bench', messages, stream: true }),
    oursAgent: () => streamOnce(completions, oursHeaders, { model: agentId, messages, stream: true }),
    mastraAgent: () => streamOnce(agentStream('bench-stateless'), mastraHeaders, { messages }, mastraMarker),
    // A new conversation per request on both sides: the chat / thread is created and the turn stored.
    oursAgentMemory: () => streamOnce(`${ours.url}/api/v1/ai/chat/completions`, oursHeaders, { model: agentId, chatId: `bench-${randomUUID()}`, messages, stream: true }),
    mastraAgentMemory: () => streamOnce(agentStream('bench'), mastraHeaders, { messages, memory: { thread: randomUUID(), resource: 'bench-user' } }, mastraMarker),
  });
  const added = (name) => round(sides[name].ttft.p50 - sides.direct.ttft.p50);
  return {
    sides,
    addedTtftP50: Object.fromEntries(
      Object.keys(sides)
        .filter((n) => n !== 'direct')
        .map((n) => [n, added(n)]),
    ),
    // Mastra's added time ÷ ours, agent to agent (above 1: Mastra adds more).
    agentRatio: round(added('mastraAgent') / added('oursAgent')),
    memoryRatio: round(added('mastraAgentMemory') / added('oursAgentMemory')),
  };
}

/** DOCS abstracts per round into a fresh project / index on each side, INFLIGHT requests in flight, sides alternating first. */
async function ingestRows({ oursCall, ingestIds, mastraCall }) {
  const corpus = await loadCorpus(DOCS);
  const doc = (d) => ({ fileName: `${d.id}.txt`, fileType: 'txt', sourceType: 'upload', content: d.text });
  const completed = async (projectId) => (await oursCall('GET', `/api/knowledge/documents?projectId=${projectId}&status=completed&limit=1`)).total;
  const sides = {
    ours: async (r, docs) => {
      const projectId = ingestIds[r];
      await pool(docs.length, INFLIGHT, (i) => oursCall('POST', '/api/knowledge/documents', { projectId, ...doc(docs[i]) }));
      while ((await completed(projectId)) < docs.length) await new Promise((res) => setTimeout(res, 50));
      let chunks = 0;
      for (let offset = 0; offset < docs.length; offset += 100) {
        chunks += (await oursCall('GET', `/api/knowledge/documents?projectId=${projectId}&limit=100&offset=${offset}`)).documents.reduce((s, d) => s + d.chunkCount, 0);
      }
      return chunks;
    },
    mastra: async (r, docs) => (await pool(docs.length, INFLIGHT, (i) => mastraCall('/bench/ingest', { index: `bench_${r}`, id: docs[i].id, text: docs[i].text }))).reduce((s, a) => s + a.chunks, 0),
  };
  // Round 0, on a few documents, warms both: our document reader process and tokenizer, Mastra's
  // chunker and LibSQL files.
  const rows = [];
  for (let r = 0; r <= INGEST_ROUNDS; r++) {
    const docs = r === 0 ? corpus.slice(0, INFLIGHT) : corpus;
    const row = {};
    for (const name of r % 2 === 0 ? ['ours', 'mastra'] : ['mastra', 'ours']) {
      const t = performance.now();
      const chunks = await sides[name](r, docs);
      const seconds = (performance.now() - t) / 1000;
      row[name] = { docsPerSec: docs.length / seconds, chunksPerDoc: chunks / docs.length };
    }
    if (r === 0) continue;
    rows.push(row);
    console.log(
      `  ingest round ${r}: ours ${row.ours.docsPerSec.toFixed(1)} docs/s (${row.ours.chunksPerDoc.toFixed(2)} chunks/doc), Mastra ${row.mastra.docsPerSec.toFixed(1)} docs/s (${row.mastra.chunksPerDoc.toFixed(2)} chunks/doc)`,
    );
  }
  const side = (name) => ({ docsPerSec: median(rows.map((r) => r[name].docsPerSec)), chunksPerDoc: median(rows.map((r) => r[name].chunksPerDoc)) });
  return {
    docs: corpus.length,
    inFlight: INFLIGHT,
    mastraChunking: CHUNKINGS[CHUNKING],
    ours: side('ours'),
    mastra: side('mastra'),
    ratio: median(rows.map((r) => r.ours.docsPerSec / r.mastra.docsPerSec)),
  };
}

/** SciFact queries against the last round's documents, one per side per iteration. */
async function searchRows({ oursCall, projectId, mastraCall, index }) {
  const queries = readFileSync(new URL('data/beir-scifact-5k/queries.jsonl', import.meta.url), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).text);
  const next = { ours: 0, mastra: 0 };
  const timed = async (fn) => {
    const t = performance.now();
    await fn();
    return { total: performance.now() - t };
  };
  const sides = await interleaved(Math.min(queries.length, 200), {
    ours: () => timed(() => oursCall('POST', '/api/knowledge/search', { projectId, query: queries[next.ours++ % queries.length], topK: 5, searchType: 'semantic' })),
    mastra: () => timed(() => mastraCall('/bench/search', { index, query: queries[next.mastra++ % queries.length], topK: 5 })),
  });
  return { ours: sides.ours.total, mastra: sides.mastra.total, ratio: round(sides.mastra.total.p50 / sides.ours.total.p50) };
}
