import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type BlobStore, type EmbeddingModel, type StorageAdapter, type VectorStore } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bagOfWords, startTestServer, type TestServer } from './helpers.js';

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

/**
 * A recording embedder whose calls can be held: `hold()` makes the next calls wait (each waiting
 * call is in `held`, with its texts and signal) until `release()`.
 */
function holdingEmbedder(id: string) {
  const inner = recordingEmbedder(id);
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  const held: { texts: readonly string[]; signal: AbortSignal | undefined }[] = [];
  let arrived: () => void = () => {};
  let arrival = new Promise<void>((r) => {
    arrived = r;
  });
  const model: EmbeddingModel & typeof inner = {
    ...inner,
    async embed(texts, options) {
      if (gate && options?.purpose !== 'query') {
        held.push({ texts, signal: options?.signal });
        arrived();
        await gate;
      }
      return inner.embed(texts, options);
    },
  };
  return {
    model,
    held,
    hold() {
      gate = new Promise<void>((r) => {
        open = r;
      });
      arrival = new Promise<void>((r) => {
        arrived = r;
      });
    },
    /** Resolves once a held call has arrived since `hold()`. */
    arrived: () => arrival,
    release() {
      gate = undefined;
      open();
    },
  };
}

/** A store that records the order of its writes (`upsert:<ids>`, `delete:<doc>`, `prune:<doc>`). */
function recordingStore(store: VectorStore, log: string[]): VectorStore {
  return {
    upsert: async (ns, records) => {
      log.push(`upsert:${records.map((r) => r.id).join(',')}`);
      return store.upsert(ns, records);
    },
    query: (ns, q) => store.query(ns, q),
    deleteDocument: async (ns, d) => {
      log.push(`delete:${d}`);
      return store.deleteDocument(ns, d);
    },
    pruneDocument: async (ns, d, keep) => {
      log.push(`prune:${d}:${[...keep].join(',')}`);
      return (store.pruneDocument as NonNullable<VectorStore['pruneDocument']>)(ns, d, keep);
    },
    dropNamespace: (ns) => store.dropNamespace(ns),
    count: (ns) => store.count(ns),
    close: () => store.close(),
  };
}

/** Paragraphs of made-up words (each word used once), of lengths in no order. */
function paragraphs(prefix: string, count: number): string {
  const lengths = [3, 17, 6, 22, 9, 1, 14, 4, 19, 11];
  const paragraph = (i: number) => Array.from({ length: lengths[i % lengths.length] as number }, (_, j) => `${prefix}${i}w${j}`).join(' ');
  return Array.from({ length: count }, (_, i) => `${paragraph(i)}.`).join('\n\n');
}

async function setup(options: { models?: Record<string, EmbeddingModel>; storage?: StorageAdapter; blobs?: BlobStore; log?: string[] } = {}) {
  const models = options.models ?? { builtin: recordingEmbedder('test:a') };
  const builtin = await builtinVectorStore();
  const vectors = options.log ? recordingStore(builtin, options.log) : builtin;
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
  const chunkTexts = async (...documentIds: string[]) => (await Promise.all(documentIds.map((id) => platform.storage.chunks.listByDocument(id)))).flat().map((c) => c.text);
  const search = async (query: string, searchType: 'semantic' | 'hybrid' = 'semantic') => (await platform.searchKnowledge(me, { projectId, query, topK: 3, searchType })).documents;
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

describe('re-indexing documents after a chunking change (POST /api/knowledge/reindex, in process)', () => {
  const chunked = (prefix: string) => `# First\n\n${paragraphs(`${prefix}a`, 6)}\n\n# Second\n\n${paragraphs(`${prefix}b`, 6)}`;

  it('writes the new vectors, then the chunk rows, then prunes the rest: search answers the old chunks until the new ones are in', async () => {
    const gate = holdingEmbedder('test:a');
    const log: string[] = [];
    const { platform, me, projectId, add, search, count, vectors } = await setup({ models: { builtin: gate.model }, log });
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 512, chunkOverlap: 0 } });
    const documentId = await add('doc.md', chunked('x'));
    const before = await platform.storage.chunks.listByDocument(documentId);
    expect(before).toHaveLength(2);
    const target = before[1] as { id: string; text: string };

    const change = await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 24 } });
    expect(change.reindex).toBe('suggested');
    // Nothing happens to indexed documents until asked.
    expect((await platform.storage.chunks.listByDocument(documentId)).map((c) => c.id)).toEqual(before.map((c) => c.id));

    gate.hold();
    log.length = 0;
    const answer = await platform.reindexKnowledge(me, { projectId });
    expect(answer).toEqual({ success: true, message: 'Re-indexing 1 document', queued: 1, documentIds: [documentId] });
    await gate.arrived();
    // The run is embedding: the document is processing, its old chunks still answer.
    expect((await platform.getDocument(me, documentId)).document).toMatchObject({ status: 'processing', chunkCount: 2 });
    for (const type of ['semantic', 'hybrid'] as const) expect((await search(target.text, type))[0]).toMatchObject({ id: target.id, content: target.text });
    expect(log).toEqual([]);

    gate.release();
    const done = await waitStatus(platform, me, documentId, 'completed');
    const after = await platform.storage.chunks.listByDocument(documentId);
    expect(done.chunkCount).toBe(after.length);
    expect(after.length).toBeGreaterThan(4);
    const newIds = after.map((c) => c.id);
    expect(newIds.some((id) => before.some((c) => c.id === id))).toBe(false);
    // New vectors first, then (the chunk rows,) then the old ones pruned: never a moment without vectors.
    expect(log).toEqual([`upsert:${newIds.join(',')}`, `prune:${documentId}:${newIds.join(',')}`]);
    expect(await count(vectors, gate.model)).toBe(after.length);
    const text = after[3]?.text as string;
    expect((await search(text))[0]?.content).toBe(text);
  });

  it('a hit whose vector is in before its chunk row takes no place of the topK: every search type answers the old chunk meanwhile', async () => {
    const { platform, me, projectId, add, models, vectors } = await setup();
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 512, chunkOverlap: 0 } });
    const documentId = await add('doc.md', chunked('x'));
    const before = await platform.storage.chunks.listByDocument(documentId);
    // The store holds the re-index right after its new vectors are in, before their chunk rows.
    let upserted: () => void = () => {};
    const inBetween = new Promise<void>((r) => {
      upserted = r;
    });
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const upsert = vectors.upsert.bind(vectors);
    vectors.upsert = async (ns, records) => {
      await upsert(ns, records);
      upserted();
      await gate;
    };
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 24 } });
    const embedder = models.builtin as ReturnType<typeof recordingEmbedder>;
    await platform.reindexKnowledge(me, { projectId });
    await inBetween;
    // A new chunk's own text: its vector (no row yet) is the best match of every search type.
    const query = embedder.calls.at(-1)?.[0] as string;
    expect(before.some((c) => c.text.includes(query))).toBe(true);
    for (const searchType of ['semantic', 'hybrid', 'mrr'] as const) {
      const { documents } = await platform.searchKnowledge(me, { projectId, query, topK: 1, searchType });
      expect(documents).toHaveLength(1);
      expect(before.map((c) => c.id)).toContain(documents[0]?.id);
    }
    release();
    await waitStatus(platform, me, documentId, 'completed');
    const { documents } = await platform.searchKnowledge(me, { projectId, query, topK: 1, searchType: 'semantic' });
    expect(documents[0]?.content).toBe(query);
  });

  it('a document being indexed is not indexed twice at once: a second request stops the first run and its job', async () => {
    const gate = holdingEmbedder('test:a');
    const { platform, me, projectId, add, count, vectors } = await setup({ models: { builtin: gate.model } });
    const documentId = await add('doc.md', chunked('y'));
    await platform.putKnowledgeSettings(me, { projectId, settings: { chunkSize: 24, chunkOverlap: 0 } });
    gate.hold();
    await platform.reindexKnowledge(me, { projectId, documentIds: [documentId] });
    await gate.arrived();
    const first = gate.held[0];
    expect(first?.signal?.aborted).toBe(false);
    gate.hold(); // the next run's calls wait too
    await platform.reindexKnowledge(me, { projectId, documentIds: [documentId, documentId] });
    await gate.arrived();
    // When the second run embeds, the first one has been stopped.
    expect(gate.held.length).toBeGreaterThanOrEqual(2);
    expect(first?.signal?.aborted).toBe(true);
    expect(gate.held.filter((h) => !h.signal?.aborted)).toHaveLength(1);
    expect(await platform.storage.jobs.list()).toHaveLength(1);
    gate.release();
    const done = await waitStatus(platform, me, documentId, 'completed');
    const chunks = await platform.storage.chunks.listByDocument(documentId);
    expect(done.chunkCount).toBe(chunks.length);
    expect(await count(vectors, gate.model)).toBe(chunks.length);
    expect(await platform.storage.jobs.list()).toEqual([]);
  });

  it('a re-index that fails keeps the earlier chunks searchable and says why', async () => {
    const stored = new Map<string, Uint8Array>();
    const blobs: BlobStore = {
      put: async (key, bytes) => void stored.set(key, new Uint8Array(bytes)),
      get: async (key) => stored.get(key),
      delete: async (key) => stored.delete(key),
    };
    const { platform, me, projectId, add, search } = await setup({ blobs });
    const documentId = await add('doc.md', 'Parcels ship from Rotterdam every Monday.');
    stored.clear(); // the stored source is gone (a lost file)
    await platform.reindexKnowledge(me, { projectId });
    const failed = await waitStatus(platform, me, documentId, 'failed');
    expect(failed).toMatchObject({ error: 'Failed to index document: the source of the document is missing', chunkCount: 1 });
    expect((await search('Rotterdam', 'hybrid'))[0]?.content).toBe('Parcels ship from Rotterdam every Monday.');
  });
});

async function waitStatus(platform: AgentPlatform, me: { userId: string }, documentId: string, status: string) {
  for (let i = 0; i < 1000; i++) {
    const { document } = await platform.getDocument(me, documentId);
    if (document.status === status) return document;
    if (document.status === 'failed' || (document.status === 'completed' && status !== 'completed')) throw new Error(`document ${document.status}: ${document.error}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`document never ${status}`);
}

describe('POST /api/knowledge/reindex over HTTP (the built-in embedder)', () => {
  let s: TestServer;
  let projectId: string;
  beforeAll(async () => {
    s = await startTestServer();
    projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Reindex', model: 'm', provider: 'openai' } })).body.project.id;
  }, 120_000);
  afterAll(async () => {
    await s.stop();
  });

  const add = async (fileName: string, content: string, project = projectId) => {
    const res = await s.call('POST', '/api/knowledge/documents', { body: { projectId: project, fileName, fileType: 'txt', sourceType: 'upload', content } });
    expect(await s.indexed(res.body.documentId)).toMatchObject({ status: 'completed' });
    return res.body.documentId as string;
  };
  const document = async (id: string) => (await s.call('GET', `/api/knowledge/documents/${id}`)).body.document;
  const reindex = (body: unknown, key = s.keyA) => s.call('POST', '/api/knowledge/reindex', { key, body });
  const sentences = (word: string, n: number) => Array.from({ length: n }, (_, i) => `Sentence ${i} tells how ${word} ${i % 7 === 0 ? 'pumps' : 'valves'} are serviced.`).join(' ');

  it('re-cuts the documents with the new chunking; they go pending, processing, completed, followed by the events route; search answers the old chunks meanwhile', async () => {
    await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { chunkSize: 512, chunkOverlap: 0 } } });
    const long = await add('long.txt', sentences('gravel', 150));
    const short = await add('short.txt', 'Refunds are paid within 30 days.');
    const before = await document(long);
    expect(before.chunkCount).toBeLessThan(20);
    const oldHit = (await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'gravel pumps serviced', topK: 1 } })).body.documents[0];
    expect(oldHit.metadata.documentId).toBe(long);

    const change = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { chunkSize: 16 } } });
    expect(change.body.reindex).toBe('suggested');
    const res = await reindex({ projectId });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: true, message: 'Re-indexing 2 documents', queued: 2 });
    expect([...res.body.documentIds].sort()).toEqual([long, short].sort());
    const follow = fetch(`${s.url}/api/knowledge/documents/${long}/events`, { headers: { authorization: `Bearer ${s.keyA}` } }).then((r) => r.text());

    // While the long document is re-indexed, search keeps answering its old chunks (512 tokens)
    // until the new ones (16 tokens) are in: never nothing, and never old ones again after that.
    // The status turns completed a moment after the new chunks are written, so a search in that
    // moment may see new chunks while the document still says processing.
    const seen = new Set<string>();
    const kinds: string[] = [];
    for (let doc = await document(long); doc.status !== 'completed'; doc = await document(long)) {
      expect(doc.status).not.toBe('failed');
      seen.add(doc.status);
      if (doc.status === 'processing') {
        const found = (await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'gravel pumps serviced', topK: 1 } })).body.documents[0];
        expect(found?.metadata.documentId).toBe(long);
        kinds.push(found.content.length > 200 ? 'old' : 'new');
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toContain('processing');
    expect(kinds).toContain('old');
    expect(kinds.join(' ')).toMatch(/^(old ?)*(new ?)*$/);
    const after = await document(long);
    expect(after.chunkCount).toBeGreaterThan(before.chunkCount * 5);
    expect(after.vectorCount).toBe(after.chunkCount);
    expect(await s.indexed(short)).toMatchObject({ status: 'completed', chunkCount: 1 });
    const newHit = (await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'gravel pumps serviced', topK: 1 } })).body.documents[0];
    expect(newHit.content.length).toBeLessThan(120);

    const events = (await follow)
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map((b) => JSON.parse(b.slice(6)));
    expect(events.at(-1)).toMatchObject({ type: 'complete', progress: 100, documentId: long });
    expect(events.filter((e) => e.type === 'progress').map((e) => e.progress)).toEqual(expect.arrayContaining([60, 90]));
  }, 120_000);

  it('re-indexes only the documents named', async () => {
    await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { chunkSize: 512 } } });
    const a = await add('a.txt', sentences('sand', 30));
    const b = await add('b.txt', sentences('clay', 30));
    await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { chunkSize: 16 } } });
    const [beforeA, beforeB] = [await document(a), await document(b)];
    const res = await reindex({ projectId, documentIds: [b] });
    expect(res.body).toMatchObject({ queued: 1, documentIds: [b] });
    expect((await s.indexed(b)).chunkCount).toBeGreaterThan(beforeB.chunkCount);
    expect(await document(a)).toEqual(beforeA);
  }, 60_000);

  it('refuses unknown documents, those of another project or user, and bad bodies, queuing nothing', async () => {
    const other = (await s.call('POST', '/api/projects/create', { body: { name: 'Other', model: 'm', provider: 'openai' } })).body.project.id;
    const elsewhere = await add('elsewhere.txt', 'Kept where it is.', other);
    const mine = await add('mine.txt', 'Mine to re-index.');
    const theirs = (await s.call('POST', '/api/projects/create', { key: s.keyB, body: { name: 'B', model: 'm', provider: 'openai' } })).body.project.id;
    const before = await document(mine);
    for (const documentIds of [
      [mine, 'doc_missing'],
      [mine, elsewhere],
    ]) {
      const res = await reindex({ projectId, documentIds });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: 'not_found', message: `documentIds: document ${documentIds[1]} not found in project ${projectId}` });
    }
    expect(await document(mine)).toEqual(before);
    expect((await reindex({ projectId }, s.keyB)).status).toBe(404);
    expect((await reindex({ projectId: theirs, documentIds: [mine] }, s.keyB)).status).toBe(404);
    expect((await reindex({ projectId: theirs, documentIds: [mine] })).status).toBe(404);
    for (const [body, field] of [
      [{ projectId, documentIds: [] }, 'documentIds'],
      [{ projectId, documentIds: Array.from({ length: 1001 }, (_, i) => `doc_${i}`) }, 'documentIds'],
      [{ projectId, documentIds: 'doc_1' }, 'documentIds'],
      [{ documentIds: [mine] }, 'projectId'],
      [{ projectId, constructor: 1 }, 'body: Unrecognized key: "constructor"'],
    ] as const) {
      const res = await reindex(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^${field}`));
    }
    expect(await document(mine)).toEqual(before);
  });
});
