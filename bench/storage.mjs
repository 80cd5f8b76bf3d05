// Storage modes side by side: the real built server (bench/servers.mjs `ours`, child processes)
// on SQLite, on SQLite with Chroma as its vector store (what of PostgreSQL mode's figures is the
// vector store's), on PostgreSQL with one instance, and on PostgreSQL with two instances behind a
// round-robin client, all in one run, interleaved (each round runs every mode, in an order that
// rotates). PostgreSQL mode is the server's (bench/modes.mjs): a private cluster
// (bench/postgres.mjs), a real Chroma server as the shared vector store, AGENT_PLATFORM_SECRET.
// Embeddings come from a fake OpenAI-compatible server on loopback (bench/fake-embedder.mjs), one
// base URL per instance, so each text's embedding calls are counted: no document may be indexed
// twice.
//
// Per mode: PROJECTS projects created over HTTP; then per round, INGEST_DOCS SciFact abstracts
// posted (16 in flight) until all are completed (documents/s), and REQUESTS requests of each of
// GET /api/v1/projects?limit=20, GET /api/knowledge/documents?limit=20, POST /api/knowledge/search
// keyword (hybrid, alpha 0) and hybrid (alpha 0.5), CONCURRENCY in flight. p50/p95 per mode, and
// ratios PostgreSQL ÷ SQLite of the p50s (target ≤ 2). The database's own time per request is
// pg_stat_statements' execution time of the block's statements ÷ its requests (reset before each
// block; the job queue's background statements are counted apart).
//   node bench/storage.mjs        (or `pnpm bench storage`)
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startChild } from './child.mjs';
import { startFakeEmbedder } from './fake-embedder.mjs';
import { loadCorpus } from './ingest.mjs';
import { percentile, pool } from './load.mjs';
import { startSharedServices } from './modes.mjs';
import { connections, resetStatements, statementTime } from './postgres.mjs';

const PROJECTS = Number(process.env.BENCH_STORAGE_PROJECTS ?? 200);
const INGEST_DOCS = Number(process.env.BENCH_STORAGE_DOCS ?? 40);
const REQUESTS = Number(process.env.BENCH_STORAGE_REQUESTS ?? 100);
const CONCURRENCY = Number(process.env.BENCH_STORAGE_CONCURRENCY ?? 4);
const ROUNDS = Number(process.env.BENCH_STORAGE_ROUNDS ?? 3);
const POOL = Number(process.env.BENCH_STORAGE_POOL ?? 10);

const push = (lists, name, ...values) => {
  lists[name] = [...(lists[name] ?? []), ...values];
};

/** A client of one mode: requests go round-robin over its instances. */
function client(instances, key) {
  let turn = 0;
  return async (method, path, body) => {
    const { url } = instances[turn++ % instances.length];
    const t = performance.now();
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return { ms: performance.now() - t, json };
  };
}

async function startModes(embedder, services) {
  const dirs = [];
  const instance = async (name, env) => {
    const dir = await mkdtemp(join(tmpdir(), `ap-bench-storage-${name}-`));
    dirs.push(dir);
    return { name, ...(await startChild('ours', dir, { OPENAI_BASE_URL: embedder.urlFor(name), OPENAI_API_KEY: 'sk-bench', ...env })) };
  };
  const modes = [{ name: 'SQLite', instances: [await instance('sqlite', {})] }];
  if (!services.skipped) {
    // SQLite with PostgreSQL mode's vector store: what of PostgreSQL mode's figures is Chroma's.
    const chroma = { AGENT_PLATFORM_VECTOR_STORE: 'chroma', AGENT_PLATFORM_VECTOR_STORE_CONFIG: JSON.stringify({ endpoint: services.chroma.endpoint, indexName: 'bench-sqlite' }) };
    modes.push({ name: 'SQLite, Chroma', instances: [await instance('sqlitechroma', chroma)] });
    for (const [name, count] of [
      ['PostgreSQL, 1 instance', 1],
      ['PostgreSQL, 2 instances', 2],
    ]) {
      const db = await services.database(`bench_${count}`);
      const env = db.env(`bench-${count}`, { AGENT_PLATFORM_DATABASE_POOL: String(POOL) });
      // The first creates the schema and the first key; the second starts on it.
      const instances = [await instance(`pg${count}a`, env)];
      if (count === 2) instances.push(await instance('pg2b', env));
      modes.push({ name, instances, db });
    }
  }
  for (const mode of modes) {
    mode.key = mode.instances[0].firstKey;
    mode.call = client(mode.instances, mode.key);
    mode.lat = {};
    mode.dbMs = {};
    mode.ingest = [];
  }
  return { modes, dirs };
}

/** PROJECTS projects, the last one with the fake embedder: the one documents go into. */
async function seed(mode) {
  const ids = await pool(
    PROJECTS,
    8,
    async (i) => (await mode.call('POST', '/api/projects/create', { name: `Project ${i}`, model: 'gpt-4o-mini', provider: 'openai', description: `Bench project number ${i}` })).json.project.id,
  );
  mode.projectId = ids.at(-1);
  await mode.call('PUT', '/api/knowledge/settings', { projectId: mode.projectId, settings: { embeddingModel: 'openai:fake-embed' } });
}

async function ingestRound(mode, docs) {
  const completed = async () => (await mode.call('GET', `/api/knowledge/documents?projectId=${mode.projectId}&status=completed&limit=1`)).json.total;
  const before = await completed();
  if (mode.db) await resetStatements(mode.db.admin);
  const t = performance.now();
  await pool(docs.length, 16, (i) =>
    mode.call('POST', '/api/knowledge/documents', { projectId: mode.projectId, fileName: `${docs[i].id}.txt`, fileType: 'txt', sourceType: 'text', content: docs[i].text }),
  );
  while ((await completed()) < before + docs.length) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - t) / 1000;
  mode.ingest.push(docs.length / seconds);
  if (mode.db) push(mode.dbMs, 'ingest', { ...(await statementTime(mode.db.admin)), requests: docs.length });
}

const OPS = {
  'list projects': (mode) => mode.call('GET', '/api/v1/projects?limit=20'),
  'list documents': (mode) => mode.call('GET', `/api/knowledge/documents?projectId=${mode.projectId}&limit=20`),
  'search keyword': (mode, q) => mode.call('POST', '/api/knowledge/search', { projectId: mode.projectId, query: q, topK: 5, searchType: 'hybrid', alpha: 0 }),
  'search hybrid': (mode, q) => mode.call('POST', '/api/knowledge/search', { projectId: mode.projectId, query: q, topK: 5, searchType: 'hybrid', alpha: 0.5 }),
};

async function requestRound(mode, queries) {
  for (const [op, fn] of Object.entries(OPS)) {
    if (mode.db) await resetStatements(mode.db.admin);
    let peak = 0;
    const sampler =
      mode.db &&
      setInterval(
        () =>
          connections(mode.db.admin).then(
            (n) => {
              peak = Math.max(peak, n);
            },
            () => {},
          ),
        100,
      );
    const ms = await pool(REQUESTS, CONCURRENCY, async (i) => (await fn(mode, queries[i % queries.length])).ms);
    if (sampler) clearInterval(sampler);
    push(mode.lat, op, ...ms);
    if (mode.db) {
      push(mode.dbMs, op, { ...(await statementTime(mode.db.admin)), requests: REQUESTS });
      mode.peakConnections = Math.max(mode.peakConnections ?? 0, peak);
    }
  }
}

/** Bytes per row of the tables a document fills, measured with pg_total_relation_size. */
async function tableSizes(admin) {
  const tables = ['projects', 'documents', 'chunks', 'chunk_terms', 'chunk_lengths', 'blobs', 'jobs'];
  const out = {};
  for (const t of tables) {
    const exists = (await admin.query('select to_regclass($1) as r', [t])).rows[0].r;
    if (!exists) continue;
    const { rows } = await admin.query(`select pg_total_relation_size('${t}')::float8 as bytes, (select count(*) from ${t})::float8 as n`);
    out[t] = { rows: rows[0].n, bytes: rows[0].bytes, bytesPerRow: rows[0].n ? Math.round(rows[0].bytes / rows[0].n) : null };
  }
  out.database = { bytes: Number((await admin.query('select pg_database_size(current_database())::float8 as b')).rows[0].b) };
  return out;
}

export async function storageModes() {
  const corpus = await loadCorpus(INGEST_DOCS * ROUNDS);
  const queries = (await loadCorpus(400)).slice(-200).map((d) => d.text.split(/(?<=\.)\s+/)[0].slice(0, 200));
  const embedder = await startFakeEmbedder();
  const services = await startSharedServices();
  if (services.skipped) console.log(`  PostgreSQL and Chroma rows skipped: ${services.skipped}`);
  const { modes, dirs } = await startModes(embedder, services);
  try {
    for (const mode of modes) await seed(mode);
    for (let round = 0; round < ROUNDS; round++) {
      const order = modes.map((_, i) => modes[(i + round) % modes.length]);
      const docs = corpus.slice(round * INGEST_DOCS, (round + 1) * INGEST_DOCS);
      for (const mode of order) await ingestRound(mode, docs);
      for (const mode of order) await requestRound(mode, queries);
      console.log(`  round ${round + 1} (${order.map((m) => m.name).join(' → ')}): ${modes.map((m) => `${m.name} ingest ${m.ingest.at(-1).toFixed(1)} docs/s`).join(', ')}`);
    }
    const sqlite = modes[0];
    const result = {
      name: `storage modes: SQLite (built-in store, and Chroma) vs PostgreSQL (1 and 2 instances), ${PROJECTS} projects, ${INGEST_DOCS * ROUNDS} documents`,
      concurrency: CONCURRENCY,
      requestsPerOpPerRound: REQUESTS,
      rounds: ROUNDS,
      modes: {},
    };
    for (const mode of modes) {
      const ops = {};
      for (const op of Object.keys(OPS)) {
        const p50 = percentile(mode.lat[op], 50);
        const db = mode.dbMs[op];
        ops[op] = {
          p50,
          p95: percentile(mode.lat[op], 95),
          ratioToSqlite: p50 / percentile(sqlite.lat[op], 50),
          ...(db
            ? {
                dbMsPerRequest: db.reduce((s, d) => s + d.ms, 0) / db.reduce((s, d) => s + d.requests, 0),
                statementsPerRequest: db.reduce((s, d) => s + d.calls, 0) / db.reduce((s, d) => s + d.requests, 0),
                queueMsPerRequest: db.reduce((s, d) => s + d.queueMs, 0) / db.reduce((s, d) => s + d.requests, 0),
              }
            : {}),
        };
      }
      const ingestDb = mode.dbMs.ingest;
      // Every chunk text embedded exactly once by the instances of this mode together (search
      // queries, embedded at each search, left out).
      const queryTexts = new Set(queries);
      const chunkCounts = [...embedder.counts(mode.instances.map((i) => i.name))].filter(([t]) => !queryTexts.has(t));
      const chunks = (await mode.call('GET', `/api/knowledge/documents?projectId=${mode.projectId}&limit=100`)).json;
      result.modes[mode.name] = {
        instances: mode.instances.length,
        ...(mode.db ? { poolPerInstance: POOL, notifierConnectionsPerInstance: 2, peakConnections: mode.peakConnections } : {}),
        ops,
        ingestDocsPerSec: percentile(mode.ingest, 50),
        ...(ingestDb ? { ingestDbMsPerDocument: ingestDb.reduce((s, d) => s + d.ms + d.queueMs, 0) / ingestDb.reduce((s, d) => s + d.requests, 0) } : {}),
        documentsCompleted: chunks.total,
        chunkTextsEmbedded: chunkCounts.length,
        chunkTextsEmbeddedTwice: chunkCounts.filter(([, n]) => n > 1).length,
        chunkTextsEmbeddedBy: Object.fromEntries(mode.instances.map((i) => [i.name, [...embedder.counts([i.name])].filter(([t]) => !queryTexts.has(t)).length])),
        ...(mode.db ? { sizes: await tableSizes(mode.db.admin) } : {}),
      };
    }
    const pg1 = result.modes['PostgreSQL, 1 instance'];
    if (pg1) result.ratio = Math.max(...Object.values(pg1.ops).map((o) => o.ratioToSqlite));
    result.target = 2;
    result.lowerIsBetter = true;
    return result;
  } finally {
    for (const mode of modes) for (const i of mode.instances) await i.stop();
    await services.stop();
    await embedder.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(JSON.stringify(await storageModes(), null, 2));
