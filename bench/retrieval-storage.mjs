// `pnpm bench:retrieval --storage sqlite,postgres [--database URL]`: retrieval quality on
// SQLite mode and on PostgreSQL mode in one run, on the same SciFact corpus and claims.
// - SQLite mode: the data folder of bench/retrieval.mjs (SQLite, built-in vector store, built-in
//   embedder), reused when it holds the corpus.
// - PostgreSQL mode, as the server runs it: postgresStorage (keyword index with terms computed in
//   TypeScript, BM25 in SQL), blobs in the database, a real Chroma server as the shared vector
//   store. The database is a private cluster started here the way the tests start theirs, or
//   `--database URL` (an empty database). The embedder is the same built-in model; the chunk
//   vectors SQLite mode stored are reused by text, so both modes index identical vectors and the
//   ingest takes minutes less (the query is embedded by the model).
// Each pipeline's run is scored with the dataset's score.mjs on both halves; the reporting half
// is the figure quoted (PostgreSQL within 0.01 nDCG@10 of SQLite is the target).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresStorage } from '@agent-platform/adapters-storage/postgres';
import { createChromaVectorStore } from '@agent-platform/adapters-vector/chroma';
import { AgentPlatform } from '@agent-platform/core';
import { DEFAULT_ALPHA } from '@agent-platform/core/schemas';
import { startBenchPostgres } from './postgres.mjs';
import { startChroma } from './vectors.mjs';

export const STORAGE_PIPELINES = [
  { name: 'keyword (hybrid α=0)', request: { searchType: 'hybrid', alpha: 0, topK: 100 } },
  { name: 'semantic', request: { searchType: 'semantic', topK: 100 } },
  { name: `hybrid α=${DEFAULT_ALPHA} (default)`, request: { searchType: 'hybrid', alpha: DEFAULT_ALPHA, topK: 100 } },
];

/** The SQLite context's embedder, answering texts whose vectors SQLite mode stored from them. */
async function reusingEmbedder(sqlite) {
  const { platform, parts, caller, projectId } = sqlite;
  const known = new Map();
  for (let offset = 0; ; offset += 100) {
    const page = await platform.listDocuments(caller, { projectId, limit: 100, offset });
    for (const d of page.documents) for (const [text, v] of await parts.storage.chunks.embeddingsByText(d.id, parts.embedder.id)) known.set(text, v);
    if (page.documents.length < 100) break;
  }
  const inner = parts.embedder;
  let reused = 0;
  let embedded = 0;
  const embedder = Object.create(inner, {
    embed: {
      value: async (texts, options) => {
        const missing = texts.filter((t) => !known.has(t));
        const fresh = missing.length ? await inner.embed(missing, options) : [];
        embedded += missing.length;
        reused += texts.length - missing.length;
        const made = new Map(missing.map((t, i) => [t, fresh[i]]));
        return texts.map((t) => known.get(t) ?? made.get(t));
      },
    },
  });
  return { embedder, stats: () => ({ stored: known.size, reused, embedded }) };
}

/** PostgreSQL mode on the corpus: a platform as the server's PostgreSQL mode makes it, ingested. */
async function postgresContext(sqlite, corpus, chunkSize, database, ingestInto) {
  const pg = database ? undefined : await startBenchPostgres();
  if (pg?.skipped) throw new Error(`--storage postgres: ${pg.skipped}`);
  const url = database ?? (await pg.database('bench_retrieval')).url;
  const chromaDir = await mkdtemp(join(tmpdir(), 'ap-bench-retrieval-chroma-'));
  const chroma = await startChroma(chromaDir);
  const stop = async () => {
    await chroma.stop();
    await pg?.stop();
    await rm(chromaDir, { recursive: true, force: true });
  };
  try {
    const storage = await postgresStorage({ connectionString: url });
    const { embedder, stats } = await reusingEmbedder(sqlite);
    const vectors = createChromaVectorStore({ endpoint: `http://127.0.0.1:${chroma.port}`, indexName: 'scifact' });
    const platform = new AgentPlatform({ storage, knowledge: { vectors, embedder, blobs: storage.blobs } });
    await platform.start();
    const ingested = await ingestInto(platform, corpus, chunkSize, database ? 'the given PostgreSQL database' : 'a private PostgreSQL cluster');
    return { platform, parts: { storage, embedder, vectors }, ...ingested, embeddings: stats(), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * Runs STORAGE_PIPELINES on SQLite mode and on PostgreSQL mode over the same claims; answers the
 * rows (pipeline, each mode's scores on both halves and query latency) and the PostgreSQL
 * ingest's figures. `tools` are retrieval.mjs's ingestInto, runPipeline and score.
 */
export async function compareStorages(data, sqlite, chunkSize, { database, workDir, ingestInto, runPipeline, score, log }) {
  const postgres = await postgresContext(sqlite, data.corpus, chunkSize, database, ingestInto);
  try {
    const rows = [];
    for (const p of STORAGE_PIPELINES) {
      const row = { name: p.name };
      for (const [mode, ctx] of [
        ['sqlite', sqlite],
        ['postgres', postgres],
      ]) {
        for (const q of data.queries.slice(0, 5)) await ctx.platform.searchKnowledge(ctx.caller, { projectId: ctx.projectId, query: q.text, ...p.request });
        const { run, p50, p95 } = await runPipeline(ctx, data.queries, p.request);
        const file = `storage-${mode}-${p.name.replace(/[^a-z0-9.]+/gi, '_')}`;
        row[mode] = { p50, p95, tuning: await score(workDir, file, run, 'tuning', data), reporting: await score(workDir, file, run, 'reporting', data) };
      }
      row.difference = row.postgres.reporting['ndcg@10'] - row.sqlite.reporting['ndcg@10'];
      log(
        `${p.name}: reporting nDCG@10 SQLite ${row.sqlite.reporting['ndcg@10'].toFixed(4)}, PostgreSQL ${row.postgres.reporting['ndcg@10'].toFixed(4)} (${row.difference >= 0 ? '+' : ''}${row.difference.toFixed(4)})`,
      );
      rows.push(row);
    }
    return { rows, ingest: postgres.marker, embeddings: postgres.embeddings, sqliteIngest: sqlite.marker };
  } finally {
    await postgres.platform.close();
    await postgres.stop();
  }
}

const f3 = (x) => x.toFixed(3);

/** The docs section of a comparison (between its own markers in docs/BENCHMARKS.md). */
export function renderStorageSection(result, data, meta) {
  const within = result.rows.every((r) => Math.abs(r.difference) <= 0.01);
  return [
    '<!-- retrieval-storage:start -->',
    '## retrieval on SQLite mode vs PostgreSQL mode',
    '',
    '`pnpm bench:retrieval --storage sqlite,postgres` ([bench/retrieval-storage.mjs](../bench/retrieval-storage.mjs); rewrites this section).',
    'Same corpus, same claims, same run. SQLite mode: SQLite (FTS5 over analyzed terms), the built-in vector store, the built-in',
    "embedder. PostgreSQL mode as the server runs it: `postgresStorage` (terms from the same analyzer, BM25 in SQL with FTS5's",
    'formula and statistics), blobs in the database, a real Chroma server (cosine HNSW) as the shared vector store, on a private',
    'PostgreSQL 15 cluster. The chunk vectors SQLite mode stored are reused by text for the PostgreSQL ingest (both index',
    `identical vectors; ${result.embeddings.reused} chunk texts reused, ${result.embeddings.embedded} embedded), so the keyword index and the vector store are what differ.`,
    `topK 100, chunk size ${result.ingest.chunkSize}; reporting half ${data.halves.reporting.length} claims, tuning half ${data.halves.tuning.length}.`,
    `Recorded ${meta.date}, ${meta.cores} cores (shared), Node.js ${process.versions.node}${meta.cut ? `. **Cut run**: ${data.corpus.length} documents, ${data.queries.length} queries` : ''}.`,
    '',
    '| pipeline | SQLite reporting nDCG@10 | PostgreSQL reporting nDCG@10 | difference | SQLite tuning nDCG@10 | PostgreSQL tuning nDCG@10 | query p50 SQLite / PostgreSQL (ms) |',
    '|---|---|---|---|---|---|---|',
    ...result.rows.map(
      (r) =>
        `| ${r.name} | ${f3(r.sqlite.reporting['ndcg@10'])} | ${f3(r.postgres.reporting['ndcg@10'])} | **${r.difference >= 0 ? '+' : ''}${r.difference.toFixed(4)}** | ${f3(r.sqlite.tuning['ndcg@10'])} | ${f3(r.postgres.tuning['ndcg@10'])} | ${r.sqlite.p50.toFixed(1)} / ${r.postgres.p50.toFixed(1)} |`,
    ),
    '',
    `Target: PostgreSQL within 0.01 nDCG@10 of SQLite on the reporting half: **${within ? 'met' : 'not met'}** for every pipeline.`,
    `PostgreSQL ingest (vectors reused, so no model time): ${result.ingest.docs} documents → ${result.ingest.chunks} chunks in ${result.ingest.seconds.toFixed(0)} s (${result.ingest.docsPerSec.toFixed(1)} docs/s).`,
    '<!-- retrieval-storage:end -->',
  ].join('\n');
}
