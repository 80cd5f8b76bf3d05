// Overhead of the service on a chat completion: time to first token (TTFT) and total time,
// p50/p99 over sequential streaming requests, through the real server (child process) and
// directly to the same upstream, in the same run: (a) a plain model call, (b) an agent with
// 10,000 knowledge chunks (its turn embeds the question and searches first). Also whether
// streaming buffers: with the upstream sending a chunk every 20 ms, the gaps between chunks
// the client receives through the service.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { openPlatform } from '@agent-platform/server';
import { startChild } from './child.mjs';
import { startBenchUpstream } from './upstream.mjs';
import { embeddingsLike } from './vectors.mjs';

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

/** One streaming request; times of the first content chunk and of the end, and arrival times of chunks. */
async function streamOnce(url, headers, body) {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let first;
  let buffer = '';
  const arrivals = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    if (buffer.includes('"content":"word')) {
      const now = performance.now() - t0;
      first ??= now;
      arrivals.push(now);
      buffer = '';
    }
  }
  return { ttft: first, total: performance.now() - t0, arrivals };
}

async function series(n, fn) {
  for (let i = 0; i < 5; i++) await fn(); // warm-up
  const ttft = [];
  const total = [];
  for (let i = 0; i < n; i++) {
    const r = await fn();
    ttft.push(r.ttft);
    total.push(r.total);
  }
  return { ttftP50: percentile(ttft, 50), ttftP99: percentile(ttft, 99), totalP50: percentile(total, 50), totalP99: percentile(total, 99) };
}

export async function completionOverhead() {
  const n = Number(process.env.BENCH_COMPLETIONS ?? 200);
  const chunksInKnowledge = Number(process.env.BENCH_AGENT_CHUNKS ?? 10_000);
  const upstream = await startBenchUpstream({ words: 20 });
  const slow = await startBenchUpstream({ words: 10, delayMs: 20 });
  const dir = await mkdtemp(join(tmpdir(), 'ap-bench-completions-'));
  try {
    // A user, a project, and its knowledge written as the pipeline writes it (synthetic vectors).
    const platform = await openPlatform(dir);
    const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
    const { project } = await platform.createProject({ userId }, { name: 'agent', model: 'gpt-bench', provider: 'openai' });
    await platform.close();
    const storage = await sqliteStorage({ path: join(dir, 'agent-platform.db') });
    const vectors = await builtinVectorStore({ dir: join(dir, 'vectors'), approximateThreshold: Number.POSITIVE_INFINITY });
    const all = embeddingsLike(chunksInKnowledge, 512, 3);
    const now = new Date();
    for (let d = 0; d < chunksInKnowledge / 100; d++) {
      const documentId = `doc_b${d}`;
      await storage.documents.insert({ id: documentId, userId, projectId: project.id, fileId: null, fileName: `${d}.txt`, fileType: 'txt', sourceType: 'upload', status: 'completed', chunkCount: 100, vectorCount: 100, error: null, metadata: {}, createdAt: now, updatedAt: now });
      const chunks = Array.from({ length: 100 }, (_, i) => ({ id: `chunk_b${d}_${i}`, documentId, projectId: project.id, index: i, text: `Paragraph ${i} of document ${d} about topic ${(d * 7 + i) % 50}.`, tokenCount: 12, metadata: { fileName: `${d}.txt`, fileType: 'txt', chunkIndex: i } }));
      await storage.chunks.replaceForDocument(documentId, chunks);
      await vectors.upsert(`${project.id}:builtin:use-lite-512`, chunks.map((c, i) => ({ id: c.id, documentId, vector: all[d * 100 + i] })));
    }
    await vectors.close();
    await storage.close();

    const server = await startChild('ours', dir, { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' });
    const ours = `${server.url}/api/v1/chat/completions`;
    const headers = { authorization: `Bearer ${key}` };
    const ask = { messages: [{ role: 'user', content: 'What does topic 12 say?' }], stream: true };

    const direct = await series(n, () => streamOnce(`${upstream.url}/chat/completions`, {}, { model: 'gpt-bench', ...ask }));
    const plain = await series(n, () => streamOnce(ours, headers, { model: 'gpt-bench', ...ask }));
    const agent = await series(n, () => streamOnce(ours, headers, { model: project.id, ...ask }));
    await server.stop();

    // Buffering check: the upstream sends a chunk every 20 ms.
    const slowServer = await startChild('ours', dir, { OPENAI_BASE_URL: slow.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' });
    const gaps = [];
    for (let i = 0; i < 10; i++) {
      const r = await streamOnce(`${slowServer.url}/api/v1/chat/completions`, headers, { model: 'gpt-bench', ...ask });
      for (let j = 1; j < r.arrivals.length; j++) gaps.push(r.arrivals[j] - r.arrivals[j - 1]);
    }
    await slowServer.stop();

    const added = (x) => ({
      ttftP50: x.ttftP50 - direct.ttftP50,
      ttftP99: x.ttftP99 - direct.ttftP99,
      totalP50: x.totalP50 - direct.totalP50,
      totalP99: x.totalP99 - direct.totalP99,
    });
    return {
      name: `chat completion overhead (ms, ${n} sequential streaming requests each)`,
      direct,
      plain,
      agent,
      addedPlain: added(plain),
      addedAgent: added(agent),
      streamingGapsMs: { p50: percentile(gaps, 50), min: Math.min(...gaps), max: Math.max(...gaps), upstreamGap: 20 },
    };
  } finally {
    await upstream.close();
    await slow.close();
    await rm(dir, { recursive: true, force: true });
  }
}
