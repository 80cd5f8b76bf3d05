import { postgresNotifier, postgresStorage } from '@agent-platform/adapters-storage/postgres';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { AgentPlatform, type BlobStore, type EmbeddingModel, type IndexingEvent, type KnowledgeAdapters, type Notifier, type VectorStore } from '@agent-platform/core';
import { postgresDatabase } from '@agent-platform/core/testing';
import { createMcpConnector } from '@agent-platform/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { bagOfWords } from './helpers.js';

// Two instances (platforms in one process, each with its own storage connection and its own
// PostgreSQL notifier, as two machines have) on one PostgreSQL database: what one instance does
// is heard by the other through LISTEN/NOTIFY.

let everything: ServerProcess;
beforeAll(async () => {
  everything = await startEverything('sse');
});
afterAll(async () => {
  await everything?.stop();
});

/** An embedder whose calls wait for `release()` once `hold()` was called, or until their run is aborted (counted). */
function embedder() {
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  let calls = 0;
  let aborted = 0;
  const model: EmbeddingModel = {
    id: 'test:shared',
    dimensions: 64,
    async embed(batch, options) {
      calls++;
      const signal = options?.signal;
      await Promise.race([gate, new Promise<void>((r) => signal?.addEventListener('abort', () => r(), { once: true }))]);
      if (signal?.aborted) {
        aborted++;
        signal.throwIfAborted();
      }
      return batch.map((t) => bagOfWords(t, 64));
    },
  };
  return {
    model,
    calls: () => calls,
    aborted: () => aborted,
    hold() {
      gate = new Promise((r) => {
        open = r;
      });
    },
    release: () => open(),
  };
}

function memoryBlobs(): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return { put: async (k, b) => void blobs.set(k, b), get: async (k) => blobs.get(k), delete: async (k) => blobs.delete(k) };
}

/** The vector store all instances share, as one instance sees it: closing an instance leaves it open. */
function shared(store: VectorStore): VectorStore {
  return {
    upsert: (ns, records) => store.upsert(ns, records),
    query: (ns, q) => store.query(ns, q),
    deleteDocument: (ns, id) => store.deleteDocument(ns, id),
    dropNamespace: (ns) => store.dropNamespace(ns),
    count: (ns) => store.count(ns),
    close: async () => {},
  };
}

/** Fails naming `what` when `promise` takes longer than `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref())]);
}

async function cluster(knowledge: (i: number) => Partial<KnowledgeAdapters>) {
  const url = await postgresDatabase();
  const vectors = await builtinVectorStore();
  const blobs = memoryBlobs();
  const instances: { platform: AgentPlatform; embedder: ReturnType<typeof embedder>; notifier: Notifier }[] = [];
  for (let i = 0; i < 2; i++) {
    const e = embedder();
    const notifier = await postgresNotifier({ connectionString: url });
    const platform = new AgentPlatform({
      storage: await postgresStorage({ connectionString: url }),
      notifier,
      knowledge: { vectors: shared(vectors), embedder: e.model, blobs, waitMs: 1, pollMs: 50, ...knowledge(i) },
      mcp: { connector: createMcpConnector({}) },
    });
    await platform.start();
    instances.push({ platform, embedder: e, notifier });
  }
  const [a, b] = instances as [(typeof instances)[0], (typeof instances)[0]];
  const { userId } = await a.platform.createUserWithKey({ name: 't' });
  const me = { userId };
  const { project } = await a.platform.createProject(me, { name: 'p', model: 'm', provider: 'openai' });
  const close = async () => {
    for (const i of instances) await i.platform.close();
    await vectors.close();
  };
  return { a, b, me, projectId: project.id as string, close };
}

describe('two instances on one PostgreSQL database, each with a PostgreSQL notifier', () => {
  it('a document indexed by B is awaited and streamed on A', async () => {
    // A claims both documents (they are submitted there) and stalls without heartbeats; B takes
    // them over once A's leases ran out and indexes them. A's wait and A's stream hear B.
    const c = await cluster((i) => ({ leaseMs: 300, waitMs: 60_000, ...(i === 0 ? { heartbeatMs: 60_000, pollMs: 60_000 } : { heartbeatMs: 100, pollMs: 100 }) }));
    try {
      c.a.embedder.hold();
      const stream = await c.a.platform.createDocumentStream(c.me, { projectId: c.projectId, fileName: 's.txt', fileType: 'txt', sourceType: 'upload', content: 'Streams of pumps.' });
      const events: IndexingEvent[] = [];
      const streamed = (async () => {
        for await (const event of stream) events.push(event);
      })();
      const created = await within(
        c.a.platform.createDocument(c.me, { projectId: c.projectId, fileName: 'd.txt', fileType: 'txt', sourceType: 'upload', content: 'Parcels ship from Rotterdam.' }),
        20_000,
        'the create-document wait on A',
      );
      expect(created).toMatchObject({ success: true, status: 'completed' });
      await within(streamed, 20_000, 'the progress stream on A');
      const last = events.at(-1) as IndexingEvent & { documentId: string };
      expect(last).toMatchObject({ type: 'complete', progress: 100 });
      expect(events.some((e) => e.type === 'progress' && e.progress === 90)).toBe(true); // only B got that far
      expect((await c.a.platform.storage.documents.get(c.me.userId, last.documentId))?.status).toBe('completed');
    } finally {
      c.a.embedder.release();
      await c.close();
    }
  });

  it('a document deleted on A stops its run on B at once, not at its next heartbeat', async () => {
    // A never polls, so B (where it is submitted) runs the job.
    const c = await cluster((i) => (i === 1 ? { heartbeatMs: 60_000 } : { pollMs: 60_000 }));
    try {
      c.b.embedder.hold();
      const { documentId } = await c.b.platform.createDocument(c.me, { projectId: c.projectId, fileName: 'd.txt', fileType: 'txt', sourceType: 'upload', content: 'Parcels ship from Rotterdam.' });
      for (let i = 0; i < 500 && c.b.embedder.calls() === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(c.b.embedder.calls()).toBe(1);
      await c.a.platform.deleteDocument(c.me, documentId as string);
      for (let i = 0; i < 500 && c.b.embedder.aborted() === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(c.b.embedder.aborted()).toBe(1);
    } finally {
      c.b.embedder.release();
      await c.close();
    }
  });

  it('settings changed on A hold on B at once', async () => {
    const c = await cluster(() => ({}));
    try {
      for (const topK of [3, 7]) {
        await c.a.platform.putKnowledgeSettings(c.me, { projectId: c.projectId, settings: { topK, chunkSize: 500 } });
        expect((await c.b.platform.getKnowledgeSettings(c.me, { projectId: c.projectId })).settings).toMatchObject({ topK, chunkSize: 500 });
      }
    } finally {
      await c.close();
    }
  });

  it('an MCP server deleted on A is disconnected on B', async () => {
    const c = await cluster(() => ({}));
    const connected = () => everything.count(/Client Connected/);
    const disconnected = () => everything.count(/Client Disconnected/);
    const settled = async () => {
      for (let i = 0; i < 250 && connected() !== disconnected(); i++) await new Promise((r) => setTimeout(r, 20));
      return connected() - disconnected();
    };
    try {
      const { server } = await c.a.platform.addMcpServer(c.me, { projectId: c.projectId, name: 'everything', transport: 'sse', url: `http://127.0.0.1:${everything.port}/sse` });
      expect(await settled()).toBe(0); // the probe's connection is closed
      const before = connected();
      // Each instance opens its shared connection.
      expect((await c.b.platform.listMcpTools(c.me, server.id)).tools.length).toBeGreaterThan(0);
      expect((await c.a.platform.listMcpTools(c.me, server.id)).tools.length).toBeGreaterThan(0);
      expect(connected() - before).toBe(2);
      expect(connected() - disconnected()).toBe(2);
      await c.a.platform.deleteMcpServer(c.me, server.id);
      expect(await settled()).toBe(0);
    } finally {
      await c.close();
    }
  });
});
