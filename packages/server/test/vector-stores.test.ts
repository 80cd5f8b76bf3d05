import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script of the embedding package's tests, without types.
import { makeTinyModel } from '../../adapters-embedding/test/fixtures/make-tiny-model.mjs';
import { type ChromaServer, freePort, startChromaServer } from '../../adapters-vector/test/fixtures/chroma-server.js';
import { type QdrantTestServer, startQdrantTestServer } from '../../adapters-vector/test/fixtures/qdrant-server.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// Knowledge settings that move a project to a third-party vector store, over HTTP: Qdrant through
// its official client against a test double of its REST API (Qdrant cannot run here), Chroma
// against a real Chroma server from the chromadb npm package. Loopback only.
let s: TestServer;
let qdrant: QdrantTestServer;
let chroma: ChromaServer;

beforeAll(async () => {
  [qdrant, chroma] = await Promise.all([startQdrantTestServer({ apiKey: 'qdrant-key' }), startChromaServer()]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
});
afterAll(async () => {
  await s.stop();
  await qdrant.stop();
  await chroma.dispose();
});

const project = async (name: string) => (await s.call('POST', '/api/projects/create', { body: { name, model: 'm', provider: 'openai' } })).body.project.id as string;
const settings = (projectId: string, body: Record<string, unknown>) => s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: body } });
const addDoc = (projectId: string, fileName: string, content: string) => s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName, fileType: 'md', sourceType: 'upload', content } });
const waitCompleted = async (projectId: string, count: number) => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const list = await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&status=completed`);
    if (list.body.total >= count) return;
    if (Date.now() > deadline) throw new Error(`documents not completed: ${JSON.stringify((await s.call('GET', `/api/knowledge/documents?projectId=${projectId}`)).body)}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
};

describe('choosing a vector store in the knowledge settings', () => {
  it('refuses a configuration it cannot use, naming the problem', async () => {
    const projectId = await project('refusals');
    const check = async (body: Record<string, unknown>, message: RegExp) => {
      const res = await settings(projectId, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toMatch(/^Invalid vectorstore configuration: /);
      expect(res.body.message).toMatch(message);
    };
    await check({ vectorstoreProvider: 'qdrant', vectorStoreConfig: { indexName: 'x' } }, /endpoint/);
    await check({ vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: 5, indexName: 'x' } }, /endpoint/);
    await check({ vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: qdrant.url, indexName: 'x' } }, /requires an API key|refused the API key/);
    await check({ vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: qdrant.url, indexName: 'x', apiKey: 'wrong' } }, /refused the API key \(401\)/);
    await check({ vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: `http://127.0.0.1:${await freePort()}`, indexName: 'x' } }, /could not be reached/);
    await check({ vectorstoreProvider: 'pinecone', vectorStoreConfig: { indexName: 'x' } }, /apiKey/);
    await check({ vectorstoreProvider: 'chroma', vectorStoreConfig: { endpoint: chroma.url, indexName: 'x', color: 'red' } }, /color/);
    await check({ vectorstoreProvider: 'weaviate', vectorStoreConfig: { endpoint: 'http://10.1.2.3:8080', indexName: 'X' } }, /10\.1\.2\.3/);
    await check({ vectorstoreProvider: 'weaviate', vectorStoreConfig: { endpoint: qdrant.url, grpcEndpoint: 'http://10.1.2.4:50051', indexName: 'X' } }, /10\.1\.2\.4/);
    // An index of another dimension than the project's embedder (512) is refused.
    await qdrant.stop();
    await qdrant.start();
    const small = await settings(projectId, { vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: qdrant.url, indexName: 'small', apiKey: 'qdrant-key' } });
    expect(small.status).toBe(200);
    await fetch(`${qdrant.url}/collections/other-dim`, {
      method: 'PUT',
      headers: { 'api-key': 'qdrant-key', 'content-type': 'application/json' },
      body: JSON.stringify({ vectors: { size: 8, distance: 'Cosine' } }),
    });
    await check({ vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: qdrant.url, indexName: 'other-dim', apiKey: 'qdrant-key' } }, /dimension 8, the embedding model gives 512/);
  });

  it('moves a project into Qdrant in the background; ingestion and every search type use it; an outage is a clear 503 and needs no restart', async () => {
    const projectId = await project('to qdrant');
    await addDoc(projectId, 'refunds.md', '# Refunds\n\nRefunds are paid within 30 days of a return.');
    await addDoc(projectId, 'shipping.md', '# Shipping\n\nParcels ship from Rotterdam within two working days.');
    await waitCompleted(projectId, 2);
    const config = { endpoint: qdrant.url, indexName: 'agent-platform', apiKey: 'qdrant-key' };
    const moved = await settings(projectId, { vectorstoreProvider: 'qdrant', vectorStoreConfig: config });
    expect(moved.body).toMatchObject({ success: true, message: expect.stringMatching(/re-indexing 2 documents into the qdrant store/) });
    await waitCompleted(projectId, 2);
    const collection = qdrant.collections.get('agent-platform');
    expect(collection?.points.size).toBeGreaterThanOrEqual(2);
    expect([...(collection?.points.values() ?? [])].every((p) => JSON.stringify(p).includes(projectId))).toBe(true);

    await addDoc(projectId, 'returns.md', '# Returns\n\nReturns are accepted within 60 days.');
    await waitCompleted(projectId, 3);
    for (const searchType of ['semantic', 'mrr', 'hybrid']) {
      const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'When are refunds paid?', searchType, topK: 3 } });
      expect(res.status, searchType).toBe(200);
      expect(res.body.documents[0]?.content, searchType).toContain('Refunds are paid');
    }

    await qdrant.stop();
    const down = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'refunds' } });
    expect(down.status).toBe(503);
    expect(down.body.message).toMatch(/Qdrant at .* could not be reached/i);
    expect(down.body.message).not.toContain('qdrant-key');
    const failed = await addDoc(projectId, 'down.md', '# Down\n\nWritten while the store is down.');
    expect(failed.body.status).toMatch(/failed|processing/);
    const deadline = Date.now() + 20_000;
    let doc: { status: string; error: string | null } = { status: '', error: null };
    while (Date.now() < deadline) {
      doc = (await s.call('GET', `/api/knowledge/documents/${failed.body.documentId ?? ''}`)).body.document ?? doc;
      if (failed.body.status === 'failed' || doc.status === 'failed') break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    expect(failed.body.status === 'failed' ? failed.body.message : doc.error).toMatch(/Failed to index document: .*could not be reached/i);

    await qdrant.start();
    const back = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'When are refunds paid?' } });
    expect(back.status).toBe(200);
    expect(back.body.documents[0]?.content).toContain('Refunds are paid');
  });

  it("refuses a model of another dimension than the Chroma collection the project's vectors are in, naming both, and keeps the settings", async () => {
    await makeTinyModel(join(s.dataDir, 'models', 'tiny'));
    const projectId = await project('fixed dimension');
    const store = { vectorstoreProvider: 'chroma', vectorStoreConfig: { endpoint: chroma.url, indexName: 'fixed-dimension' } };
    expect((await settings(projectId, store)).status).toBe(200);
    await addDoc(projectId, 'faq.md', '# Opening hours\n\nThe shop opens at nine and closes at six.');
    await waitCompleted(projectId, 1);
    // The collection now holds 512-dimension vectors (the built-in model's); the tiny model gives 8.
    const res = await settings(projectId, { ...store, embeddingModel: 'local:tiny' });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.message).toMatch(/^Invalid vectorstore configuration: index "fixed-dimension" has dimension 512, the embedding model gives 8/);
    const kept = (await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body;
    expect(kept.settings.embeddingModel).toBe('builtin');
    expect(kept.defaults).toContain('embeddingModel');
    const hits = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'When does the shop open?', searchType: 'semantic' } });
    expect(hits.body.documents[0]?.content).toContain('opens at nine');
  });

  it('moves a project into a real Chroma server and back to the built-in store', async () => {
    const projectId = await project('to chroma');
    await addDoc(projectId, 'faq.md', '# Opening hours\n\nThe shop opens at nine and closes at six.');
    await waitCompleted(projectId, 1);
    const moved = await settings(projectId, { vectorstoreProvider: 'chroma', vectorStoreConfig: { endpoint: chroma.url, indexName: 'agent-platform' } });
    expect(moved.body.success, JSON.stringify(moved.body)).toBe(true);
    await waitCompleted(projectId, 1);
    const hits = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'When does the shop open?', searchType: 'semantic' } });
    expect(hits.body.documents[0]?.content).toContain('opens at nine');
    const home = await settings(projectId, { vectorstoreProvider: null, vectorStoreConfig: null });
    expect(home.body.message).toMatch(/re-indexing 1 document into the default store/);
    await waitCompleted(projectId, 1);
    expect((await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'When does the shop open?' } })).body.documents[0]?.content).toContain('opens at nine');
  });
});
