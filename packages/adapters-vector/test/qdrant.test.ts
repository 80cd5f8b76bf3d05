import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { PlatformError, VectorStore } from '@agent-platform/core';
import { describeVectorStore } from '@agent-platform/core/testing';
import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQdrantVectorStore, parseQdrantConfig, qdrantPointId, upsertBatchSize } from '../src/qdrant/index.js';
import { type QdrantTestServer, startQdrantTestServer } from './fixtures/qdrant-server.js';

// Qdrant cannot run here: the official client talks to a test double of Qdrant's REST API
// (test/fixtures/qdrant-server.ts). With QDRANT_URL (and QDRANT_API_KEY) set, the conformance
// suite also runs against that real server.
const KEY = 'test-key-7f3a';
let server: QdrantTestServer;
const warn = console.warn;
beforeAll(async () => {
  server = await startQdrantTestServer({ apiKey: KEY });
  // The client warns once per store that the key travels over plain http (true of loopback).
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('Api key is used with unsecure connection')) warn(...args);
  };
});
afterAll(async () => {
  console.warn = warn;
  await server.stop();
});

const indexName = () => `it-${randomUUID().slice(0, 8)}`;
const config = (extra: Record<string, unknown> = {}) => ({ endpoint: server.url, apiKey: KEY, indexName: indexName(), ...extra });
const unit = (...xs: number[]) => {
  const v = new Float32Array(16);
  const norm = Math.hypot(...xs);
  for (const [i, x] of xs.entries()) v[i] = x / norm;
  return v;
};
/** The PlatformError a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    return error as PlatformError;
  }
  throw new Error('expected a rejection');
}
function configError(config: unknown): PlatformError {
  try {
    parseQdrantConfig(config);
  } catch (error) {
    return error as PlatformError;
  }
  throw new Error('expected the configuration to be refused');
}
/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describeVectorStore('qdrant (test double of its REST API)', { create: () => createQdrantVectorStore(config()), dimensions: 16 });

if (process.env.QDRANT_URL) {
  const real = { endpoint: process.env.QDRANT_URL, ...(process.env.QDRANT_API_KEY ? { apiKey: process.env.QDRANT_API_KEY } : {}) };
  describeVectorStore('qdrant (real server at QDRANT_URL)', { create: () => createQdrantVectorStore({ ...real, indexName: indexName() }), dimensions: 16 });
}

describe('qdrant settings validation', () => {
  it('accepts a complete configuration; an empty or null apiKey means none', () => {
    expect(parseQdrantConfig({ indexName: 'kb', endpoint: 'https://q.example.com:6333', apiKey: 'k' })).toEqual({ indexName: 'kb', endpoint: 'https://q.example.com:6333', apiKey: 'k' });
    expect(parseQdrantConfig({ indexName: 'kb', endpoint: 'http://127.0.0.1:6333', apiKey: '' })).toEqual({ indexName: 'kb', endpoint: 'http://127.0.0.1:6333' });
    expect(parseQdrantConfig({ indexName: 'kb', endpoint: 'http://127.0.0.1:6333', apiKey: null })).toEqual({ indexName: 'kb', endpoint: 'http://127.0.0.1:6333' });
  });

  it('names a missing or malformed endpoint', () => {
    const missing = configError({ indexName: 'kb' });
    expect(missing.code).toBe('invalid_request');
    expect(missing.message).toBe('Invalid vectorstore configuration: endpoint is required for qdrant');
    expect(missing.issues?.[0]?.path).toEqual(['endpoint']);
    for (const endpoint of ['localhost:6333', 'ftp://q.example.com', 'not a url', '']) {
      expect(configError({ indexName: 'kb', endpoint }).message).toBe('Invalid vectorstore configuration: endpoint must be an http(s) URL');
    }
    const withSecret = configError({ indexName: 'kb', endpoint: 'http://user:s3cret@127.0.0.1:6333' });
    expect(withSecret.message).toContain('endpoint must not carry credentials');
    expect(withSecret.message).not.toContain('s3cret');
  });

  it('names wrong types, a missing or bad indexName, and a config that is not an object', () => {
    expect(configError({ indexName: 5, endpoint: 6, apiKey: 7 }).message).toBe('Invalid vectorstore configuration: indexName must be a string; endpoint must be a string; apiKey must be a string');
    expect(configError({ endpoint: 'http://127.0.0.1:6333' }).message).toBe('Invalid vectorstore configuration: indexName is required');
    expect(configError({ indexName: 'a/b', endpoint: 'http://127.0.0.1:6333' }).message).toContain('indexName must not contain');
    for (const bad of [null, 'qdrant', 42, ['x']]) expect(configError(bad).message).toBe('Invalid vectorstore configuration: vectorStoreConfig must be an object');
  });

  it('refuses "." and ".." as indexName (a URL path reads them as folders: /collections/.. is the server root) and a base URL with a query or fragment', () => {
    for (const name of ['.', '..']) {
      const error = configError({ indexName: name, endpoint: 'http://q.example.com:6333' });
      expect(error.message, name).toBe('Invalid vectorstore configuration: indexName must not be "." or ".." (a URL path reads them as folders, not as a collection)');
      expect(error.issues?.[0]?.path, name).toEqual(['indexName']);
    }
    // Names with dots that are not path segments stay Qdrant's to judge.
    expect(parseQdrantConfig({ indexName: '...', endpoint: 'http://q.example.com:6333' }).indexName).toBe('...');
    expect(parseQdrantConfig({ indexName: 'kb.v2', endpoint: 'http://q.example.com:6333' }).indexName).toBe('kb.v2');
    for (const endpoint of ['http://q.example.com:6333/?', 'http://q.example.com:6333/x?a=b', 'http://q.example.com:6333/#', 'http://q.example.com:6333/#frag']) {
      expect(configError({ indexName: 'kb', endpoint }).message, endpoint).toBe(
        'Invalid vectorstore configuration: endpoint must not have a query string or fragment (paths are appended to a base URL)',
      );
    }
  });

  it('refuses unknown keys, naming them (environment is pinecone only)', () => {
    const error = configError({ indexName: 'kb', endpoint: 'http://127.0.0.1:6333', environment: 'us-east-1', url: 'x' });
    expect(error.message).toBe('Invalid vectorstore configuration: unknown keys "environment", "url" (qdrant takes indexName, endpoint, apiKey)');
  });

  it('validates in the factory too, without connecting', () => {
    expect(() => createQdrantVectorStore({ endpoint: 'http://127.0.0.1:1' })).toThrow('Invalid vectorstore configuration: indexName is required');
    expect(() => createQdrantVectorStore(config(), { timeoutMs: 0 })).toThrow('timeoutMs must be a positive number');
    const before = server.requests.length;
    createQdrantVectorStore(config());
    expect(server.requests.length).toBe(before);
  });
});

describe('qdrant collection, payload and requests', () => {
  it('check() creates the collection with the dimension, cosine distance and keyword payload indexes', async () => {
    const store = createQdrantVectorStore(config());
    await store.check({ dimensions: 16 });
    await store.check({ dimensions: 16 });
    const collection = server.collections.get(store.indexName);
    expect(collection?.vectors).toEqual({ size: 16, distance: 'Cosine' });
    expect(Object.fromEntries(collection?.indexes ?? [])).toEqual({
      namespace: { data_type: 'keyword', params: { type: 'keyword', is_tenant: true } },
      documentId: { data_type: 'keyword' },
    });
    const mine = server.requests.filter((r) => r.path.startsWith(`/collections/${store.indexName}`));
    expect(mine.every((r) => r.apiKey === KEY)).toBe(true);
    expect(mine.filter((r) => r.method === 'PUT' && r.path.endsWith('/index')).every((r) => r.query.get('wait') === 'true')).toBe(true);
  });

  it('stores deterministic UUID points with namespace, documentId and chunkId, in batches with wait=true', async () => {
    const store = createQdrantVectorStore(config());
    const records = Array.from({ length: 1200 }, (_, i) => ({ id: `c${i}`, documentId: `d${i % 7}`, vector: unit(1, i % 5, 2) }));
    await store.upsert('proj_1:builtin', records);
    await store.upsert('proj_2:builtin', [{ id: 'c1', documentId: 'd1', vector: unit(0, 1) }]);
    const upserts = server.requests.filter((r) => r.method === 'PUT' && r.path === `/collections/${store.indexName}/points`);
    expect(upsertBatchSize(16)).toBe(500);
    expect(upserts.map((r) => (r.body as { points: unknown[] }).points.length)).toEqual([500, 500, 200, 1]);
    expect(upserts.every((r) => r.query.get('wait') === 'true')).toBe(true);
    const points = server.collections.get(store.indexName)?.points;
    expect(points?.size).toBe(1201);
    const id = qdrantPointId('proj_1:builtin', 'c1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id).toBe(qdrantPointId('proj_1:builtin', 'c1'));
    expect(id).not.toBe(qdrantPointId('proj_2:builtin', 'c1'));
    expect(points?.get(`u${id}`)?.payload).toEqual({ namespace: 'proj_1:builtin', documentId: 'd1', chunkId: 'c1' });
    expect(await store.count('proj_2:builtin')).toBe(1);
  });

  it('refuses an existing collection of another dimension or metric, and writes nothing', async () => {
    const name = indexName();
    const admin = new QdrantClient({ url: server.url, apiKey: KEY, checkCompatibility: false });
    await admin.createCollection(name, { vectors: { size: 8, distance: 'Cosine' } });
    const store = createQdrantVectorStore(config({ indexName: name }));
    const message = `Invalid vectorstore configuration: index "${name}" has dimension 8, the embedding model gives 16`;
    const checked = await failure(store.check({ dimensions: 16 }));
    expect([checked.code, checked.message]).toEqual(['invalid_request', message]);
    expect((await failure(store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]))).message).toBe(message);
    expect((await failure(store.query('ns', { vector: unit(1), topK: 3 }))).message).toContain('Query vector of 16 dimensions');
    expect(server.collections.get(name)?.points.size).toBe(0);

    const dot = indexName();
    await admin.createCollection(dot, { vectors: { size: 16, distance: 'Dot' } });
    const onDot = await failure(createQdrantVectorStore(config({ indexName: dot })).check({ dimensions: 16 }));
    expect(onDot.message).toBe(`Invalid vectorstore configuration: index "${dot}" uses Dot distance, cosine is required`);
  });

  it('creates the collection once for concurrent first writes, and tolerates another instance creating it (409)', async () => {
    const name = indexName();
    const store = createQdrantVectorStore(config({ indexName: name }));
    const other = createQdrantVectorStore(config({ indexName: name }));
    await Promise.all([store.upsert('a', [{ id: 'x', documentId: 'd', vector: unit(1) }]), store.upsert('b', [{ id: 'y', documentId: 'd', vector: unit(0, 1) }]), other.check({ dimensions: 16 })]);
    const creates = server.requests.filter((r) => r.method === 'PUT' && r.path === `/collections/${name}`);
    expect(creates.length).toBeGreaterThanOrEqual(1);
    expect(creates.length).toBeLessThanOrEqual(2);
    expect([await store.count('a'), await store.count('b'), await other.count('a')]).toEqual([1, 1, 1]);

    // Deterministically: the collection appears between our look (404) and our create (409).
    const late = createQdrantVectorStore(config({ indexName: name }));
    server.failNext(404, `Not found: Collection \`${name}\` doesn't exist!`);
    const before = server.requests.length;
    await late.check({ dimensions: 16 });
    expect(server.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([`GET /collections/${name}`, `PUT /collections/${name}`, `GET /collections/${name}`]);
  });

  it('makes the collection again when it was deleted behind its back', async () => {
    const store = createQdrantVectorStore(config());
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]);
    await new QdrantClient({ url: server.url, apiKey: KEY, checkCompatibility: false }).deleteCollection(store.indexName);
    expect(await store.query('ns', { vector: unit(1), topK: 3 })).toEqual([]);
    expect(await store.count('ns')).toBe(0);
    await store.upsert('ns', [{ id: 'b', documentId: 'd', vector: unit(0, 1) }]);
    expect((await store.query('ns', { vector: unit(0, 1), topK: 3 })).map((h) => h.id)).toEqual(['b']);
  });

  it("reads the endpoint as Qdrant's clients do: no port means 6333, a written :443 is kept, a path is a prefix", async () => {
    const noPort = await failure(createQdrantVectorStore({ endpoint: 'http://127.0.0.1', indexName: indexName() }).count('ns'));
    expect(noPort.message).toContain('ECONNREFUSED 127.0.0.1:6333');
    const https443 = await failure(createQdrantVectorStore({ endpoint: 'https://127.0.0.1:443', indexName: indexName() }).count('ns'));
    expect(https443.message).toContain('ECONNREFUSED 127.0.0.1:443');
    // Written as the URL parser reads it: spaces around, a tab inside, the scheme's case, backslashes.
    for (const endpoint of [' http://127.0.0.1:80 ', 'h\tttp://127.0.0.1:80', 'HTTP:\\\\127.0.0.1:80']) {
      const spelled = await failure(createQdrantVectorStore({ endpoint, indexName: indexName() }).count('ns'));
      expect(spelled.message, JSON.stringify(endpoint)).toContain('ECONNREFUSED 127.0.0.1:80');
    }
    const name = indexName();
    const prefixed = await failure(createQdrantVectorStore({ endpoint: `${server.url}/qdrant/`, apiKey: KEY, indexName: name }).check({ dimensions: 16 }));
    expect([prefixed.code, prefixed.message]).toEqual(['upstream_error', `Qdrant at ${server.url}/qdrant answered 404`]);
    expect(server.requests.some((r) => r.path === `/qdrant/collections/${name}`)).toBe(true);
  });

  it('is closed for good after close() (idempotent)', async () => {
    const store = createQdrantVectorStore(config());
    await store.close();
    await store.close();
    expect((await failure(store.count('ns'))).message).toBe('The Qdrant vector store was closed');
  });
});

describe('qdrant failures at run time', () => {
  it('an unreachable endpoint is unavailable (retryable), for check and every call', async () => {
    const port = await closedPort();
    const store = createQdrantVectorStore({ endpoint: `http://127.0.0.1:${port}`, indexName: indexName() });
    const checked = await failure(store.check({ dimensions: 16 }));
    expect(checked.code).toBe('unavailable');
    expect(checked.retryable).toBe(true);
    expect(checked.message).toBe(`Qdrant at http://127.0.0.1:${port} could not be reached: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect((await failure(store.query('ns', { vector: unit(1), topK: 1 }))).code).toBe('unavailable');
    expect((await failure(store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]))).code).toBe('unavailable');
  });

  it('a wrong or missing API key is an invalid configuration (401), without the key in the message', async () => {
    const wrong = createQdrantVectorStore(config({ apiKey: 'not-the-key' }));
    for (const call of [() => wrong.check({ dimensions: 16 }), () => wrong.count('ns'), () => wrong.query('ns', { vector: unit(1), topK: 1 })]) {
      const error = await failure(call());
      expect([error.code, error.message]).toEqual(['invalid_request', 'Invalid vectorstore configuration: Qdrant refused the API key (401)']);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain('not-the-key');
    }
    const none = await failure(createQdrantVectorStore(config({ apiKey: undefined })).check({ dimensions: 16 }));
    expect(none.message).toBe('Invalid vectorstore configuration: Qdrant requires an API key (401): set apiKey');
  });

  it('a stopped and restarted server: calls fail as unavailable while it is down, then work with the same store', async () => {
    const restarted = await startQdrantTestServer({ apiKey: KEY });
    try {
      const store: VectorStore = createQdrantVectorStore({ endpoint: restarted.url, apiKey: KEY, indexName: indexName() });
      await store.upsert('ns', [{ id: 'a', documentId: 'd1', vector: unit(1) }]);
      expect(await store.count('ns')).toBe(1);

      await restarted.stop();
      for (const call of [
        () => store.count('ns'),
        () => store.query('ns', { vector: unit(1), topK: 1 }),
        () => store.upsert('ns', [{ id: 'b', documentId: 'd2', vector: unit(0, 1) }]),
        () => store.deleteDocument('ns', 'd1'),
        () => store.dropNamespace('ns'),
        () => (store.check as NonNullable<VectorStore['check']>)({ dimensions: 16 }),
      ]) {
        const error = await failure(call());
        expect(error.code).toBe('unavailable');
        expect(error.message).toMatch(new RegExp(`^Qdrant at ${restarted.url} could not be reached: `));
      }

      await restarted.start();
      expect(await store.count('ns')).toBe(1);
      await store.upsert('ns', [{ id: 'b', documentId: 'd2', vector: unit(0, 1) }]);
      expect((await store.query('ns', { vector: unit(0, 1), topK: 1 })).map((h) => [h.id, h.documentId])).toEqual([['b', 'd2']]);
      expect(await store.deleteDocument('ns', 'd1')).toBe(1);
    } finally {
      await restarted.stop();
    }
  });

  it('a server that does not answer is a timeout; the next call after it recovers works', async () => {
    const store = createQdrantVectorStore(config(), { timeoutMs: 150 });
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]);
    server.delayMs = Infinity;
    try {
      const error = await failure(store.count('ns'));
      expect([error.code, error.message, error.retryable]).toEqual(['timeout', `Qdrant at ${server.url} did not answer within 150 ms`, true]);
    } finally {
      server.delayMs = 0;
    }
    expect(await store.count('ns')).toBe(1);
  });

  it("other answers are upstream errors carrying Qdrant's status, never its text", async () => {
    const store = createQdrantVectorStore(config());
    server.failNext(500, 'Service internal error: disk full');
    const error = await failure(store.count('ns'));
    expect([error.code, error.message, error.retryable]).toEqual(['upstream_error', `Qdrant at ${server.url} answered 500`, true]);
    expect(await store.count('ns')).toBe(0);
  });

  it('check() rejects as aborted when its signal fires', async () => {
    const store = createQdrantVectorStore(config());
    expect((await failure(store.check({ dimensions: 16, signal: AbortSignal.abort() }))).code).toBe('aborted');
    server.delayMs = 2_000;
    try {
      expect((await failure(store.check({ dimensions: 16, signal: AbortSignal.timeout(50) }))).code).toBe('aborted');
    } finally {
      server.delayMs = 0;
    }
  });
});
