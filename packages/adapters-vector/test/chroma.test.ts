import { randomUUID } from 'node:crypto';
import { isPlatformError, type PlatformError, type VectorStore } from '@agent-platform/core';
import { describeVectorStore } from '@agent-platform/core/testing';
import { ChromaClient } from 'chromadb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createChromaVectorStore, parseChromaConfig } from '../src/chroma/index.js';
import { type ChromaServer, freePort, startChromaServer, startSilentServer, startTokenProxy } from './fixtures/chroma-server.js';

let server: ChromaServer;
beforeAll(async () => {
  server = await startChromaServer();
});
afterAll(async () => {
  await server?.dispose();
});

const indexName = () => `it-${randomUUID()}`;
const configs = new WeakMap<VectorStore, Record<string, unknown>>();
const open = (config: Record<string, unknown>, timeoutMs?: number) => {
  const store = createChromaVectorStore(config, timeoutMs === undefined ? {} : { timeoutMs });
  configs.set(store, config);
  return store;
};

describeVectorStore('chroma (real server)', {
  create: () => open({ endpoint: server.url, indexName: indexName() }),
  // A new store object on the same collection: the vectors live in Chroma.
  async reopen(store) {
    await store.close();
    return open(configs.get(store) as Record<string, unknown>);
  },
  dimensions: 16,
});

/** The PlatformError a promise rejects with (fails the test if it resolves). */
async function failure(promise: Promise<unknown> | undefined): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    if (isPlatformError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlatformError, the call succeeded');
}

function failureOf(fn: () => unknown): PlatformError {
  try {
    fn();
  } catch (error) {
    if (isPlatformError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlatformError, the call succeeded');
}

const unit = (dims: number, ...xs: number[]) => {
  const v = new Float32Array(dims);
  const norm = Math.hypot(...xs);
  for (const [i, x] of xs.entries()) v[i] = x / norm;
  return v;
};

describe('chroma settings validation', () => {
  it.each([
    [{ indexName: 'docs' }, 'Invalid vectorstore configuration: endpoint is required for chroma'],
    [{ endpoint: 'http://127.0.0.1:8000' }, 'Invalid vectorstore configuration: indexName is required'],
    [{ endpoint: 'not a url', indexName: 'docs' }, 'Invalid vectorstore configuration: endpoint must be an http(s) URL'],
    [{ endpoint: 'ftp://127.0.0.1:8000', indexName: 'docs' }, 'Invalid vectorstore configuration: endpoint must be an http(s) URL'],
    [{ endpoint: 'http://127.0.0.1:8000/chroma', indexName: 'docs' }, 'without a path'],
    [{ endpoint: 'http://user:secret@127.0.0.1:8000', indexName: 'docs' }, 'endpoint must not contain credentials'],
    [{ endpoint: 8000, indexName: 'docs' }, 'Invalid vectorstore configuration: endpoint must be a string'],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: ['docs'] }, 'Invalid vectorstore configuration: indexName must be a string'],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'docs', apiKey: 42 }, 'Invalid vectorstore configuration: apiKey must be a string'],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'docs', tenant: '' }, 'Invalid vectorstore configuration: tenant must not be empty'],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'my docs!' }, 'Invalid vectorstore configuration: indexName must be 3-512 characters'],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'ab' }, 'Invalid vectorstore configuration: indexName must be 3-512 characters'],
    // Chroma's own rule: no "..", not an IP address.
    [
      { endpoint: 'http://127.0.0.1:8000', indexName: 'a..b' },
      'Invalid vectorstore configuration: indexName must be 3-512 characters of letters, digits, ".", "_" and "-", starting and ending with a letter or digit, without ".." and not an IP address',
    ],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: '10.0.0.1' }, "not an IP address (Chroma's rule for collection names)"],
    // Tenant and database names are path segments: "." and ".." would walk the path.
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'docs', tenant: '..' }, "Invalid vectorstore configuration: tenant must be at least 3 characters (Chroma's rule for tenant names)"],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'docs', database: '.' }, "Invalid vectorstore configuration: database must be at least 3 characters (Chroma's rule for database names)"],
    [{ endpoint: 'http://127.0.0.1:8000?', indexName: 'docs' }, "endpoint must be the server's root URL, without a path, query string or fragment"],
    [{ endpoint: 'http://127.0.0.1:8000/#x', indexName: 'docs' }, "endpoint must be the server's root URL, without a path, query string or fragment"],
    [{ endpoint: 'http://127.0.0.1:8000', indexName: 'docs', environment: 'us-east-1', region: 'x' }, 'Invalid vectorstore configuration: unknown keys environment, region'],
    [null, 'Invalid vectorstore configuration: expected an object with endpoint and indexName'],
    ['http://127.0.0.1:8000', 'Invalid vectorstore configuration: expected an object with endpoint and indexName'],
  ])('refuses %j', (config, message) => {
    const error = failureOf(() => createChromaVectorStore(config));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain(message);
    expect(error.issues?.length).toBeGreaterThan(0);
  });

  it('names every problem at once, and never echoes the API key', () => {
    const error = failureOf(() => parseChromaConfig({ endpoint: 'ftp://x', apiKey: 'sk-secret-123', extra: true }));
    expect(error.message).toBe(
      'Invalid vectorstore configuration: endpoint must be an http(s) URL; indexName is required; unknown key extra (chroma takes endpoint, indexName, apiKey, tenant, database)',
    );
    expect(JSON.stringify(error.issues)).not.toContain('sk-secret-123');
    expect(error.issues?.map((i) => i.path)).toEqual([['endpoint'], ['indexName'], []]);
  });

  it('accepts a full configuration', () => {
    const config = { endpoint: 'https://chroma.example.com', indexName: 'agent.platform_v1', apiKey: 'k', tenant: 'team-a', database: 'docs' };
    expect(parseChromaConfig(config)).toEqual(config);
  });

  it('answers unavailable for an endpoint where nothing listens', async () => {
    const port = await freePort();
    const store = open({ endpoint: `http://127.0.0.1:${port}`, indexName: 'docs' });
    for (const call of [
      () => store.check?.({ dimensions: 16 }),
      () => store.query('ns', { vector: unit(16, 1), topK: 3 }),
      () => store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(16, 1) }]),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe('unavailable');
      expect(error.retryable).toBe(true);
      expect(error.message).toBe(`chroma at http://127.0.0.1:${port} could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
    }
  });

  it('answers timeout when the server does not answer in time', async () => {
    const silent = await startSilentServer();
    try {
      const store = open({ endpoint: silent.url, indexName: 'docs' }, 300);
      const started = Date.now();
      const error = await failure(store.count('ns'));
      expect(error.code).toBe('timeout');
      expect(error.message).toBe(`chroma at ${silent.url} did not answer within 300 ms`);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await silent.close();
    }
  });

  it('sends the API key as x-chroma-token and reports a refused key as a configuration error', async () => {
    const proxy = await startTokenProxy(server.url, 'right-key');
    try {
      const name = indexName();
      const good = open({ endpoint: proxy.url, indexName: name, apiKey: 'right-key' });
      await good.check?.({ dimensions: 16 });
      await good.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(16, 1) }]);
      expect(await good.count('ns')).toBe(1);

      const wrong = open({ endpoint: proxy.url, indexName: name, apiKey: 'wrong-key-123' });
      for (const call of [() => wrong.check?.({ dimensions: 16 }), () => wrong.query('ns', { vector: unit(16, 1), topK: 1 })]) {
        const error = await failure(call());
        expect(error.code).toBe('invalid_request');
        expect(error.message).toBe('Invalid vectorstore configuration: chroma refused the API key (401)');
      }
      const none = await failure(open({ endpoint: proxy.url, indexName: name }).count('ns'));
      expect(none.message).toBe(`Invalid vectorstore configuration: chroma at ${proxy.url} requires an API key (401)`);
    } finally {
      await proxy.close();
    }
  });

  it('refuses an existing index of another dimension, naming both', async () => {
    const name = indexName();
    const store = open({ endpoint: server.url, indexName: name });
    await store.check?.({ dimensions: 16 });
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(16, 1) }]);
    await store.check?.({ dimensions: 16 });
    const other = open({ endpoint: server.url, indexName: name });
    const message = `Invalid vectorstore configuration: index "${name}" has dimension 16, the embedding model gives 32`;
    for (const call of [
      () => other.check?.({ dimensions: 32 }),
      () => other.upsert('ns2', [{ id: 'b', documentId: 'd', vector: unit(32, 1) }]),
      () => other.query('ns', { vector: unit(32, 1), topK: 1 }),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe('invalid_request');
      expect(error.message).toBe(message);
    }
    // Chroma keeps the dimension once the collection is emptied: still refused.
    await store.dropNamespace('ns');
    expect((await failure(other.check?.({ dimensions: 32 }))).message).toBe(message);
    expect(await store.count('ns2')).toBe(0);
  });

  it('refuses an existing index with another distance', async () => {
    const name = indexName();
    const client = new ChromaClient({ host: '127.0.0.1', port: server.port });
    await client.createCollection({ name, embeddingFunction: null, configuration: { hnsw: { space: 'l2' } } });
    const store = open({ endpoint: server.url, indexName: name });
    for (const call of [() => store.check?.({ dimensions: 16 }), () => store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(16, 1) }]), () => store.count('ns')]) {
      const error = await failure(call());
      expect(error.message).toBe(`Invalid vectorstore configuration: index "${name}" uses l2 distance, the adapter needs cosine`);
    }
  });

  it('refuses a database that does not exist', async () => {
    const store = open({ endpoint: server.url, indexName: indexName(), database: 'no-such-db' });
    const error = await failure(store.check?.({ dimensions: 16 }));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toBe(`Invalid vectorstore configuration: chroma at ${server.url} has no database "no-such-db" in tenant "default_tenant"`);
  });

  it('stops a check when its signal aborts', async () => {
    const silent = await startSilentServer();
    try {
      const store = open({ endpoint: silent.url, indexName: 'docs' });
      const controller = new AbortController();
      const checking = failure(store.check?.({ dimensions: 16, signal: controller.signal }));
      setTimeout(() => controller.abort(), 50);
      expect((await checking).code).toBe('aborted');
      expect((await failure(store.check?.({ dimensions: 16, signal: AbortSignal.abort() }))).code).toBe('aborted');
    } finally {
      await silent.close();
    }
  });
});

describe('chroma at run time', () => {
  const stores: VectorStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('creates the collection on first write only, with cosine distance and namespaced ids', async () => {
    const name = indexName();
    const store = open({ endpoint: server.url, indexName: name });
    stores.push(store);
    const client = new ChromaClient({ host: '127.0.0.1', port: server.port });
    expect(await store.count('ns')).toBe(0);
    expect(await store.query('ns', { vector: unit(16, 1), topK: 3 })).toEqual([]);
    await expect(client.getCollection({ name })).rejects.toThrow();
    await store.upsert('proj_1:builtin:use-lite-512', [{ id: 'chunk-1', documentId: 'doc-1', vector: unit(16, 3, 4) }]);
    const collection = await client.getCollection({ name });
    expect(collection.configuration.hnsw?.space).toBe('cosine');
    const stored = await collection.get({ include: ['metadatas'] });
    expect(stored.ids).toEqual([expect.stringMatching(/^[0-9a-f]{16}:chunk-1$/)]);
    expect(stored.metadatas).toEqual([{ namespace: 'proj_1:builtin:use-lite-512', documentId: 'doc-1', chunkId: 'chunk-1' }]);
    // score = 1 - Chroma's cosine distance: cos((3,4), (1,0)) = 0.6
    const [hit] = await store.query('proj_1:builtin:use-lite-512', { vector: unit(16, 1), topK: 1 });
    expect(hit?.score).toBeCloseTo(0.6, 5);
  });

  it('opens the collection again when it was deleted behind its back', async () => {
    const name = indexName();
    const store = open({ endpoint: server.url, indexName: name });
    stores.push(store);
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(16, 1) }]);
    const client = new ChromaClient({ host: '127.0.0.1', port: server.port });
    await client.deleteCollection({ name });
    expect(await store.count('ns')).toBe(0);
    expect(await store.query('ns', { vector: unit(16, 1), topK: 1 })).toEqual([]);
    await store.upsert('ns', [{ id: 'b', documentId: 'd', vector: unit(16, 0, 1) }]);
    expect((await store.query('ns', { vector: unit(16, 0, 1), topK: 5 })).map((h) => h.id)).toEqual(['b']);
  });

  it('fails clearly while the server is down and works again, with the same store, once it is back', async () => {
    const store = open({ endpoint: server.url, indexName: indexName() });
    stores.push(store);
    await store.upsert('ns', [
      { id: 'a', documentId: 'd1', vector: unit(16, 1) },
      { id: 'b', documentId: 'd2', vector: unit(16, 0, 1) },
    ]);
    await server.stop();
    try {
      const calls = [
        () => store.query('ns', { vector: unit(16, 1), topK: 1 }),
        () => store.upsert('ns', [{ id: 'c', documentId: 'd3', vector: unit(16, 1, 1) }]),
        () => store.count('ns'),
        () => store.deleteDocument('ns', 'd1'),
        () => store.dropNamespace('ns'),
        () => store.check?.({ dimensions: 16 }),
      ];
      for (const call of calls) {
        const error = await failure(call());
        expect(error.code).toBe('unavailable');
        expect(error.retryable).toBe(true);
        expect(error.message).toMatch(new RegExp(`^chroma at ${server.url} could not be reached: `));
      }
    } finally {
      await server.start();
    }
    expect(await store.count('ns')).toBe(2);
    await store.upsert('ns', [{ id: 'c', documentId: 'd3', vector: unit(16, 1, 1) }]);
    const hits = await store.query('ns', { vector: unit(16, 1), topK: 3 });
    expect(hits.map((h) => h.id)).toEqual(['a', 'c', 'b']);
    expect(hits[1]?.score).toBeCloseTo(Math.SQRT1_2, 5);
    expect(await store.deleteDocument('ns', 'd1')).toBe(1);
    await store.check?.({ dimensions: 16 });
  });

  it('sends the upserts made while one is in flight together, each resolving once its vectors are stored; a bad one fails alone', async () => {
    let requests = 0;
    const counting = (input: string | URL | Request, init?: RequestInit) => {
      if (String(input instanceof Request ? input.url : input).endsWith('/upsert')) requests++;
      return fetch(input, init);
    };
    const store = createChromaVectorStore({ endpoint: server.url, indexName: indexName() }, { fetch: counting });
    stores.push(store);
    await store.upsert('warm', [{ id: 'w', documentId: 'w', vector: unit(16, 1) }]);
    requests = 0;
    // One goes at once; the other 20, made while it is in flight, go in one request, whatever their namespaces.
    await Promise.all(Array.from({ length: 21 }, (_, i) => store.upsert(`ns${i % 3}`, [{ id: `c${i}`, documentId: `d${i}`, vector: unit(16, 1, i) }])));
    expect(requests).toBe(2);
    for (const ns of ['ns0', 'ns1', 'ns2']) expect(await store.count(ns)).toBe(7);
    expect((await store.query('ns1', { vector: unit(16, 1, 4), topK: 1 })).map((h) => h.id)).toEqual(['c4']);

    // A vector of another dimension makes the shared request fail: each upsert of it goes again alone.
    const outcomes = await Promise.allSettled([
      store.upsert('ns0', [{ id: 'x0', documentId: 'dx', vector: unit(16, 1) }]),
      store.upsert('ns0', [{ id: 'x1', documentId: 'dx', vector: unit(16, 0, 1) }]),
      store.upsert('ns0', [{ id: 'x2', documentId: 'dx', vector: unit(8, 1) }]),
      store.upsert('ns0', [{ id: 'x3', documentId: 'dx', vector: unit(16, 1, 1) }]),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(((outcomes[2] as PromiseRejectedResult).reason as Error).message).toMatch(/dimension/);
    expect(await store.count('ns0')).toBe(10);

    // One id written by several upserts at once: never in one request (Chroma refuses that), the last one last.
    await Promise.all([unit(16, 1), unit(16, 0, 1), unit(16, 0, 0, 1)].map((vector) => store.upsert('ns1', [{ id: 'z', documentId: 'dz', vector }])));
    const [z] = await store.query('ns1', { vector: unit(16, 0, 0, 1), topK: 1, includeVectors: true });
    expect(z?.id).toBe('z');
    expect(z?.score).toBeCloseTo(1, 5);
  });

  it('refuses calls after close, and close is idempotent', async () => {
    const store = open({ endpoint: server.url, indexName: indexName() });
    await store.close();
    await store.close();
    expect((await failure(store.count('ns'))).message).toBe('The chroma vector store is closed');
  });
});
