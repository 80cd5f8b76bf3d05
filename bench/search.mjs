// End-to-end POST /api/knowledge/search at 100,000 chunks, split into embedding the query
// (built-in model) and searching the vectors; and resident memory per 100,000 stored chunks.
// Chunks: SciFact sentences as texts, with synthetic embedding-like vectors (embedding 100k
// chunks with the built-in model would take ~2 hours here); queries: SciFact claims, embedded
// for real. The server is the real app (createApp) on the real adapters, in this process.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { builtinVectorStore, DEFAULT_APPROXIMATE_THRESHOLD } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform } from '@agent-platform/core';
import { createApp } from '@agent-platform/server';
import { serve } from 'h3';
import { embeddingsLike } from './vectors.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

export async function endToEndSearch() {
  const total = Number(process.env.BENCH_SEARCH_CHUNKS ?? 100_000);
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-search-'));
  const corpus = (await readFile(join(here, 'data/beir-scifact-5k/corpus.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  const sentences = corpus.flatMap((d) => d.text.split(/(?<=\.)\s+/)).filter((s) => s.length > 30);
  const queries = (await readFile(join(here, 'data/beir-scifact-5k/queries.jsonl'), 'utf8')).trim().split('\n').slice(0, 100).map((l) => JSON.parse(l).text);
  try {
    const storage = await sqliteStorage({ path: join(dir, 'agent-platform.db') });
    const embedder = builtinEmbedder();
    const vectors = await builtinVectorStore({ dir: join(dir, 'vectors') });
    const platform = new AgentPlatform({ storage, knowledge: { vectors, embedder, blobs: fileBlobStore({ dir: join(dir, 'files') }) } });
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const { project } = await platform.createProject({ userId }, { name: 'search', model: 'm', provider: 'openai' });
    const namespace = `${project.id}:${embedder.id}`;

    // 1,000 documents of 100 chunks each, written the way the pipeline writes them.
    const rssBefore = process.memoryUsage().rss;
    const all = embeddingsLike(total, 512, 7);
    const now = new Date();
    for (let d = 0; d < total / 100; d++) {
      const documentId = `doc_bench${String(d).padStart(5, '0')}`;
      await storage.documents.insert({
        id: documentId, userId, projectId: project.id, fileId: null, fileName: `${d}.txt`, fileType: 'txt', sourceType: 'upload',
        status: 'completed', chunkCount: 100, vectorCount: 100, error: null, metadata: {}, createdAt: now, updatedAt: now,
      });
      const chunks = Array.from({ length: 100 }, (_, i) => {
        const n = d * 100 + i;
        return { id: `chunk_b${n}`, documentId, projectId: project.id, index: i, text: sentences[n % sentences.length], tokenCount: 30, metadata: { fileName: `${d}.txt`, fileType: 'txt', chunkIndex: i } };
      });
      await storage.chunks.replaceForDocument(documentId, chunks);
      await vectors.upsert(namespace, chunks.map((c, i) => ({ id: c.id, documentId, vector: all[d * 100 + i] })));
    }
    while (total >= DEFAULT_APPROXIMATE_THRESHOLD && !vectors.isApproximate(namespace)) await new Promise((r) => setTimeout(r, 100));
    const rssAfter = process.memoryUsage().rss;

    const app = createApp(platform);
    const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
    await server.ready();
    const url = `http://127.0.0.1:${server.node.server.address().port}/api/knowledge/search`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const search = async (query, searchType) => {
      const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ projectId: project.id, query, topK: 5, searchType }) });
      if (!res.ok) throw new Error(`search answered ${res.status}`);
      await res.json();
    };
    const timeAll = async (fn) => {
      for (const q of queries.slice(0, 5)) await fn(q);
      const ms = [];
      for (const q of queries) {
        const t = performance.now();
        await fn(q);
        ms.push(performance.now() - t);
      }
      return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
    };
    const semantic = await timeAll((q) => search(q, 'semantic'));
    const hybrid = await timeAll((q) => search(q, 'hybrid'));
    const embed = await timeAll((q) => embedder.embed([q]));
    const queryVectors = await embedder.embed(queries);
    let i = 0;
    const vectorQuery = await timeAll(() => vectors.query(namespace, { vector: queryVectors[i++ % queryVectors.length], topK: 5 }));
    await server.close(true);
    await platform.close();
    return {
      name: `POST /api/knowledge/search at ${total} chunks (ms)`,
      semanticHttp: semantic,
      hybridHttp: hybrid,
      embedQuery: embed,
      vectorQuery,
      residentMBPer100kChunks: ((rssAfter - rssBefore) / 2 ** 20) * (100_000 / total),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
