import { repeated } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';
import { startUpstream, type Upstream } from './multi-instance-helpers.js';

// Indexing shared fairly between users, over HTTP against the real server (SQLite, or PostgreSQL
// mode in the "postgres" project): one user flooding the queue with slow documents does not
// hold back another user's small one, and what one user may have queued is bounded (429 naming
// the limit, nothing written). Embeddings come from a loopback OpenAI-compatible fake that can
// hold its answers, so documents stay queued exactly as long as a test needs.

const MAX_QUEUED = 12;

let s: TestServer;
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({
    env: { ...process.env, OPENAI_BASE_URL: `${upstream.url}/fair/v1`, OPENAI_API_KEY: 'sk-test' },
    maxQueuedDocumentsPerUser: MAX_QUEUED,
    // A slow document is stopped after a second: the flood below is made of them.
    documentLimits: { timeoutMs: 1000 },
  });
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await upstream?.close();
});

async function project(key: string, name: string): Promise<string> {
  const id = (await s.call('POST', '/api/projects/create', { key, body: { name, model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id as string;
  expect((await s.call('PUT', '/api/knowledge/settings', { key, body: { projectId: id, settings: { embeddingModel: 'openai:fake-embed' } } })).status).toBe(200);
  return id;
}

/** Uploads files (name → bytes) without waiting for their indexing. */
async function upload(key: string, projectId: string, files: Record<string, Uint8Array | string>) {
  const form = new FormData();
  form.set('projectId', projectId);
  for (const [name, bytes] of Object.entries(files)) form.append('files', new Blob([bytes as BlobPart]), name);
  const res = await fetch(`${s.url}/api/knowledge/upload?wait=false`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const statuses = async (key: string, projectId: string) =>
  ((await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&limit=100`, { key })).body.documents as { status: string }[]).map((d) => d.status);
const unfinished = async (key: string, projectId: string) => (await statuses(key, projectId)).filter((x) => x === 'pending' || x === 'processing').length;

describe('fair indexing between users', () => {
  it("indexes another user's small document while one user's slow documents fill the queue", async () => {
    const flooder = await project(s.keyA, 'Flood');
    const other = await project(s.keyB, 'Small');
    // Warm, as a server in service is: reader processes started.
    const warm = await s.call('POST', '/api/knowledge/documents', { key: s.keyB, body: { projectId: other, fileName: 'warm.txt', fileType: 'txt', sourceType: 'upload', content: 'Warming up.' } });
    expect(await s.indexed(warm.body.documentId, s.keyB)).toMatchObject({ status: 'completed' });
    // Twelve documents that each keep a reader process busy for its whole time limit.
    const slow = repeated('. ', 3 * 1024 * 1024);
    for (let batch = 0; batch < 3; batch++) {
      const files = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`slow-${batch}-${i}.md`, slow]));
      expect((await upload(s.keyA, flooder, files)).status).toBe(200);
    }
    const small = await s.call('POST', '/api/knowledge/documents', {
      key: s.keyB,
      body: { projectId: other, fileName: 'small.txt', fileType: 'txt', sourceType: 'upload', content: 'Refunds within 30 days.' },
    });
    expect(await s.indexed(small.body.documentId, s.keyB)).toMatchObject({ status: 'completed', chunkCount: 1 });
    // Most of the flood is still waiting or being read: the small one did not wait for it.
    expect(await unfinished(s.keyA, flooder)).toBeGreaterThanOrEqual(6);
    // The flood itself still ends, each document failing at the time limit.
    for (let i = 0; i < 600 && (await unfinished(s.keyA, flooder)) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await statuses(s.keyA, flooder)).toEqual(Array.from({ length: 12 }, () => 'failed'));
  }, 120_000);
});

describe('the bound on what one user may have queued', () => {
  it('answers 429 naming the limit to a new document, upload, re-index or model change over it, writing nothing; other users are not affected', async () => {
    const full = await project(s.keyA, 'Full');
    const done = await project(s.keyA, 'Done');
    const earlier = await s.call('POST', '/api/knowledge/documents', {
      key: s.keyA,
      body: { projectId: done, fileName: 'done.txt', fileType: 'txt', sourceType: 'upload', content: 'Indexed before.' },
    });
    expect(await s.indexed(earlier.body.documentId)).toMatchObject({ status: 'completed' });
    // Embeddings held: what is queued now stays queued.
    upstream.held.add('fair');
    try {
      const files = Object.fromEntries(Array.from({ length: MAX_QUEUED }, (_, i) => [`q${i}.txt`, `Queued document ${i}.`]));
      const queued = await upload(s.keyA, full, files);
      expect(queued.status).toBe(200);
      expect(await statuses(s.keyA, full)).toHaveLength(MAX_QUEUED);
      const blobs = (await s.stored.blobs.keys()).length;

      const refusal = {
        success: false,
        code: 'rate_limited',
        message: expect.stringMatching(
          /^Too many documents queued for indexing: 12 of this user's are waiting or being indexed, and (one|\d+) more would pass the limit of 12 per user \(--max-queued-documents-per-user\)/,
        ),
      };
      const doc = { projectId: done, fileName: 'more.txt', fileType: 'txt', sourceType: 'upload', content: 'One more.' };
      const created = await s.call('POST', '/api/knowledge/documents', { body: doc });
      expect(created.status).toBe(429);
      expect(created.body).toMatchObject(refusal);
      expect((await s.call('POST', '/api/knowledge/documents/stream', { body: doc })).status).toBe(429);
      const uploaded = await upload(s.keyA, done, { 'one.txt': 'One.', 'two.txt': 'Two.' });
      expect(uploaded.status).toBe(429);
      expect(uploaded.body.message).toMatch(/and 2 more would pass the limit of 12 per user/);
      const reindexed = await s.call('POST', '/api/knowledge/reindex', { body: { projectId: done } });
      expect(reindexed.status).toBe(429);
      expect(reindexed.body).toMatchObject(refusal);
      // A new embedding model re-indexes the project: refused as a whole, the settings unchanged.
      const moved = await s.call('PUT', '/api/knowledge/settings', { body: { projectId: done, settings: { embeddingModel: 'openai:other-embed' } } });
      expect(moved.status).toBe(429);
      expect((await s.call('GET', `/api/knowledge/settings?projectId=${done}`)).body.settings.embeddingModel).toBe('openai:fake-embed');
      // Nothing of them was written.
      expect(await statuses(s.keyA, done)).toEqual(['completed']);
      expect(await statuses(s.keyA, full)).toHaveLength(MAX_QUEUED);
      expect((await s.stored.blobs.keys()).length).toBe(blobs);
      // Re-indexing documents already queued replaces their jobs: still within the limit.
      expect((await s.call('POST', '/api/knowledge/reindex', { body: { projectId: full } })).status).toBe(202);
      // Another user queues as usual.
      const mine = await project(s.keyB, 'Mine');
      expect((await upload(s.keyB, mine, { 'b.txt': 'Bananas.' })).status).toBe(200);
    } finally {
      upstream.release('fair');
    }
    for (let i = 0; i < 600 && (await unfinished(s.keyA, full)) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await statuses(s.keyA, full)).toEqual(Array.from({ length: MAX_QUEUED }, () => 'completed'));
    const again = await s.call('POST', '/api/knowledge/documents', { body: { projectId: done, fileName: 'again.txt', fileType: 'txt', sourceType: 'upload', content: 'Room again.' } });
    expect(again.status).toBe(200);
  }, 120_000);
});
