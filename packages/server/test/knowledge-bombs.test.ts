import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type EmbeddingModel } from '@agent-platform/core';
import { type HostileDocument, hostileDocuments, manyPagesPdf } from '@agent-platform/core/testing';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { DOCUMENT_LIMIT_HINTS } from '../src/document-limits.js';
import { bagOfWords, startTestServer } from './helpers.js';

// The documents of the security review that stopped or froze the server, over HTTP, against a
// real HTTP server in this process: each ends in the state it should, other documents indexed
// at the same time complete, and GET /health keeps answering throughout (probed every 20 ms).
// The server runs the real knowledge pipeline (SQLite, the built-in store, reader processes
// with the default limits and the server's flag names) with a bag-of-words embedder, because
// the documents that complete make thousands of chunks, which the built-in model would take
// minutes to embed. The real server's wiring of the limits is the last test.

const fastEmbedder: EmbeddingModel = { id: 'test:bow', dimensions: 64, embed: async (texts) => texts.map((t) => bagOfWords(t, 64)) };

let dir: string;
let platform: AgentPlatform;
let url: string;
let key: string;
let projectId: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-bombs-'));
  platform = new AgentPlatform({
    storage: await sqliteStorage({ path: join(dir, 'agent-platform.db') }),
    knowledge: { vectors: await builtinVectorStore(), embedder: fastEmbedder, limitHints: DOCUMENT_LIMIT_HINTS, waitMs: 100 },
  });
  key = (await platform.createUserWithKey({ name: 'bombs' })).key;
  const server = serve(createApp(platform), { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  const address = server.node?.server?.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  stop = async () => {
    await server.close(true);
    await platform.close();
  };
  projectId = (await call('POST', '/api/projects/create', { name: 'bombs', model: 'm', provider: 'openai' })).project.id;
  // Warm, as a server in service is (a reader process started): latency is then the bombs'.
  await indexed(await postText('warm.txt', 'Warming up.'));
}, 120_000);
afterAll(async () => {
  await stop();
  await rm(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return res.json();
}

async function postText(fileName: string, content: string): Promise<string> {
  const res = await call('POST', '/api/knowledge/documents', { projectId, fileName, fileType: fileName.split('.').pop(), sourceType: 'upload', content });
  return res.documentId ?? (await call('GET', `/api/knowledge/documents?projectId=${projectId}&limit=1`)).documents[0].id;
}

async function upload(fileName: string, bytes: Uint8Array): Promise<string> {
  const form = new FormData();
  form.append('projectId', projectId);
  form.append('files', new Blob([Buffer.from(bytes)]), fileName);
  const res = await fetch(`${url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as { files: { documentId: string }[] };
  return body.files[0]?.documentId as string;
}

/** The document once its indexing has ended. */
async function indexed(documentId: string): Promise<{ status: string; error: string | null; chunkCount: number }> {
  for (let i = 0; i < 2400; i++) {
    const { document } = await call('GET', `/api/knowledge/documents/${documentId}`);
    if (document.status === 'completed' || document.status === 'failed') return document;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`document ${documentId} still not indexed`);
}

/**
 * Probes GET /health every ~20 ms while `during` runs (and for at least a second); resolves
 * with `during`'s result and the probes' latencies in ms.
 */
async function probingHealth<T>(during: () => Promise<T>): Promise<{ result: T; latencies: number[] }> {
  const latencies: number[] = [];
  let done = false;
  const until = performance.now() + 1000;
  const probes = (async () => {
    while (!done || performance.now() < until) {
      const started = performance.now();
      const res = await fetch(`${url}/health`);
      await res.text();
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await during(), latencies };
  } finally {
    done = true;
    await probes;
  }
}

/**
 * /health kept answering: the typical probe within 100 ms and none over a second. Parsing one of
 * these bombs on the main thread blocked it for 5 s to 20 min; a shared 2-core machine running the
 * rest of the suite beside the readers' processes has scheduler blips of 100-200 ms that are not
 * the server's, so the tail is bounded at a second here and the 100 ms p95 target is measured by
 * the benchmark, not asserted in a test.
 */
function expectResponsive(latencies: number[]) {
  expect(latencies.length).toBeGreaterThan(5);
  const sorted = [...latencies].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] as number;
  const detail = `${sorted.length} probes (slowest: ${sorted.slice(-5).map(Math.round).join(', ')} ms)`;
  expect(median, `median of ${detail}`).toBeLessThan(100);
  expect(sorted.at(-1), `slowest of ${detail}`).toBeLessThan(1000);
}

/** How each of the shared hostile documents (core/testing; bench/hostile.mjs posts the same) must end. */
const outcomes: Record<string, { status: string; error?: string; minChunks?: number }> = {
  'bomb.docx': { status: 'failed', error: 'Failed to index document: the DOCX unpacks to 104858499 bytes, over the limit of 67108864 (--max-document-unzipped)' },
  'liar.docx': { status: 'failed', error: 'Failed to index document: the DOCX unpacks to more than 67108864 bytes, over the limit of 67108864 (--max-document-unzipped)' },
  'deep.docx': { status: 'failed', error: 'Failed to index document: the DOCX part word/document.xml nests elements 513 deep, over the limit of 512 (--max-document-nesting)' },
  'pages.pdf': { status: 'failed', error: 'Failed to index document: the PDF has 100000 pages, over the limit of 2000 (--max-document-pages)' },
  'divs.html': { status: 'failed', error: 'Failed to index document: the HTML nests elements 513 deep, over the limit of 512 (--max-document-nesting)' },
  'headings.md': { status: 'completed', minChunks: 1000 },
  'dots.md': { status: 'completed', minChunks: 1000 },
  'hashes.md': { status: 'completed', minChunks: 1000 },
  // 6 million characters without whitespace: "Maximum call stack size exceeded" before the long
  // runs were found in one pass; a run is cut every 512 characters, so about 11,700 chunks.
  'word.txt': { status: 'completed', minChunks: 10_000 },
  'zeros.txt': { status: 'completed', minChunks: 10_000 },
  'bundle.md': { status: 'completed', minChunks: 10_000 },
};
const bombs = hostileDocuments.map((d): [string, HostileDocument] => [d.name, d]);

describe('hostile documents over HTTP', () => {
  it.each(bombs)(
    '%s: ends as it should, another document completes meanwhile, /health answers throughout',
    async (_name, { make, fileName, text: asText }) => {
      const outcome = outcomes[fileName];
      if (!outcome) throw new Error(`no outcome for ${fileName}`);
      const bytes = make();
      const text = asText ? new TextDecoder().decode(bytes) : undefined;
      const { result, latencies } = await probingHealth(async () => {
        const bomb = text === undefined ? await upload(fileName, bytes) : await postText(fileName, text);
        const other = await postText('other.md', '# Refunds\n\nCustomers can ask for a refund within 30 days.');
        return { bomb: await indexed(bomb), other: await indexed(other) };
      });
      expect(result.bomb).toMatchObject({ status: outcome.status, error: outcome.error ?? null });
      if (outcome.minChunks) expect(result.bomb.chunkCount).toBeGreaterThan(outcome.minChunks);
      expect(result.other).toMatchObject({ status: 'completed', chunkCount: 1 });
      expectResponsive(latencies);
    },
    180_000,
  );
});

describe('the server', () => {
  it('applies its document limits (flags, env) and names the flag in the error', async () => {
    const s = await startTestServer({ documentLimits: { maxPages: 10 } });
    try {
      const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'm', provider: 'openai' } })).body.project.id;
      const form = new FormData();
      form.append('projectId', projectId);
      form.append('files', new Blob([Buffer.from(manyPagesPdf(50))]), 'fifty.pdf');
      const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: form });
      const documentId = ((await res.json()) as { files: { documentId: string }[] }).files[0]?.documentId as string;
      expect(await s.indexed(documentId)).toMatchObject({ status: 'failed', error: 'Failed to index document: the PDF has 50 pages, over the limit of 10 (--max-document-pages)' });
    } finally {
      await s.stop();
    }
  }, 120_000);
});
