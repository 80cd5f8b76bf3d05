import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresStorage } from '@agent-platform/adapters-storage/postgres';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type BlobStore, type EmbeddingModel, type KnowledgeAdapters, type StorageAdapter, type VectorStore } from '@agent-platform/core';
import { postgresDatabase } from '@agent-platform/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { bagOfWords } from './helpers.js';

// Several instances (here: platforms in one process, each with its own storage connection) on one
// database, sharing the vector store and the blobs as a deployment shares them: each job is run
// by one of them; a run that lost its job (its lease ran out and another instance took it, or it
// was cancelled from another instance) writes nothing.

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Opens a new database; `open()` gives one more connection to it, as another instance's. */
const databases = {
  'SQLite file': async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-instances-'));
    dirs.push(dir);
    return () => sqliteStorage({ path: join(dir, 'shared.db') });
  },
  PostgreSQL: async () => {
    const url = await postgresDatabase();
    return () => postgresStorage({ connectionString: url });
  },
};

/** An embedder that can hold its calls until released, counting the texts it embedded. */
function embedder() {
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  const texts: string[] = [];
  const model: EmbeddingModel = {
    id: 'test:shared',
    dimensions: 64,
    async embed(batch) {
      texts.push(...batch);
      await gate;
      return batch.map((t) => bagOfWords(t, 64));
    },
  };
  return {
    model,
    texts,
    hold() {
      gate = new Promise((r) => {
        open = r;
      });
    },
    release: () => open(),
  };
}

/** The shared vector store as one instance sees it: closing an instance leaves it open; records the ids it upserted. */
function view(store: VectorStore) {
  const upserted: string[] = [];
  const seen: VectorStore = {
    upsert: (ns, records) => {
      upserted.push(...records.map((r) => r.id));
      return store.upsert(ns, records);
    },
    query: (ns, q) => store.query(ns, q),
    deleteDocument: (ns, id) => store.deleteDocument(ns, id),
    dropNamespace: (ns) => store.dropNamespace(ns),
    count: (ns) => store.count(ns),
    close: async () => {},
  };
  return { store: seen, upserted };
}

function memoryBlobs(): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return {
    put: async (key, bytes) => void blobs.set(key, bytes),
    get: async (key) => blobs.get(key),
    delete: async (key) => blobs.delete(key),
  };
}

describe.each(Object.entries(databases))('several instances on one %s database', (_name, database) => {
  async function cluster(count: number, knowledge: (i: number) => Partial<KnowledgeAdapters> = () => ({})) {
    const open = await database();
    const vectors = await builtinVectorStore();
    const blobs = memoryBlobs();
    const instances: { platform: AgentPlatform; embedder: ReturnType<typeof embedder>; upserted: string[] }[] = [];
    for (let i = 0; i < count; i++) {
      const storage: StorageAdapter = await open();
      const e = embedder();
      const v = view(vectors);
      const platform = new AgentPlatform({
        storage,
        knowledge: { vectors: v.store, embedder: e.model, blobs, waitMs: 1, pollMs: 50, ...knowledge(i) },
      });
      await platform.start();
      instances.push({ platform, embedder: e, upserted: v.upserted });
    }
    const [a] = instances as [(typeof instances)[0]];
    const { userId } = await a.platform.createUserWithKey({ name: 't' });
    const me = { userId };
    const { project } = await a.platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
    const namespace = `${project.id}:test:shared`;
    const add = async (content: string) => (await a.platform.createDocument(me, { projectId: project.id, fileName: 'd.txt', fileType: 'txt', sourceType: 'upload', content })).documentId as string;
    const status = async (id: string) => (await a.platform.storage.documents.get(userId, id))?.status;
    const until = async (check: () => Promise<boolean>) => {
      for (let i = 0; i < 1000 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await check()).toBe(true);
    };
    /** The ids of the document's vectors in the shared store. */
    const vectorIds = async (id: string) => (await vectors.query(namespace, { vector: bagOfWords('x', 64), topK: 1000, documentIds: [id] })).map((h) => h.id).sort();
    const chunkIds = async (id: string) => (await a.platform.storage.chunks.listByDocument(id)).map((c) => c.id).sort();
    const close = async () => {
      for (const i of instances) await i.platform.close();
      await vectors.close();
    };
    return { instances, me, add, status, until, vectorIds, chunkIds, vectors, namespace, close };
  }

  it('indexes each document once, by whichever instance claims it', async () => {
    const c = await cluster(2);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push(await c.add(`Document ${i} is about pumps number ${i}.`));
      await c.until(async () => (await Promise.all(ids.map(c.status))).every((s) => s === 'completed'));
      const embedded = c.instances.flatMap((i) => i.embedder.texts);
      expect(embedded).toHaveLength(30);
      expect(new Set(embedded).size).toBe(30);
      expect(await c.vectors.count(c.namespace)).toBe(30);
      for (const id of ids) expect(await c.vectorIds(id)).toEqual(await c.chunkIds(id));
    } finally {
      await c.close();
    }
  });

  it('takes over a job whose lease ran out; the stalled run writes nothing when it wakes', async () => {
    // Instance 0 claims the job (it was submitted there) and stalls: no heartbeat, no polling in
    // time; instance 1 finds the job once its lease ran out.
    const c = await cluster(2, (i) => ({ leaseMs: 300, ...(i === 0 ? { heartbeatMs: 60_000, pollMs: 60_000 } : { heartbeatMs: 100, pollMs: 100 }) }));
    const [stalled, other] = c.instances as [(typeof c.instances)[0], (typeof c.instances)[0]];
    try {
      stalled.embedder.hold();
      other.embedder.hold();
      const id = await c.add('Parcels ship from Rotterdam.');
      await c.until(async () => stalled.embedder.texts.length === 1);
      // Lease over: the other instance takes the job and finishes it.
      other.embedder.release();
      await c.until(async () => (await c.status(id)) === 'completed');
      expect(other.embedder.texts).toEqual(['Parcels ship from Rotterdam.']);
      const written = await c.chunkIds(id);
      stalled.embedder.release();
      await new Promise((r) => setTimeout(r, 300));
      expect(stalled.upserted).toEqual([]);
      expect(await c.chunkIds(id)).toEqual(written);
      expect(await c.vectorIds(id)).toEqual(written);
      expect(other.upserted.sort()).toEqual(written);
      expect(await c.status(id)).toBe('completed');
    } finally {
      await c.close();
    }
  });

  it('cancels a run on another instance when its document is deleted: nothing of it is left', async () => {
    // The job must be the runner's: it is queued there (claimed at once), and the other instance
    // never polls during the test (a 50 ms poll sometimes claimed it first).
    const c = await cluster(2, (i) => (i === 0 ? { heartbeatMs: 50 } : { pollMs: 60_000 }));
    const [runner, other] = c.instances as [(typeof c.instances)[0], (typeof c.instances)[0]];
    try {
      runner.embedder.hold();
      const id = await c.add('Parcels ship from Rotterdam.');
      await c.until(async () => runner.embedder.texts.length === 1);
      expect(await other.platform.deleteDocument(c.me, id)).toMatchObject({ success: true });
      await new Promise((r) => setTimeout(r, 200)); // a heartbeat or more
      runner.embedder.release();
      await new Promise((r) => setTimeout(r, 300));
      expect(runner.upserted).toEqual([]);
      expect(await c.chunkIds(id)).toEqual([]);
      expect(await c.vectorIds(id)).toEqual([]);
      expect(await runner.platform.storage.jobs.list()).toEqual([]);
    } finally {
      await c.close();
    }
  });
});
