import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type EmbeddingModel } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { bagOfWords } from './helpers.js';

/**
 * A hashed bag-of-words embedder whose calls can be held until released (except the calls
 * `passes` lets through): lets a test act while a document is being embedded. (The real
 * built-in model is exercised in the HTTP tests.)
 */
function gatedEmbedder(id = 'test:bow') {
  let gate: Promise<void> = Promise.resolve();
  let open: () => void = () => {};
  let passes: (texts: readonly string[]) => boolean = () => false;
  const calls: string[][] = [];
  const model: EmbeddingModel & { hold(passes?: (texts: readonly string[]) => boolean): void; release(): void; calls: string[][] } = {
    id,
    dimensions: 32,
    calls,
    hold(except = () => false) {
      passes = except;
      gate = new Promise((r) => {
        open = r;
      });
    },
    release() {
      open();
    },
    async embed(texts) {
      calls.push([...texts]);
      if (!passes(texts)) await gate;
      return texts.map((t) => bagOfWords(t, 32));
    },
  };
  return model;
}

async function setup(embedder: EmbeddingModel | ((name: string | undefined) => EmbeddingModel)) {
  const vectors = await builtinVectorStore();
  const platform = new AgentPlatform({ storage: memoryStorage(), knowledge: { vectors, embedder, waitMs: 50 } });
  const { userId, key } = await platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
  // Documents are read by child processes: the first one waits for a process to start (seconds
  // on a busy machine), so completion is awaited, never assumed after createDocument's wait.
  const waitForStatus = async (documentId: string, status: string) => {
    for (let i = 0; i < 3000; i++) {
      if ((await platform.getDocument(me, documentId)).document.status === status) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`document ${documentId} never became ${status}`);
  };
  return { platform, me, key, projectId: project.id, vectors, waitForStatus };
}

const doc = (projectId: string, content: string) => ({ projectId, fileName: 'a.txt', fileType: 'txt', sourceType: 'upload', content });

describe('knowledge lifecycle', () => {
  it('answers processing when indexing outlasts the wait, and completes in the background', async () => {
    const embedder = gatedEmbedder();
    const { platform, me, projectId, waitForStatus } = await setup(embedder);
    embedder.hold();
    const res = await platform.createDocument(me, doc(projectId, 'slow text'));
    expect(res).toMatchObject({ success: true, status: 'processing', documentId: expect.any(String) });
    embedder.release();
    await waitForStatus(res.documentId as string, 'completed');
  });

  it('deleting a document while it is being embedded leaves no chunks and no vectors', async () => {
    const embedder = gatedEmbedder();
    const { platform, me, projectId, waitForStatus } = await setup(embedder);
    embedder.hold();
    const res = await platform.createDocument(me, doc(projectId, 'to be deleted mid-way'));
    await waitForStatus(res.documentId as string, 'processing');
    await platform.deleteDocument(me, res.documentId as string);
    embedder.release();
    await new Promise((r) => setTimeout(r, 100));
    expect(await platform.countVectors(me, projectId)).toBe(0);
    expect(await platform.storage.chunks.listByDocument(res.documentId as string)).toEqual([]);
    await expect(platform.getDocument(me, res.documentId as string)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('deleting a project drops its vectors', async () => {
    const { platform, me, projectId, vectors, waitForStatus } = await setup(gatedEmbedder());
    const created = await platform.createDocument(me, doc(projectId, 'some text to index'));
    await waitForStatus(created.documentId as string, 'completed');
    expect(await platform.countVectors(me, projectId)).toBe(1);
    await platform.deleteProject(me, projectId);
    expect(await vectors.count(`${projectId}:test:bow`)).toBe(0);
  });

  it('changing the embedding model re-indexes every document with the new model', async () => {
    const models = { a: gatedEmbedder('test:a'), b: gatedEmbedder('test:b') };
    const { platform, me, projectId, vectors, waitForStatus } = await setup((name) => (name === 'b' ? models.b : models.a));
    const first = await platform.createDocument(me, doc(projectId, 'alpha text'));
    const second = await platform.createDocument(me, doc(projectId, 'beta text'));
    for (const created of [first, second]) await waitForStatus(created.documentId as string, 'completed');
    expect(await vectors.count(`${projectId}:test:a`)).toBe(2);
    models.b.hold();
    const res = await platform.putKnowledgeSettings(me, { projectId, settings: { embeddingModel: 'b' } });
    expect(res.message).toMatch(/re-indexing 2 documents with test:b/);
    expect((await platform.getDocument(me, first.documentId as string)).document.status).not.toBe('completed');
    models.b.release();
    await waitForStatus(first.documentId as string, 'completed');
    await waitForStatus(second.documentId as string, 'completed');
    expect(await vectors.count(`${projectId}:test:b`)).toBe(2);
    expect(await vectors.count(`${projectId}:test:a`)).toBe(0);
    const hits = await platform.searchKnowledge(me, { projectId, query: 'beta' });
    expect(hits.documents[0]?.content).toBe('beta text');
  });

  it('POST /api/knowledge/search answers while the project is re-indexed for a new embedding model, and from the new model after', async () => {
    const models = { a: gatedEmbedder('test:a'), b: gatedEmbedder('test:b') };
    const { platform, me, key, projectId, vectors, waitForStatus } = await setup((name) => (name === 'b' ? models.b : models.a));
    const app = createApp(platform);
    const search = async (query: string, searchType: string) => {
      const res = await app.request('/api/knowledge/search', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ projectId, query, searchType }),
      });
      return { status: res.status, body: (await res.json()) as { success: boolean; documents: { content: string }[] } };
    };
    const refunds = await platform.createDocument(me, doc(projectId, 'Refunds are paid within thirty days'));
    const shipping = await platform.createDocument(me, doc(projectId, 'Parcels ship from Rotterdam'));
    for (const created of [refunds, shipping]) await waitForStatus(created.documentId as string, 'completed');
    // Only the documents' texts wait; the queries' embeddings go through.
    models.b.hold((texts) => texts.length === 1 && /^(parcels rotterdam|refunds)$/.test(texts[0] as string));
    const queriesOfA = models.a.calls.length;
    await platform.putKnowledgeSettings(me, { projectId, settings: { embeddingModel: 'b' } });
    for (const id of [refunds.documentId, shipping.documentId]) expect((await platform.getDocument(me, id as string)).document.status).not.toBe('completed');

    // Meanwhile: the vectors of the new model are not written yet, so the semantic side has no
    // hit; the keyword side of hybrid still finds the chunk rows.
    const semantic = await search('parcels rotterdam', 'semantic');
    expect(semantic).toMatchObject({ status: 200, body: { success: true, documents: [] } });
    const hybrid = await search('parcels rotterdam', 'hybrid');
    expect(hybrid.status).toBe(200);
    expect(hybrid.body.documents.map((d) => d.content)).toEqual(['Parcels ship from Rotterdam']);
    expect((await search('refunds', 'mrr')).status).toBe(200);

    models.b.release();
    await waitForStatus(refunds.documentId as string, 'completed');
    await waitForStatus(shipping.documentId as string, 'completed');
    expect(await vectors.count(`${projectId}:test:b`)).toBe(2);
    expect(await vectors.count(`${projectId}:test:a`)).toBe(0);
    for (const searchType of ['semantic', 'hybrid', 'mrr']) {
      const after = await search('parcels rotterdam', searchType);
      expect(after.status).toBe(200);
      expect(after.body.documents[0]?.content, searchType).toBe('Parcels ship from Rotterdam');
      expect((await search('refunds', searchType)).body.documents[0]?.content, searchType).toBe('Refunds are paid within thirty days');
    }
    // The queries were embedded by the new model only.
    expect(models.a.calls.length).toBe(queriesOfA);
    expect(models.b.calls).toContainEqual(['parcels rotterdam']);
  });

  it('without a knowledge configuration, knowledge calls answer unsupported', async () => {
    const platform = new AgentPlatform({ storage: memoryStorage() });
    const { userId } = await platform.createUserWithKey({ name: 't' });
    await expect(platform.searchKnowledge({ userId }, { projectId: 'p', query: 'x' })).rejects.toMatchObject({ code: 'unsupported' });
  });
});
