// Ingestion: chunks per second end to end through HTTP (POST /api/knowledge/documents until
// every document is completed), against the raw built-in embedder embedding the same chunk
// texts in batches of 32, in the same run. Corpus: the first BENCH_INGEST_DOCS abstracts of
// BEIR SciFact (bench/data/beir-scifact-5k).
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
import { chunkDocument, parseDocument } from '@agent-platform/core';
import { openPlatform } from '@agent-platform/server';
import { startChild } from './child.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));

export async function loadCorpus(limit) {
  const lines = (await readFile(join(here, 'data/beir-scifact-5k/corpus.jsonl'), 'utf8')).trim().split('\n');
  return lines.slice(0, limit).map((line) => {
    const d = JSON.parse(line);
    return { id: d._id, text: `${d.title}\n\n${d.text}` };
  });
}


export async function ingestion() {
  const count = Number(process.env.BENCH_INGEST_DOCS ?? 300);
  const corpus = await loadCorpus(count);

  // Raw embedder on the same chunks the pipeline makes (default chunkSize 512, overlap 64).
  const texts = [];
  for (const d of corpus) {
    const parsed = await parseDocument({ bytes: new TextEncoder().encode(d.text), fileName: `${d.id}.txt` });
    for (const c of chunkDocument(parsed, { chunkSize: 512, chunkOverlap: 64 })) texts.push(c.text);
  }
  const embedder = builtinEmbedder();
  await embedder.embed(['warm up']);
  let t = performance.now();
  for (let i = 0; i < texts.length; i += 32) await embedder.embed(texts.slice(i, i + 32));
  const rawSeconds = (performance.now() - t) / 1000;
  await embedder.close();

  // The same documents through HTTP.
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-ingest-'));
  try {
    const platform = await openPlatform(dir);
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const { project } = await platform.createProject({ userId }, { name: 'ingest', model: 'm', provider: 'openai' });
    await platform.close();
    const server = await startChild('ours', dir);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // Warm the server's embedder.
    await fetch(`${server.url}/api/knowledge/search`, { method: 'POST', headers, body: JSON.stringify({ projectId: project.id, query: 'warm up' }) });
    t = performance.now();
    let next = 0;
    const post = async () => {
      while (next < corpus.length) {
        const d = corpus[next++];
        const res = await fetch(`${server.url}/api/knowledge/documents`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ projectId: project.id, fileName: `${d.id}.txt`, fileType: 'txt', sourceType: 'upload', content: d.text }),
        });
        if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, post));
    let chunks = 0;
    for (;;) {
      const list = await (await fetch(`${server.url}/api/knowledge/documents?projectId=${project.id}&status=completed&limit=1`, { headers })).json();
      if (list.total === corpus.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const httpSeconds = (performance.now() - t) / 1000;
    for (let offset = 0; offset < corpus.length; offset += 100) {
      const page = await (await fetch(`${server.url}/api/knowledge/documents?projectId=${project.id}&limit=100&offset=${offset}`, { headers })).json();
      chunks += page.documents.reduce((s, d) => s + d.chunkCount, 0);
    }
    await server.stop();
    const raw = texts.length / rawSeconds;
    const http = chunks / httpSeconds;
    return {
      name: `ingestion of ${corpus.length} SciFact abstracts (${texts.length} chunks)`,
      rawEmbedderChunksPerSec: raw,
      httpChunksPerSec: http,
      ratio: http / raw,
      target: 0.85,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
