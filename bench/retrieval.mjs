// pnpm bench:retrieval — retrieval quality of the knowledge pipeline on BEIR SciFact
// (bench/data/beir-scifact-5k), measured through the library with the server's adapters.
//
// 1. Ingest: every abstract (title + "\n\n" + text) becomes one document of one project, through
//    AgentPlatform.createDocument, on SQLite + the built-in vector store + the built-in embedder
//    (the adapters of packages/server's openPlatform/openKnowledge). The data folder
//    .bench-data/retrieval/c<size>-o<overlap>[-n<docs>] is reused when it already holds the
//    whole corpus for those chunk settings (embedding 5,000 abstracts takes minutes).
// 2. Queries: all SciFact claims, through AgentPlatform.searchKnowledge, for every pipeline
//    (semantic; mrr at each lambda; hybrid at each alpha), topK 100 (the API's maximum). Chunk
//    hits are mapped to corpus ids (first occurrence kept), one run file per pipeline.
// 3. Scores: the dataset's own score.mjs --json, on the tuning half and on the reporting half
//    separately; the dataset's bm25-baseline.mjs is scored on each half the same way.
//    Split: a query is in the tuning half when the first byte of sha256("scifact-split-v1:" + id)
//    is even, else in the reporting half.
// 4. Writes the table into docs/BENCHMARKS.md between the retrieval markers (full runs only,
//    unless BENCH_RETRIEVAL_RECORD=1) and prints it.
//
// `--storage sqlite,postgres` (`--database URL` optional): SQLite mode vs PostgreSQL mode instead,
// see bench/retrieval-storage.mjs.
//
// Knobs: BENCH_RETRIEVAL_DOCS (N abstracts: the judged ones of the chosen queries, then the first
// others; default all), BENCH_RETRIEVAL_QUERIES (first N
// claims; default all), BENCH_RETRIEVAL_CHUNK_SIZES (default "512,200"; overlap 64 for 512,
// 32 for smaller sizes), BENCH_RETRIEVAL_MMR_TOPK (topK of the mrr runs, default 100),
// BENCH_RETRIEVAL_RECORD=1 (write the docs section even for a cut run).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform } from '@agent-platform/core';
import { dot, fuseHybrid, mmrSelect, vectorNamespace } from '@agent-platform/core/internal';
import { DEFAULT_ALPHA, HYBRID_CANDIDATES } from '@agent-platform/core/schemas';
import { createApp, databasePath } from '@agent-platform/server';
import { serve } from 'h3';
import { compareStorages, renderStorageSection } from './retrieval-storage.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dataDir = join(root, 'bench/data/beir-scifact-5k');
const benchDir = join(root, '.bench-data/retrieval');
const docsFile = join(root, 'docs/BENCHMARKS.md');
const START = '<!-- retrieval:start -->';
const END = '<!-- retrieval:end -->';

const envInt = (name) => (process.env[name] ? Number(process.env[name]) : undefined);
const DOC_LIMIT = envInt('BENCH_RETRIEVAL_DOCS');
const QUERY_LIMIT = envInt('BENCH_RETRIEVAL_QUERIES');
const CHUNK_SIZES = (process.env.BENCH_RETRIEVAL_CHUNK_SIZES ?? '512,200')
  .split(',')
  .map((s) => Number(s.trim()))
  .filter(Boolean);
const MMR_TOPK = envInt('BENCH_RETRIEVAL_MMR_TOPK') ?? 100;
const TOPK = 100;
const ALPHAS = [0, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 1];
const LATENCY_QUERIES = envInt('BENCH_RETRIEVAL_LATENCY_QUERIES') ?? 200;
const LAMBDAS = [0.5, 0.7];
const ALL_CHUNK_SIZES = [512, 200];
const overlapFor = (size) => (size >= 512 ? 64 : 32);
// Folders of an older pipeline are ingested again: 2 = chunk vectors kept in SQLite (mrr reads them).
const FORMAT = 2;

const readJsonl = async (path) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);

/** The fixed split: tuning when the first byte of sha256("scifact-split-v1:" + id) is even. */
export const halfOf = (queryId) => (createHash('sha256').update(`scifact-split-v1:${queryId}`).digest()[0] % 2 === 0 ? 'tuning' : 'reporting');

export async function loadData() {
  const queries = (await readJsonl(join(dataDir, 'queries.jsonl'))).slice(0, QUERY_LIMIT);
  const qrelsLines = (await readFile(join(dataDir, 'qrels.tsv'), 'utf8')).split('\n');
  const header = qrelsLines[0];
  const rows = qrelsLines.slice(1).filter((l) => l.trim());
  const qids = new Set(queries.map((q) => q._id));
  // A cut corpus keeps the judged documents of the chosen queries, then the first others up to N.
  const judged = new Set(
    rows
      .map((r) => r.split('\t'))
      .filter(([qid]) => qids.has(qid))
      .map(([, docId]) => docId),
  );
  const all = await readJsonl(join(dataDir, 'corpus.jsonl'));
  const corpus = DOC_LIMIT ? [...all.filter((d) => judged.has(d._id)), ...all.filter((d) => !judged.has(d._id))].slice(0, Math.max(DOC_LIMIT, judged.size)) : all;
  const halves = { tuning: [], reporting: [] };
  for (const q of queries) halves[halfOf(q._id)].push(q._id);
  return { corpus, queries, header, rows, qids, halves };
}

/** Opens the platform on a data folder with the server's knowledge adapters (openKnowledge). */
async function open(dir) {
  await mkdir(dir, { recursive: true });
  const storage = await sqliteStorage({ path: databasePath(dir) });
  const embedder = builtinEmbedder();
  const vectors = await builtinVectorStore({ dir: join(dir, 'vectors') });
  const platform = new AgentPlatform({ storage, knowledge: { vectors, embedder, blobs: fileBlobStore({ dir: join(dir, 'files') }) } });
  await platform.start();
  return { platform, parts: { storage, embedder, vectors } };
}

async function completedCount(platform, caller, projectId) {
  return (await platform.listDocuments(caller, { projectId, status: 'completed', limit: 1 })).total;
}

/** Ingests the corpus with the given chunk size, or reuses a folder that already holds it. */
export async function ingest(corpus, chunkSize) {
  const name = `c${chunkSize}-o${overlapFor(chunkSize)}${DOC_LIMIT ? `-n${corpus.length}` : ''}`;
  const dir = join(benchDir, name);
  const markerPath = join(dir, 'bench-retrieval.json');
  if (existsSync(markerPath)) {
    const marker = JSON.parse(await readFile(markerPath, 'utf8'));
    const { platform, parts } = await open(dir);
    const caller = { userId: marker.userId };
    if (marker.format === FORMAT && marker.docs === corpus.length && (await completedCount(platform, caller, marker.projectId)) === corpus.length) {
      log(`reusing ${dir} (${marker.docs} documents, ${marker.chunks} chunks, ingested ${marker.ingestedAt})`);
      return { platform, parts, caller, projectId: marker.projectId, marker, reused: true, dir };
    }
    await platform.close();
    log(`${dir} is incomplete or of an older pipeline: ingesting again`);
  }
  await rm(dir, { recursive: true, force: true });
  const { platform, parts } = await open(dir);
  const { caller, projectId, marker } = await ingestInto(platform, corpus, chunkSize, dir);
  await writeFile(markerPath, JSON.stringify(marker, null, 2));
  return { platform, parts, caller, projectId, marker, reused: false, dir };
}

/**
 * Ingests the corpus into a new project of a new user on `platform` (16 createDocument calls in
 * flight, then waits until every document is indexed); answers the caller, the project and the
 * ingest's figures (the folder marker's fields). Throws when a document failed.
 */
export async function ingestInto(platform, corpus, chunkSize, where) {
  const chunkOverlap = overlapFor(chunkSize);
  const { userId } = await platform.createUserWithKey({ name: 'bench' });
  const caller = { userId };
  const { project } = await platform.createProject(caller, { name: 'scifact', model: 'm', provider: 'openai' });
  if (chunkSize !== 512) await platform.putKnowledgeSettings(caller, { projectId: project.id, settings: { chunkSize, chunkOverlap } });
  await platform.searchKnowledge(caller, { projectId: project.id, query: 'warm up' }); // loads the model
  log(`ingesting ${corpus.length} documents (chunkSize ${chunkSize}, overlap ${chunkOverlap}) into ${where}`);
  const started = performance.now();
  let next = 0;
  let answered = 0;
  let failed = 0;
  const worker = async () => {
    while (next < corpus.length) {
      const d = corpus[next++];
      const res = await platform.createDocument(caller, {
        projectId: project.id,
        fileName: `${d._id}.txt`,
        fileType: 'txt',
        sourceType: 'upload',
        content: `${d.title}\n\n${d.text}`,
      });
      if (!res.success) failed++;
      if (++answered % 500 === 0) log(`  ${answered} answered, ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  for (;;) {
    const done = await completedCount(platform, caller, project.id);
    const failedNow = (await platform.listDocuments(caller, { projectId: project.id, status: 'failed', limit: 1 })).total;
    if (done + failedNow >= corpus.length) {
      failed = failedNow;
      break;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  if (failed > 0) throw new Error(`${failed} documents failed to index`);
  let chunks = 0;
  for (let offset = 0; offset < corpus.length; offset += 100) {
    const page = await platform.listDocuments(caller, { projectId: project.id, limit: 100, offset });
    chunks += page.documents.reduce((s, d) => s + d.chunkCount, 0);
  }
  const marker = {
    format: FORMAT,
    userId,
    projectId: project.id,
    docs: corpus.length,
    chunks,
    chunkSize,
    chunkOverlap,
    seconds,
    docsPerSec: corpus.length / seconds,
    chunksPerSec: chunks / seconds,
    ingestedAt: new Date().toISOString(),
    cores: cpus().length,
  };
  log(`ingested ${corpus.length} documents, ${chunks} chunks in ${seconds.toFixed(0)} s: ${marker.docsPerSec.toFixed(1)} docs/s`);
  return { caller, projectId: project.id, marker };
}

function pipelines() {
  // Cheap pipelines first; mrr (greedy selection over 4 × topK candidates) is the slow one.
  const list = [
    { name: `default (hybrid α=${DEFAULT_ALPHA})`, request: { topK: TOPK } },
    { name: 'semantic', request: { searchType: 'semantic', topK: TOPK } },
    ...ALPHAS.map((a) => ({ name: `hybrid α=${a}`, request: { searchType: 'hybrid', alpha: a, topK: TOPK } })),
    ...LAMBDAS.map((l) => ({ name: `mrr λ=${l}`, request: { searchType: 'mrr', mmrLambda: l, topK: MMR_TOPK } })),
  ];
  return list.map((p) => ({ ...p, label: p.request.topK !== TOPK ? `${p.name} (topK ${p.request.topK})` : p.name }));
}

/** Runs one pipeline over the queries; returns the ranked corpus ids per query and the latencies. */
async function runPipeline(ctx, queries, request) {
  const run = new Map();
  const ms = [];
  for (const q of queries) {
    const t = performance.now();
    const res = await ctx.platform.searchKnowledge(ctx.caller, { projectId: ctx.projectId, query: q.text, ...request });
    ms.push(performance.now() - t);
    const ids = [];
    const seen = new Set();
    for (const hit of res.documents) {
      const id = String(hit.metadata.fileName).replace(/\.txt$/, '');
      if (!seen.has(id)) {
        seen.add(id);
        ids.push(id);
      }
    }
    run.set(q._id, ids);
  }
  return { run, p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

/** Scores a run on one half with the dataset's score.mjs --json. */
async function score(workDir, label, run, half, data) {
  const runPath = join(workDir, `${label}.${half}.jsonl`);
  const ids = new Set(data.halves[half]);
  await writeFile(
    runPath,
    `${[...run]
      .filter(([qid]) => ids.has(qid))
      .map(([qid, r]) => JSON.stringify({ query_id: qid, ranked_ids: r }))
      .join('\n')}\n`,
  );
  const out = execFileSync(process.execPath, [join(dataDir, 'score.mjs'), runPath, '--qrels', join(workDir, `qrels.${half}.tsv`), '--json'], { encoding: 'utf8' });
  return JSON.parse(out).mean;
}

const f3 = (x) => (x === undefined ? '' : x.toFixed(3));

/**
 * Search latency at 5,000 documents: p50/p95 of POST /api/knowledge/search over loopback HTTP
 * (the real app on this platform, topK 5, the API's default) for each search type, and, in the
 * same run on the same queries, each part alone as the service runs it: embedding the query,
 * the keyword search (SQLite FTS5, HYBRID_CANDIDATES), the vector query, and the fusion (hybrid:
 * keyword-only candidates' vectors from SQLite, fuseHybrid and sort; mrr: that, then the MMR
 * selection over 20 candidates).
 */
async function latency(ctx, queries) {
  const { platform, parts, caller, projectId } = ctx;
  const { key } = await platform.createKey(caller, { name: 'bench-latency' });
  const server = serve(createApp(platform), { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  const url = `http://127.0.0.1:${server.node.server.address().port}/api/knowledge/search`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const texts = queries.slice(0, LATENCY_QUERIES).map((q) => q.text);
  const namespace = vectorNamespace(projectId, parts.embedder);
  const topK = 5;
  const time = async (fn) => {
    const t = performance.now();
    const out = await fn();
    return [performance.now() - t, out];
  };
  const rows = [];
  try {
    for (const searchType of ['semantic', 'hybrid', 'mrr']) {
      const http = [];
      const part = { embed: [], keyword: [], vector: [], fusion: [] };
      for (const [i, q] of [...texts.slice(0, 5), ...texts].entries()) {
        const warm = i < 5;
        const [ms, res] = await time(() => fetch(url, { method: 'POST', headers, body: JSON.stringify({ projectId, query: q, topK, searchType }) }));
        if (!res.ok) throw new Error(`search answered ${res.status}: ${await res.text()}`);
        await res.json();
        if (!warm) http.push(ms);
        const [embedMs, [vector]] = await time(() => parts.embedder.embed([q]));
        const candidates = searchType === 'semantic' ? topK : HYBRID_CANDIDATES;
        const [vectorMs, hits] = await time(() => parts.vectors.query(namespace, { vector, topK: candidates, includeVectors: searchType === 'mrr' }));
        let keywordMs = 0;
        let fusionMs = 0;
        if (searchType !== 'semantic') {
          const [kMs, keyword] = await time(() => parts.storage.chunks.keywordSearch(projectId, q, candidates));
          keywordMs = kMs;
          [fusionMs] = await time(async () => {
            // As the service: keyword-only candidates' similarities from the vectors kept in SQLite.
            const cosines = new Map(hits.map((h) => [h.id, h.score]));
            const missing = keyword.filter((k) => !cosines.has(k.id)).map((k) => k.id);
            for (const [id, v] of await parts.storage.chunks.embeddingsById(projectId, missing, parts.embedder.id)) cosines.set(id, dot(vector, v));
            const fused = [...fuseHybrid(cosines, new Map(keyword.map((k) => [k.id, k.score])), DEFAULT_ALPHA, parts.embedder.similarity)].filter(([, score]) => score > 0).sort((a, b) => b[1] - a[1]);
            if (searchType === 'hybrid') return fused.slice(0, topK);
            // mrr: the best 20 fused, vectors from the hits or from storage, then the MMR selection.
            const pool = fused.slice(0, Math.max(topK * 4, 20));
            const vectors = new Map(hits.map((h) => [h.id, h.vector]));
            const rest = pool.map(([id]) => id).filter((id) => !vectors.has(id));
            for (const [id, v] of await parts.storage.chunks.embeddingsById(projectId, rest, parts.embedder.id)) vectors.set(id, v);
            const none = new Float32Array(parts.embedder.dimensions);
            const best = pool[0]?.[1] ?? 1;
            return mmrSelect(
              pool.map(([id, score]) => ({ id, relevance: score / best, vector: vectors.get(id) ?? none })),
              topK,
              0.5,
            );
          });
        }
        if (!warm) {
          part.embed.push(embedMs);
          part.vector.push(vectorMs);
          part.keyword.push(keywordMs);
          part.fusion.push(fusionMs);
        }
      }
      rows.push({ searchType, p50: percentile(http, 50), p95: percentile(http, 95), ...Object.fromEntries(Object.entries(part).map(([k, xs]) => [k, percentile(xs, 50)])) });
      log(`latency ${searchType}: p50 ${rows.at(-1).p50.toFixed(1)} ms`);
    }
  } finally {
    await server.close(true);
  }
  return { rows, queries: texts.length, chunks: ctx.marker.chunks, docs: ctx.marker.docs };
}

function latencyTable(lat) {
  const f1 = (x) => (x === 0 ? '-' : x.toFixed(2));
  return [
    `| search type (topK 5) | HTTP p50 | HTTP p95 | query embedding p50 | keyword search p50 | vector search p50 | fusion p50 | rest of the request (p50 − parts) |`,
    '|---|---|---|---|---|---|---|---|',
    ...lat.rows.map(
      (r) =>
        `| ${r.searchType} | **${r.p50.toFixed(1)}** | ${r.p95.toFixed(1)} | ${f1(r.embed)} | ${f1(r.keyword)} | ${f1(r.vector)} | ${f1(r.fusion)} | ${(r.p50 - r.embed - r.keyword - r.vector - r.fusion).toFixed(1)} |`,
    ),
  ].join('\n');
}

function table(rows) {
  const lines = [
    '| chunk size | pipeline | tuning nDCG@10 | tuning R@10 | tuning MRR@10 | **reporting nDCG@10** | reporting R@10 | reporting MRR@10 | reporting R@100 | query p50 / p95 (ms) |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    if (r.notRun) {
      lines.push(`| ${r.chunk} | ${r.name} | not run | | | not run | | | | |`);
      continue;
    }
    const t = r.tuning;
    const p = r.reporting;
    const lat = r.p50 === undefined ? '' : `${r.p50.toFixed(1)} / ${r.p95.toFixed(1)}`;
    lines.push(
      `| ${r.chunk} | ${r.name} | ${f3(t['ndcg@10'])} | ${f3(t['recall@10'])} | ${f3(t['mrr@10'])} | **${f3(p['ndcg@10'])}** | ${f3(p['recall@10'])} | ${f3(p['mrr@10'])} | ${f3(p['recall@100'])} | ${lat} |`,
    );
  }
  return lines.join('\n');
}

/** The docs section for what has run so far; planned pipelines without figures are "not run". */
function render(data, rows, ingests, lat) {
  const done = new Set(rows.map((r) => `${r.chunk}|${r.name}`));
  const all = [...rows];
  for (const chunk of ALL_CHUNK_SIZES) {
    for (const p of pipelines()) if (!done.has(`${chunk}|${p.label}`)) all.push({ chunk, name: p.label, notRun: true });
  }
  const order = (r) => (r.chunk === 'whole doc' ? -1 : ALL_CHUNK_SIZES.indexOf(r.chunk) * 100 + pipelines().findIndex((p) => p.label === r.name));
  all.sort((a, b) => order(a) - order(b));
  const measured = rows.filter((r) => r.chunk !== 'whole doc');
  const best = measured.reduce((a, b) => (b.tuning['ndcg@10'] > a.tuning['ndcg@10'] ? b : a), measured[0]);
  const full = !DOC_LIMIT && !QUERY_LIMIT;
  const ingestLines = ingests.map(
    ({ marker, reused }) =>
      `- chunk size ${marker.chunkSize} (overlap ${marker.chunkOverlap}): ${marker.docs} documents → ${marker.chunks} chunks in ${marker.seconds.toFixed(0)} s, ` +
      `**${marker.docsPerSec.toFixed(1)} docs/s** (${marker.chunksPerSec.toFixed(1)} chunks/s), ingested ${marker.ingestedAt.slice(0, 16).replace('T', ' ')} UTC${reused ? ' (data folder reused by this run)' : ''}`,
  );
  return [
    START,
    '## retrieval: quality of every search type on BEIR SciFact',
    '',
    '`pnpm bench:retrieval` ([bench/retrieval.mjs](../bench/retrieval.mjs); rewrites this section). The 5,000',
    'abstracts of [bench/data/beir-scifact-5k](../bench/data/beir-scifact-5k) (document = title + "\\n\\n" + text) are',
    'ingested as documents of one project through `AgentPlatform.createDocument`, on the adapters of',
    "the server's `openPlatform` (SQLite, built-in vector store, built-in embedder USE-lite); the data",
    'folder `.bench-data/retrieval/c<size>-o<overlap>` is reused while it holds the whole corpus. Each',
    'of the 300 claims is searched through `AgentPlatform.searchKnowledge` (in-process, no HTTP) with',
    `topK 100 (the API's maximum${MMR_TOPK !== TOPK ? `; mrr with topK ${MMR_TOPK}` : ''}); chunk hits become document ids, first occurrence kept;`,
    "each run file is scored with the dataset's `score.mjs --json`. BM25 is the dataset's",
    '`bm25-baseline.mjs` (whole documents, no chunking), scored on each half the same way.',
    'Knobs for a quick run: `BENCH_RETRIEVAL_DOCS`, `BENCH_RETRIEVAL_QUERIES`,',
    '`BENCH_RETRIEVAL_CHUNK_SIZES` (default `512,200`), `BENCH_RETRIEVAL_MMR_TOPK`, `BENCH_RETRIEVAL_LATENCY_QUERIES` (200).',
    '',
    '**Split** (fixed): a query is in the *tuning* half when the first byte of',
    '`sha256("scifact-split-v1:" + query id)` is even, else in the *reporting* half',
    `(${data.halves.tuning.length} / ${data.halves.reporting.length} queries). Choose settings on the tuning half only; quote the reporting half.`,
    '',
    `Recorded ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (the development VM, shared: other work was running), Node.js ${process.versions.node}` +
      (full ? '.' : `. **Cut run**: ${data.corpus.length} documents, ${data.queries.length} queries (not the full set).`),
    '',
    table(all),
    '',
    'Ingest (built-in embedder, `createDocument` with 16 in flight, the queue indexing 4 at a time):',
    '',
    ...(ingestLines.length ? ingestLines : ['- not run']),
    '',
    ...(best ? [`Best pipeline on the tuning half: **chunk ${best.chunk}, ${best.name}** (tuning nDCG@10 ${f3(best.tuning['ndcg@10'])}; reporting ${f3(best.reporting['ndcg@10'])}).`] : []),
    'Query latency in the table: `searchKnowledge` in-process with topK 100, one query at a time, p50 / p95 over the queries.',
    '',
    '### Search latency at 5,000 documents, and where it goes',
    '',
    ...(lat
      ? [
          `\`POST /api/knowledge/search\` over loopback HTTP (the real app, \`createApp\`, on the platform above: ${lat.docs} documents, ${lat.chunks} chunks), topK 5, the first ${lat.queries} claims one at a time after 5 warm-up queries; ms.`,
          'The parts are timed alone on the same queries in the same run, as the service runs them: the query embedding (built-in embedder), the keyword search',
          `(SQLite FTS5 over analyzed terms, ${HYBRID_CANDIDATES} candidates), the vector query (built-in store; ${HYBRID_CANDIDATES} candidates, with their vectors for mrr) and the fusion`,
          '(hybrid: vectors of keyword-only candidates from SQLite, `fuseHybrid` + sort; mrr: that, then the MMR selection among the best 20). In the service the keyword search runs while the query is embedded.',
          '',
          latencyTable(lat),
        ]
      : ['- not run']),
    END,
  ].join('\n');
}

/** Rewrites the section of docs/BENCHMARKS.md between `start` and `end` (full runs, or BENCH_RETRIEVAL_RECORD=1). */
async function record(section, start = START, end = END) {
  if (!(!DOC_LIMIT && !QUERY_LIMIT) && process.env.BENCH_RETRIEVAL_RECORD !== '1') return false;
  const doc = await readFile(docsFile, 'utf8');
  const a = doc.indexOf(start);
  const b = doc.indexOf(end);
  const next = a >= 0 && b > a ? doc.slice(0, a) + section + doc.slice(b + end.length) : `${doc.replace(/\n*$/, '\n\n')}${section}\n`;
  await writeFile(docsFile, next);
  return true;
}

async function main() {
  const data = await loadData();
  const workDir = join(benchDir, 'runs');
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  for (const half of ['tuning', 'reporting']) {
    const ids = new Set(data.halves[half]);
    await writeFile(join(workDir, `qrels.${half}.tsv`), `${[data.header, ...data.rows.filter((r) => ids.has(r.split('\t')[0]))].join('\n')}\n`);
  }
  log(`${data.corpus.length} documents, ${data.queries.length} queries: ${data.halves.tuning.length} tuning, ${data.halves.reporting.length} reporting`);
  const { values: flags } = parseArgs({ args: process.argv.slice(2).filter((a) => a !== '--'), options: { storage: { type: 'string' }, database: { type: 'string' } } });
  const storages = (flags.storage ?? 'sqlite').split(',').map((s) => s.trim());
  const unknown = storages.filter((s) => s !== 'sqlite' && s !== 'postgres');
  if (unknown.length) throw new Error(`--storage takes sqlite and postgres (comma-separated), got ${unknown.join(', ')}`);
  if (storages.includes('postgres')) return storageMain(data, workDir, flags.database);

  const rows = [];
  // The dataset's BM25 reference run, scored on each half the same way.
  const bm25Path = join(workDir, 'bm25-all.jsonl');
  execFileSync(process.execPath, [join(dataDir, 'bm25-baseline.mjs'), '--out', bm25Path], { encoding: 'utf8' });
  const bm25 = new Map((await readJsonl(bm25Path)).filter((r) => data.qids.has(r.query_id)).map((r) => [r.query_id, r.ranked_ids]));
  rows.push({
    chunk: 'whole doc',
    name: 'BM25 baseline (bm25-baseline.mjs, full 5k corpus)',
    tuning: await score(workDir, 'bm25', bm25, 'tuning', data),
    reporting: await score(workDir, 'bm25', bm25, 'reporting', data),
  });

  const ingests = [];
  let lat;
  // The section is rewritten after every pipeline, so a run stopped early still leaves its figures.
  for (const chunkSize of ALL_CHUNK_SIZES.filter((c) => CHUNK_SIZES.includes(c))) {
    const ctx = await ingest(data.corpus, chunkSize);
    ingests.push(ctx);
    try {
      for (const q of data.queries.slice(0, 5)) await ctx.platform.searchKnowledge(ctx.caller, { projectId: ctx.projectId, query: q.text, searchType: 'hybrid', topK: 10 });
      for (const p of pipelines()) {
        const started = performance.now();
        const { run, p50, p95 } = await runPipeline(ctx, data.queries, p.request);
        const file = `c${chunkSize}-${p.name.replace(/[^a-z0-9.]+/gi, '_')}`;
        const row = { chunk: chunkSize, name: p.label, p50, p95, tuning: await score(workDir, file, run, 'tuning', data), reporting: await score(workDir, file, run, 'reporting', data) };
        rows.push(row);
        log(
          `${chunkSize} ${p.label}: tuning nDCG@10 ${f3(row.tuning['ndcg@10'])}, reporting ${f3(row.reporting['ndcg@10'])}, p50 ${p50.toFixed(1)} ms (${((performance.now() - started) / 1000).toFixed(0)} s)`,
        );
        await record(render(data, rows, ingests, lat));
      }
      if (chunkSize === 512) {
        lat = await latency(ctx, data.queries);
        await record(render(data, rows, ingests, lat));
      }
    } finally {
      await ctx.platform.close();
    }
  }
  const section = render(data, rows, ingests, lat);
  console.log(`\n${section}\n`);
  log((await record(section)) ? 'wrote the retrieval section of docs/BENCHMARKS.md' : 'cut run: docs/BENCHMARKS.md left as it is (BENCH_RETRIEVAL_RECORD=1 to write it anyway)');
}

/** --storage ...,postgres: SQLite mode (the reused folder) and PostgreSQL mode side by side, chunk size 512. */
async function storageMain(data, workDir, database) {
  const sqlite = await ingest(data.corpus, 512);
  try {
    const result = await compareStorages(data, sqlite, 512, { database, workDir, ingestInto, runPipeline, score, log });
    const section = renderStorageSection(result, data, { date: new Date().toISOString().slice(0, 10), cores: cpus().length, cut: Boolean(DOC_LIMIT || QUERY_LIMIT) });
    console.log(`\n${section}\n`);
    const written = await record(section, '<!-- retrieval-storage:start -->', '<!-- retrieval-storage:end -->');
    log(written ? 'wrote the retrieval-storage section of docs/BENCHMARKS.md' : 'cut run: docs/BENCHMARKS.md left as it is (BENCH_RETRIEVAL_RECORD=1 to write it anyway)');
  } finally {
    await sqlite.platform.close();
  }
}

// Run when started as a script; other bench scripts import loadData and ingest (the reused data folder).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
