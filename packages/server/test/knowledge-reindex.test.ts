import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type BlobStore, type EmbeddingModel, type StorageAdapter, type VectorStore } from '@agent-platform/core';
import { describe, expect, it } from 'vitest';
import { bagOfWords } from './helpers.js';

// Re-indexing reuses the vectors kept with the chunk rows: only text the current model has not
// embedded yet goes to the embedder, sorted by length.

/** A hashed bag-of-words embedder that records the texts of each call. */
function recordingEmbedder(id: string): EmbeddingModel & { calls: string[][]; embedded(): string[] } {
  const dimensions = 256;
  const calls: string[][] = [];
  return {
    id,
    dimensions,
    calls,
    embedded: () => calls.flat(),
    async embed(texts) {
      calls.push([...texts]);
      return texts.map((t) => bagOfWords(t, dimensions));
    },
  };
}

/** Paragraphs of made-up words (each word used once), of lengths in no order. */
function paragraphs(prefix: string, count: number): string {
  const lengths = [3, 17, 6, 22, 9, 1, 14, 4, 19, 11];
  const paragraph = (i: number) => Array.from({ length: lengths[i % lengths.length] as number }, (_, j) => `${prefix}${i}w${j}`).join(' ');
  return Array.from({ length: count }, (_, i) => `${paragraph(i)}.`).join('\n\n');
}

async function setup(options: { models?: Record<string, EmbeddingModel>; storage?: StorageAdapter; blobs?: BlobStore } = {}) {
  const models = options.models ?? { builtin: recordingEmbedder('test:a') };
  const vectors = await builtinVectorStore();
  const second = await builtinVectorStore();
  const storage = options.storage ?? (await sqliteStorage({ path: ':memory:' }));
  const platform = new AgentPlatform({
    storage,
    knowledge: {
      vectors,
      // Any provider is a second built-in store: the test is about moving, not about Qdrant.
      vectorStores: () => second,
      embedder: (name) => models[name ?? 'builtin'] as EmbeddingModel,
      waitMs: 10_000,
      ...(options.blobs ? { blobs: options.blobs } : {}),
    },
  });
  const { userId } = await platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
  const projectId = project.id;
  const add = async (fileName: string, content: string) => {
    const res = await platform.createDocument(me, { projectId, fileName, fileType: 'md', sourceType: 'upload', content });
    return res.documentId as string;
  };
  const allCompleted = async () => {
    for (let i = 0; i < 500; i++) {
      const { documents } = await platform.listDocuments(me, { projectId, limit: 100 });
      if (documents.every((d) => d.status === 'completed')) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the documents were never all completed');
  };
  const chunkTexts = async (...documentIds: string[]) =>
    (await Promise.all(documentIds.map((id) => platform.storage.chunks.listByDocument(id)))).flat().map((c) => c.text);
  const search = async (query: string, searchType: 'semantic' | 'hybrid' = 'semantic') =>
    (await platform.searchKnowledge(me, { projectId, query, topK: 3, searchType })).documents;
  const count = (store: VectorStore, model: EmbeddingModel) => store.count(`${projectId}:${model.id}`);
  return { platform, me, projectId, models, vectors, second, add, allCompleted, chunkTexts, search, count };
}

const moveToSecondStore = { vectorstoreProvider: 'qdrant', vectorStoreConfig: { indexName: 'second' } } as const;

describe('re-indexing a project', () => {
  it('indexes posted text from memory and reads the kept source back only to index it again', async () => {
    const stored = new Map<string, Uint8Array>();
    const reads: string[] = [];
    const blobs: BlobStore = {
      put: async (key, bytes) => void stored.set(key, new Uint8Array(bytes)),
      get: async (key) => {
        reads.push(key);
        return stored.get(key);
      },
      delete: async (key) => stored.delete(key),
    };
    const models = { builtin: recordingEmbedder('test:a'), b: recordingEmbedder('test:b') };
    const { platform, me, projectId, add, allCompleted, chunkTexts } = await setup({ models, blobs });
    const docs = [await add('one.md', paragraphs('one', 3)), await add('two.md', 'Refunds are paid within 30 days.')];
    await allCompleted();
    expect(reads).toEqual([]); // written once, for later re-indexing, never read back
    expect([...stored.keys()].sort()).toEqual([...docs].sort());

    await platform.putKnowledgeSettings(me, { projectId, settings: { embeddingModel: 'b' } });
    await allCompleted();
    expect([...reads].sort()).toEqual([...docs].sort());
    expect(await chunkTexts(docs[1] as string)).toEqual(['Refunds are paid within 30 days.']);
  });

  it('moving a project to another vector store re-indexes it without embedding a chunk, and search finds its documents there', async () => {
    const { platform, me, projectId, models, vectors, second, add, allCompleted, chunkTexts, search, count } = await setup();
    const model = models.builtin as ReturnType<typeof recordingEmbedder>;
    const settings = { chunkSize: 24, chunkOverlap: 0 };
    await platform.putKnowledgeSettings(me, { projectId, settings });
    const docs = [await add('one.md', paragraphs('one', 12)), await add('two.md', paragraphs('two', 7)), await add('three.md', '# Refunds\n\nRefunds are paid within 30 days.')];
    const texts = await chunkTexts(...docs);
    expect(texts.length).toBeGreaterThan(10);
    expect(await count(vectors, model)).toBe(texts.length);

    model.calls.length = 0;
    const res = await platform.putKnowledgeSettings(me, { projectId, settings: { ...settings, ...moveToSecondStore } });
    expect(res.message).toMatch(/re-indexing 3 documents into the qdrant store/);
    await allCompleted();
    expect(model.calls).toEqual([]);
    expect(await count(second, model)).toBe(texts.length);
    expect(await count(vectors, model)).toBe(0);
    expect((await chunkTexts(...docs)).sort()).toEqual([...texts].sort());

    const hits = await search('Refunds are paid within 30 days.');
    expect(hits[0]).toMatchObject({ content: '# Refunds\n\nRefunds are paid within 30 days.', metadata: { documentId: docs[2] } });
    for (const text of [texts[1] as string, texts[texts.length - 2] as string]) expect((await search(text))[0]?.content).toBe(text);
  });

  it('changing the embedding model embeds every chunk once with the new model, none with the old one', async () => {
    const models = { builtin: recordingEmbedder('test:a'), b: recordingEmbedder('test:b') };
    const { platform, me, projectId, add, allCompleted, chunkTexts, search, count, vectors } = await setup({ models });
    const settings = { chunkSize: 24, chunkOverlap: 0 };
    await platform.putKnowledgeSettings(me, { projectId, settings });
    const docs = [await add('one.md', paragraphs('one', 12)), await add('two.md', paragraphs('two', 7))];
    const texts = await chunkTexts(...docs);
    models.builtin.calls.length = 0;

    await platform.putKnowledgeSettings(me, { projectId, settings: { ...settings, embeddingModel: 'b' } });
    await allCompleted();
    expect(models.builtin.calls).toEqual([]);
    expect(models.b.embedded().sort()).toEqual([...texts].sort());
    expect(await count(vectors, models.b)).toBe(texts.length);
    expect(await count(vectors, models.builtin)).toBe(0);
    const text = texts[3] as string;
    expect((await search(text))[0]?.content).toBe(text);
    expect(models.b.calls.at(-1)).toEqual([text]);
  });

  it('sends the texts to embed sorted by length, batch by batch, and gives each chunk its own vector', async () => {
    const { platform, me, projectId, models, add, search } = await setup();
    const model = models.builtin as ReturnType<typeof recordingEmbedder>;
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 16, chunkOverlap: 0 } });
    const documentId = await add('long.md', paragraphs('long', 80));
    const chunks = await platform.storage.chunks.listByDocument(documentId);
    const lengths = chunks.map((c) => c.text.length);
    expect(lengths).not.toEqual([...lengths].sort((a, b) => a - b)); // the document's order is not by length

    expect(model.calls.length).toBeGreaterThan(1);
    expect(model.calls.every((call) => call.length <= 32)).toBe(true);
    const sent = model.embedded().map((t) => t.length);
    expect(sent).toEqual([...sent].sort((a, b) => a - b));
    expect(model.embedded().sort()).toEqual(chunks.map((c) => c.text).sort());

    // Each chunk's vector is its own text's, in storage and in the vector store.
    const stored = await platform.storage.chunks.embeddingsByText(documentId, model.id);
    for (const c of chunks) expect(stored.get(c.text)).toEqual((await model.embed([c.text]))[0]);
    for (const c of [chunks[0], chunks[5], chunks[chunks.length - 1]]) {
      expect((await search(c?.text as string))[0]).toMatchObject({ id: c?.id, content: c?.text });
    }
  });

  it('re-indexing after a chunk size change embeds only the chunks whose text changed', async () => {
    const { platform, me, projectId, models, add, allCompleted, chunkTexts, search } = await setup();
    const model = models.builtin as ReturnType<typeof recordingEmbedder>;
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 512, chunkOverlap: 0 } });
    const content = `# Short\n\nA short section kept whole.\n\n# Long\n\n${paragraphs('long', 10)}\n\n# Also short\n\nAnother short one.`;
    const documentId = await add('doc.md', content);
    const before = await chunkTexts(documentId);
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 24, chunkOverlap: 0 } }); // applies to the next indexing
    model.calls.length = 0;

    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 24, chunkOverlap: 0, ...moveToSecondStore } });
    await allCompleted();
    const after = await chunkTexts(documentId);
    const kept = after.filter((t) => before.includes(t));
    expect(kept).toEqual(['# Short\n\nA short section kept whole.', '# Also short\n\nAnother short one.']);
    expect(model.embedded().sort()).toEqual(after.filter((t) => !before.includes(t)).sort());
    expect(model.embedded().length).toBeGreaterThan(2);
    for (const text of [kept[0] as string, after[2] as string]) expect((await search(text))[0]?.content).toBe(text);
  });

  it('a re-index that supersedes a run still writing the document leaves it consistent and searchable', async () => {
    const storage = await sqliteStorage({ path: ':memory:' });
    // The first run enters its write step (a heartbeat finds its job still its own) and waits
    // there until released: it goes on writing, as a run on a slow or stalled instance would,
    // after the project moved to another model and its job was cancelled.
    const heartbeat = storage.jobs.heartbeat.bind(storage.jobs);
    let release: () => void = () => {};
    let writing: () => void = () => {};
    const held = new Promise<void>((r) => {
      writing = r;
    });
    let first = true;
    storage.jobs.heartbeat = async (...args) => {
      const state = await heartbeat(...args);
      if (first) {
        first = false;
        writing();
        await new Promise<void>((r) => {
          release = r;
        });
      }
      return state;
    };
    // Every status the document goes through: the superseded run must not report `failed`.
    const statuses: string[] = [];
    const update = storage.documents.update.bind(storage.documents);
    storage.documents.update = async (id, patch) => {
      if (patch.status) statuses.push(patch.status);
      return update(id, patch);
    };
    const models = { builtin: recordingEmbedder('test:a'), b: recordingEmbedder('test:b') };
    const { platform, me, projectId, vectors, count, allCompleted, search } = await setup({ models, storage });
    const created = platform.createDocument(me, { projectId, fileName: 'a.md', fileType: 'md', sourceType: 'upload', content: 'Parcels ship from Rotterdam.' });
    await held;
    await platform.putKnowledgeSettings(me, { projectId, settings: { embeddingModel: 'b' } });
    await new Promise((r) => setTimeout(r, 50)); // the new run gets as far as it can
    release();
    await created;
    await allCompleted();
    await new Promise((r) => setTimeout(r, 50));
    const documentId = (await platform.listDocuments(me, { projectId, limit: 1 })).documents[0]?.id as string;
    const [chunk] = await platform.storage.chunks.listByDocument(documentId);
    expect(await count(vectors, models.b)).toBe(1);
    expect(await count(vectors, models.builtin)).toBe(0);
    expect(await platform.storage.chunks.embeddingsByText(documentId, models.b.id)).toHaveProperty('size', 1);
    expect((await search('Rotterdam'))[0]).toMatchObject({ id: chunk?.id, content: 'Parcels ship from Rotterdam.' });
    expect((await platform.getDocument(me, documentId)).document.status).toBe('completed');
    expect(statuses).not.toContain('failed');
    // The superseded run's job is gone too: nothing is run again on the next start.
    expect(await platform.storage.jobs.list()).toEqual([]);
  });
});
