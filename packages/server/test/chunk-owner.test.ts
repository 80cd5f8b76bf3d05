import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type QdrantTestServer, startQdrantTestServer } from '../../adapters-vector/test/fixtures/qdrant-server.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// A vector store only answers ids; the chunk texts come from storage. A user whose project points
// at a store they control can make it answer any chunk id (another user's, read off an answer's
// `sources`): every chunk read is owner-scoped, so such ids are dropped, in search and in the
// agent's context. User B's store here is a loopback Qdrant (a wire-faithful test double) into
// which B writes points naming user A's chunks.
let s: TestServer;
let qdrant: QdrantTestServer;
let upstream: FakeUpstream;

const SECRET = 'The vault combination is 7-31-4159 and the courier is named Orchid.';
let aChunkIds: string[];
let aDocumentId: string;
let bProject: string;

const project = async (key: string, name: string) => (await s.call('POST', '/api/projects/create', { key, body: { name, model: 'gpt-test', provider: 'openai' } })).body.project.id as string;
const addDoc = async (key: string, projectId: string, fileName: string, content: string) => {
  const res = await s.call('POST', '/api/knowledge/documents', { key, body: { projectId, fileName, fileType: 'md', sourceType: 'upload', content } });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  expect((await s.indexed(res.body.documentId, key)).status).toBe('completed');
  return res.body.documentId as string;
};

beforeAll(async () => {
  [qdrant, upstream] = await Promise.all([startQdrantTestServer({ apiKey: 'b-key' }), startUpstream()]);
  // User B points a project at the loopback Qdrant test server: allowed as --allow-host 127.0.0.1 does.
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });

  // User A's knowledge, in the default store.
  const aProject = await project(s.keyA, 'A');
  aDocumentId = await addDoc(s.keyA, aProject, 'vault.md', `# Vault\n\n${SECRET}`);
  const chunks = await s.call('GET', `/api/knowledge/documents/${aDocumentId}/chunks`, { key: s.keyA });
  aChunkIds = chunks.body.chunks.map((c: { id: string }) => c.id);
  expect(aChunkIds.length).toBeGreaterThan(0);

  // User B's project, in B's own Qdrant, with one document of B's.
  bProject = await project(s.keyB, 'B');
  const moved = await s.call('PUT', '/api/knowledge/settings', {
    key: s.keyB,
    // Semantic search by default (the agent's too), with a low floor: ranked by the store's answer alone.
    body: {
      projectId: bProject,
      settings: { searchType: 'semantic', minScore: 0.01, vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: qdrant.url, indexName: 'b-index', apiKey: 'b-key' } },
    },
  });
  expect(moved.status, JSON.stringify(moved.body)).toBe(200);
  await addDoc(s.keyB, bProject, 'vault-b.md', '# Vault\n\nThe vault of the bakery holds flour and sugar.');

  // B's store answers A's chunk ids: beside each of B's points, points with the same vector (so
  // the same score as B's own chunk) whose payload names A's chunks.
  const collection = qdrant.collections.get('b-index');
  if (!collection) throw new Error('no b-index collection');
  const own = [...collection.points.values()];
  expect(own.length).toBeGreaterThan(0);
  for (const point of own) {
    for (const chunkId of aChunkIds) {
      const id = randomUUID();
      collection.points.set(id, { ...point, id, payload: { ...point.payload, chunkId, documentId: aDocumentId } });
    }
  }
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await qdrant?.stop();
  await upstream?.close();
});

describe("a vector store that answers another user's chunk ids", () => {
  it("search of every type answers only the caller's chunks", async () => {
    for (const searchType of ['semantic', 'hybrid', 'mrr']) {
      const res = await s.call('POST', '/api/knowledge/search', { key: s.keyB, body: { projectId: bProject, query: 'What does the vault hold?', searchType, topK: 10 } });
      expect(res.status, searchType).toBe(200);
      const text = JSON.stringify(res.body);
      expect(text, searchType).not.toContain('7-31-4159');
      expect(text, searchType).not.toContain('Orchid');
      for (const id of aChunkIds) expect(text, searchType).not.toContain(id);
      // B's own chunk is still found: the poisoned ids were dropped, not the search.
      expect(res.body.documents.map((d: { content: string }) => d.content).join(' '), searchType).toContain('flour and sugar');
    }
  });

  it("the agent's prompt and sources hold only the caller's chunks", async () => {
    upstream.requests.length = 0;
    const res = await s.call('POST', '/api/v1/chat/completions', { key: s.keyB, body: { model: bProject, messages: [{ role: 'user', content: 'What does the vault hold?' }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const prompt = JSON.stringify(upstream.requests);
    expect(upstream.requests.length).toBeGreaterThan(0);
    expect(prompt).not.toContain('7-31-4159');
    expect(prompt).not.toContain('Orchid');
    expect(prompt).toContain('flour and sugar');
    const sources = res.body.sources as { chunkId: string; documentId: string }[];
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(aChunkIds).not.toContain(source.chunkId);
      expect(source.documentId).not.toBe(aDocumentId);
    }
    expect(JSON.stringify(res.body)).not.toContain('Orchid');
  });

  it('a chunk of another user is answered as a missing one', async () => {
    const theirs = await s.call('GET', `/api/knowledge/chunks/${aChunkIds[0]}`, { key: s.keyB });
    const missing = await s.call('GET', '/api/knowledge/chunks/chunk_doesnotexist', { key: s.keyB });
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body.message.replace(aChunkIds[0], 'ID')).toBe(missing.body.message.replace('chunk_doesnotexist', 'ID'));
    expect((await s.call('GET', `/api/knowledge/chunks/${aChunkIds[0]}`, { key: s.keyA })).body.chunk.content).toContain('Orchid');
  });
});
