// End-to-end POST /api/knowledge/search at 100,000 chunks, split into embedding the query
// (built-in model) and searching the vectors; and resident memory per 100,000 stored chunks.
// Chunks: SciFact sentences as texts, with synthetic embedding-like vectors (embedding 100k
// chunks with the built-in model would take ~2 hours here); queries: SciFact claims, embedded
// for real. The server is the real app (createApp) on the real adapters, in this process:
// SQLite and the built-in store, or PostgreSQL and Chroma (PostgreSQL mode's shared store), or
// both side by side, query by query (BENCH_STORAGE, bench/modes.mjs). BENCH_SEARCH_CHUNKS (100,000)
// and BENCH_SEARCH_CHUNKS_PER_DOCUMENT (100) set the size: 1,000 documents by default.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import { DEFAULT_APPROXIMATE_THRESHOLD } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform } from '@agent-platform/core';
import { createApp } from '@agent-platform/server';
import { serve } from 'h3';
import { percentile } from './load.mjs';
import { withStorageModes } from './modes.mjs';
import { embeddingsLike } from './vectors.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

/**
 * One mode's platform for the entry, in this process: the mode's storage and vector store, the
 * built-in embedder, a user and a project with `total` chunks written as the pipeline writes
 * them, and the real app serving it on loopback.
 */
async function serveMode(mode, total, perDocument, sentences) {
  const { storage, vectors } = await mode.openStores();
  const embedder = builtinEmbedder();
  const platform = new AgentPlatform({ storage, knowledge: { vectors, embedder, blobs: fileBlobStore({ dir: join(mode.dir, 'files') }) } });
  const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
  const { project } = await platform.createProject({ userId }, { name: 'search', model: 'm', provider: 'openai' });
  const namespace = `${project.id}:${embedder.id}`;

  // total / perDocument documents of perDocument chunks each, written the way the pipeline writes them.
  const rssBefore = process.memoryUsage().rss;
  const all = embeddingsLike(total, 512, 7);
  const now = new Date();
  for (let d = 0; d < total / perDocument; d++) {
    const documentId = `doc_bench${String(d).padStart(5, '0')}`;
    await storage.documents.insert({
      id: documentId,
      userId,
      projectId: project.id,
      fileId: null,
      sourceKey: documentId,
      fileName: `${d}.txt`,
      fileType: 'txt',
      sourceType: 'upload',
      status: 'completed',
      chunkCount: perDocument,
      vectorCount: perDocument,
      error: null,
      metadata: {},
      createdAt: now,
      updatedAt: now,
    });
    const chunks = Array.from({ length: perDocument }, (_, i) => {
      const n = d * perDocument + i;
      return {
        id: `chunk_b${n}`,
        documentId,
        projectId: project.id,
        index: i,
        text: sentences[n % sentences.length],
        tokenCount: 30,
        metadata: { fileName: `${d}.txt`, fileType: 'txt', chunkIndex: i },
      };
    });
    await storage.chunks.replaceForDocument(documentId, chunks);
    await vectors.upsert(
      namespace,
      chunks.map((c, i) => ({ id: c.id, documentId, vector: all[d * perDocument + i] })),
    );
  }
  // The built-in store builds its HNSW graph in the background from DEFAULT_APPROXIMATE_THRESHOLD vectors.
  while (total >= DEFAULT_APPROXIMATE_THRESHOLD && vectors.isApproximate && !vectors.isApproximate(namespace)) await new Promise((r) => setTimeout(r, 100));
  const rssAfter = process.memoryUsage().rss;

  const server = serve(createApp(platform), { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  const url = `http://127.0.0.1:${server.node.server.address().port}/api/knowledge/search`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const search = async (query, searchType) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ projectId: project.id, query, topK: 5, searchType }) });
    if (!res.ok) throw new Error(`search answered ${res.status}`);
    await res.json();
  };
  const close = async () => {
    await server.close(true);
    await platform.close();
  };
  return { mode, embedder, vectors, namespace, search, close, residentMB: (rssAfter - rssBefore) / 2 ** 20 };
}

export async function endToEndSearch() {
  const total = Number(process.env.BENCH_SEARCH_CHUNKS ?? 100_000);
  const perDocument = Number(process.env.BENCH_SEARCH_CHUNKS_PER_DOCUMENT ?? 100);
  const corpus = (await readFile(join(here, 'data/beir-scifact-5k/corpus.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const sentences = corpus.flatMap((d) => d.text.split(/(?<=\.)\s+/)).filter((s) => s.length > 30);
  const queries = (await readFile(join(here, 'data/beir-scifact-5k/queries.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .slice(0, 100)
    .map((l) => JSON.parse(l).text);
  return withStorageModes('search', async (modes) => {
    const served = [];
    try {
      for (const mode of modes) served.push(await serveMode(mode, total, perDocument, sentences));
      /** p50/p99 of `fn(side, query)` per side, over the queries after 5 for warm-up; with several sides, query by query in turn. */
      const timeAll = async (fn) => {
        for (const q of queries.slice(0, 5)) for (const side of served) await fn(side, q);
        const ms = served.map(() => []);
        for (const q of queries) {
          for (const [i, side] of served.entries()) {
            const t = performance.now();
            await fn(side, q);
            ms[i].push(performance.now() - t);
          }
        }
        return ms.map((xs) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99) }));
      };
      const semantic = await timeAll((side, q) => side.search(q, 'semantic'));
      const hybrid = await timeAll((side, q) => side.search(q, 'hybrid'));
      const embed = await timeAll((side, q) => side.embedder.embed([q]));
      const queryVectors = await served[0].embedder.embed(queries);
      const next = served.map(() => 0);
      const vectorQuery = await timeAll((side) => {
        const i = served.indexOf(side);
        return side.vectors.query(side.namespace, { vector: queryVectors[next[i]++ % queryVectors.length], topK: 5 });
      });
      const figures = served.map((side, i) => ({
        semanticHttp: semantic[i],
        // The figure: what a semantic search adds to embedding its query (p50s of one run).
        semanticMinusEmbeddingP50: semantic[i].p50 - embed[i].p50,
        hybridHttp: hybrid[i],
        embedQuery: embed[i],
        vectorQuery: vectorQuery[i],
        // This process's growth: the built-in store's vectors and graph in SQLite mode; in PostgreSQL mode they live in Chroma's process.
        residentMBPer100kChunks: side.residentMB * (100_000 / total),
      }));
      return {
        name: `POST /api/knowledge/search at ${total} chunks in ${total / perDocument} documents (ms; ${modes.map((m) => m.label).join(' and ')})`,
        // One mode: as before BENCH_STORAGE; both: per mode.
        ...(figures.length === 1 ? figures[0] : { modes: Object.fromEntries(served.map((side, i) => [side.mode.label, figures[i]])) }),
      };
    } finally {
      for (const side of served) await side.close();
    }
  });
}
