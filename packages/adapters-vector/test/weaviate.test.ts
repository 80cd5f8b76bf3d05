import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { isPlatformError, type PlatformError, type VectorStore } from '@agent-platform/core';
import { describeVectorStore } from '@agent-platform/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createWeaviateVectorStore, parseWeaviateConfig } from '../src/weaviate/index.js';
import { chunkUuid } from '../src/weaviate/schema.js';
import { startWeaviateTestServer, type WeaviateTestServer } from './fixtures/weaviate-server.js';

const API_KEY = 'wv-test-key-5b1c';
const className = () => `It${randomBytes(6).toString('hex')}`;

let server: WeaviateTestServer;
beforeAll(async () => {
  server = await startWeaviateTestServer({ apiKey: API_KEY });
});
afterAll(async () => {
  await server?.close();
});

const configOf = (s: WeaviateTestServer, extra: Record<string, unknown> = {}) => ({
  endpoint: s.endpoint,
  grpcEndpoint: s.grpcEndpoint,
  apiKey: API_KEY,
  indexName: className(),
  ...extra,
});

/** The rejection of `promise`, which must be a PlatformError. */
async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlatformError(error)) throw new Error(`expected a PlatformError, got ${String(error)}`);
  return error;
}

/** A 127.0.0.1 port that nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const unit = (...xs: number[]) => {
  const v = new Float32Array(16);
  const norm = Math.hypot(...xs);
  for (const [i, x] of xs.entries()) v[i] = x / norm;
  return v;
};

describeVectorStore('weaviate (test server, official client over REST + gRPC)', {
  create: () => createWeaviateVectorStore(configOf(server)),
  dimensions: 16,
});

// Against a real Weaviate when one is given, e.g. WEAVIATE_URL=http://127.0.0.1:8080
// WEAVIATE_GRPC_URL=http://127.0.0.1:50051 (WEAVIATE_API_KEY optional).
const realUrl = process.env.WEAVIATE_URL;
describe.runIf(realUrl)('real Weaviate', () => {
  describeVectorStore('weaviate (real server)', {
    create: () =>
      createWeaviateVectorStore({
        endpoint: realUrl,
        indexName: className(),
        ...(process.env.WEAVIATE_GRPC_URL ? { grpcEndpoint: process.env.WEAVIATE_GRPC_URL } : {}),
        ...(process.env.WEAVIATE_API_KEY ? { apiKey: process.env.WEAVIATE_API_KEY } : {}),
      }),
    dimensions: 16,
  });
});

describe('weaviate settings validation', () => {
  const base = { indexName: 'AgentPlatform', endpoint: 'http://127.0.0.1:8080' };
  const invalid = (config: unknown) => {
    try {
      createWeaviateVectorStore(config);
    } catch (error) {
      if (isPlatformError(error) && error.code === 'invalid_request') return error.message;
      throw error;
    }
    throw new Error('accepted');
  };

  it('names each missing, mistyped or unknown key', () => {
    expect(invalid({ indexName: 'X' })).toBe('Invalid vectorstore configuration: endpoint is required for weaviate');
    expect(invalid({ endpoint: base.endpoint })).toBe('Invalid vectorstore configuration: indexName is required');
    expect(invalid({ ...base, endpoint: 'localhost:8080' })).toBe('Invalid vectorstore configuration: endpoint must be an http(s) URL');
    expect(invalid({ ...base, endpoint: 'ftp://127.0.0.1' })).toBe('Invalid vectorstore configuration: endpoint must be an http(s) URL');
    expect(invalid({ ...base, endpoint: 8080 })).toBe('Invalid vectorstore configuration: endpoint must be a string');
    expect(invalid({ ...base, indexName: 7 })).toBe('Invalid vectorstore configuration: indexName must be a string');
    expect(invalid({ ...base, apiKey: 42 })).toBe('Invalid vectorstore configuration: apiKey must be a string');
    expect(invalid({ ...base, indexName: 'agent-platform' })).toMatch(/indexName must be a Weaviate class name/);
    expect(invalid({ ...base, grpcEndpoint: 'http://127.0.0.1:50051/v1' })).toMatch(/grpcEndpoint must not have a path/);
    expect(invalid({ ...base, endpoint: 'http://user:pw@127.0.0.1:8080' })).toMatch(/endpoint must not carry credentials/);
    // A base URL: no query string or fragment, not even an empty one.
    for (const endpoint of ['http://127.0.0.1:8080/?', 'http://127.0.0.1:8080/w?x=1', 'http://127.0.0.1:8080/#']) {
      expect(invalid({ ...base, endpoint }), endpoint).toBe('Invalid vectorstore configuration: endpoint must not have a query string or fragment (paths are appended to a base URL)');
    }
    expect(invalid({ ...base, grpcEndpoint: 'http://127.0.0.1:50051?' })).toBe(
      'Invalid vectorstore configuration: grpcEndpoint must not have a query string or fragment (paths are appended to a base URL)',
    );
    expect(invalid({ ...base, environment: 'us-east-1', region: 'x' })).toBe(
      'Invalid vectorstore configuration: unknown keys "environment", "region" (weaviate takes indexName, endpoint, apiKey, grpcEndpoint)',
    );
    expect(invalid('http://127.0.0.1:8080')).toBe('Invalid vectorstore configuration: vectorStoreConfig must be an object');
  });

  it('accepts empty optional fields as unset', () => {
    expect(parseWeaviateConfig({ ...base, apiKey: '', grpcEndpoint: null })).toEqual(base);
  });
});

describe('weaviate store', () => {
  const stores: VectorStore[] = [];
  const open = (config: Record<string, unknown>, options?: { timeoutMs?: number }) => {
    const store = createWeaviateVectorStore(config, options);
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    vi.restoreAllMocks();
  });

  it('creates the class on first use: cosine, no vectorizer, exact-match properties, derived UUIDs', async () => {
    const config = configOf(server, { indexName: `lower${randomBytes(4).toString('hex')}` });
    const store = open(config);
    await store.upsert('proj_a:builtin:m', [{ id: 'chunk-1', documentId: 'doc-1', vector: unit(1, 2) }]);
    const name = `L${config.indexName.slice(1)}`;
    const res = await fetch(`${server.endpoint}/v1/schema/${name}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    const schema = (await res.json()) as Record<string, any>;
    expect(schema.class).toBe(name);
    expect(schema.vectorizer).toBe('none');
    expect(schema.vectorIndexType).toBe('hnsw');
    expect(schema.vectorIndexConfig.distance).toBe('cosine');
    expect(schema.properties.map((p: any) => [p.name, p.dataType[0], p.tokenization, p.indexFilterable])).toEqual([
      ['namespace', 'text', 'field', true],
      ['documentId', 'text', 'field', true],
      ['chunkId', 'text', 'field', false],
    ]);
    const objects = [...(server.collections.get(name)?.objects.values() ?? [])];
    expect(objects).toHaveLength(1);
    expect(objects[0]?.uuid).toBe(chunkUuid('proj_a:builtin:m', 'chunk-1'));
    expect(objects[0]?.properties).toEqual({ namespace: 'proj_a:builtin:m', documentId: 'doc-1', chunkId: 'chunk-1' });
  });

  it('derives a stable UUID per namespace and chunk id', () => {
    const id = chunkUuid('ns', 'c');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(chunkUuid('ns', 'c')).toBe(id);
    expect(chunkUuid('ns2', 'c')).not.toBe(id);
    expect(chunkUuid('ns', 'c2')).not.toBe(id);
  });

  it('keeps namespaces apart even when one is a word of another (field tokenization)', async () => {
    const store = open(configOf(server));
    await store.upsert('proj a', [{ id: 'x', documentId: 'd', vector: unit(1) }]);
    await store.upsert('a proj', [{ id: 'y', documentId: 'd', vector: unit(1) }]);
    expect(await store.count('proj a')).toBe(1);
    expect((await store.query('proj', { vector: unit(1), topK: 5 })).length).toBe(0);
    expect(await store.deleteDocument('proj a', 'd')).toBe(1);
    expect(await store.count('a proj')).toBe(1);
  });

  it('upserts in batches of at most 200 objects, several in flight', async () => {
    const store = open(configOf(server));
    const before = server.calls.length;
    const records = Array.from({ length: 1000 }, (_, i) => ({ id: `c${i}`, documentId: `d${i % 7}`, vector: unit(1, i % 13, i % 5) }));
    await store.upsert('ns', records);
    const batches = server.calls.slice(before).filter((c) => c.method === 'BatchObjects');
    expect(batches.map((b) => b.objects)).toEqual([200, 200, 200, 200, 200]);
    expect(await store.count('ns')).toBe(1000);
  });

  it("deletes past Weaviate's per-call limit (QUERY_MAXIMUM_RESULTS)", async () => {
    const small = await startWeaviateTestServer({ apiKey: API_KEY, queryMaximumResults: 50 });
    try {
      const store = open(configOf(small));
      await store.upsert(
        'ns',
        Array.from({ length: 130 }, (_, i) => ({ id: `c${i}`, documentId: i < 120 ? 'big' : 'small', vector: unit(1, i) })),
      );
      expect(await store.deleteDocument('ns', 'big')).toBe(120);
      expect(small.calls.filter((c) => c.method === 'BatchDelete')).toHaveLength(4);
      expect(await store.count('ns')).toBe(10);
      await store.dropNamespace('ns');
      expect(await store.count('ns')).toBe(0);
    } finally {
      await small.close();
    }
  });

  it('check creates the class, then accepts the same dimension', async () => {
    const config = configOf(server);
    const store = open(config);
    await store.check?.({ dimensions: 16 });
    expect(server.collections.has(config.indexName)).toBe(true);
    await store.check?.({ dimensions: 16 });
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]);
    expect(await store.count('ns')).toBe(1);
  });

  it('refuses an existing index of another dimension, naming both', async () => {
    const config = configOf(server);
    const first = open(config);
    await first.upsert('ns', [{ id: 'a', documentId: 'd', vector: new Float32Array([1, 0, 0, 0, 0, 0, 0, 0]) }]);
    const second = open(config);
    const expected = `Invalid vectorstore configuration: index "${config.indexName}" has dimension 8, the embedding model gives 16`;
    const checked = await failure(second.check?.({ dimensions: 16 }) ?? Promise.resolve());
    expect([checked.code, checked.message]).toEqual(['invalid_request', expected]);
    const written = await failure(second.upsert('other', [{ id: 'b', documentId: 'd', vector: unit(1) }]));
    expect([written.code, written.message]).toEqual(['invalid_request', expected]);
    // The same store object, switching models, is refused too (nothing written).
    const switched = await failure(first.upsert('ns2', [{ id: 'c', documentId: 'd', vector: unit(1) }]));
    expect(switched.message).toBe(expected);
    expect(await first.count('ns2')).toBe(0);
  });

  it("maps Weaviate's own vector-length refusal (an emptied index keeps its length) to the same message", async () => {
    const config = configOf(server);
    const first = open(config);
    await first.upsert('ns', [{ id: 'a', documentId: 'd', vector: new Float32Array([1, 0, 0, 0, 0, 0, 0, 0]) }]);
    expect(await first.deleteDocument('ns', 'd')).toBe(1);
    const error = await failure(open(config).upsert('ns', [{ id: 'b', documentId: 'd', vector: unit(1) }]));
    expect([error.code, error.message]).toEqual(['invalid_request', `Invalid vectorstore configuration: index "${config.indexName}" has dimension 8, the embedding model gives 16`]);
  });

  it('refuses an existing class with another metric or without the properties', async () => {
    const post = (body: unknown) =>
      fetch(`${server.endpoint}/v1/schema`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const dot = configOf(server);
    await post({ class: dot.indexName, vectorizer: 'none', vectorIndexConfig: { distance: 'dot' } });
    const metric = await failure(open(dot).check?.({ dimensions: 16 }) ?? Promise.resolve());
    expect(metric.message).toBe(`Invalid vectorstore configuration: index "${dot.indexName}" uses distance dot, it must be cosine`);
    const foreign = configOf(server);
    await post({
      class: foreign.indexName,
      properties: [
        { name: 'namespace', dataType: ['text'] },
        { name: 'documentId', dataType: ['text'] },
        { name: 'chunkId', dataType: ['text'] },
      ],
    });
    const props = await failure(open(foreign).upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]));
    expect(props.message).toBe(`Invalid vectorstore configuration: index "${foreign.indexName}": property namespace must be filterable with tokenization field (it has word)`);
  });

  it('reports a refused or missing API key, never echoing it', async () => {
    const wrong = await failure(open(configOf(server, { apiKey: 'not-the-key' })).check?.({ dimensions: 16 }) ?? Promise.resolve());
    expect([wrong.code, wrong.message]).toEqual(['invalid_request', 'Invalid vectorstore configuration: Weaviate refused the API key (401)']);
    expect(JSON.stringify({ message: wrong.message, details: wrong.details })).not.toContain('not-the-key');
    const missing = await failure(open(configOf(server, { apiKey: undefined })).query('ns', { vector: unit(1), topK: 1 }));
    expect(missing.message).toBe('Invalid vectorstore configuration: Weaviate requires an API key (401): set apiKey');
  });

  it('maps a key refused over gRPC (rotated while the store runs) to the same message', async () => {
    const rotating = await startWeaviateTestServer({ apiKey: API_KEY });
    try {
      const store = open(configOf(rotating));
      await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]);
      rotating.apiKey = 'rotated';
      const error = await failure(store.count('ns'));
      expect([error.code, error.message]).toEqual(['invalid_request', 'Invalid vectorstore configuration: Weaviate refused the API key (401)']);
    } finally {
      await rotating.close();
    }
  });

  it('reports an unreachable endpoint as unavailable (REST and gRPC ports closed)', async () => {
    const port = await closedPort();
    const endpoint = `http://127.0.0.1:${port}`;
    const store = open({ endpoint, grpcEndpoint: endpoint, indexName: className() });
    const checked = await failure(store.check?.({ dimensions: 16 }) ?? Promise.resolve());
    expect(checked.code).toBe('unavailable');
    expect(checked.retryable).toBe(true);
    expect(checked.message).toMatch(new RegExp(`^Weaviate at ${endpoint} could not be reached: .*ECONNREFUSED`));
    expect((await failure(store.query('ns', { vector: unit(1), topK: 3 }))).code).toBe('unavailable');
  });

  it('reports a gRPC port where nothing listens as unavailable at once (the client would retry for seconds)', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const port = await closedPort();
    const store = open(configOf(server, { grpcEndpoint: `http://127.0.0.1:${port}` }));
    const started = performance.now();
    const error = await failure(store.check?.({ dimensions: 16 }) ?? Promise.resolve());
    expect(error.code).toBe('unavailable');
    expect(error.message).toMatch(new RegExp(`could not be reached: gRPC at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('fails clearly while the server is down and works again, with the same store, when it is back', async () => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
    const restarting = await startWeaviateTestServer({ apiKey: API_KEY });
    try {
      const store = open(configOf(restarting));
      await store.upsert('ns', [
        { id: 'a', documentId: 'd1', vector: unit(1, 0) },
        { id: 'b', documentId: 'd2', vector: unit(0, 1) },
      ]);
      expect((await store.query('ns', { vector: unit(1, 0), topK: 1 }))[0]?.id).toBe('a');

      await restarting.stop();
      for (const call of [
        () => store.query('ns', { vector: unit(1, 0), topK: 1 }),
        () => store.count('ns'),
        () => store.upsert('ns', [{ id: 'c', documentId: 'd3', vector: unit(1, 1) }]),
        () => store.deleteDocument('ns', 'd1'),
      ]) {
        const started = performance.now();
        const error = await failure(call());
        expect(error.code).toBe('unavailable');
        expect(error.message).toMatch(new RegExp(`^Weaviate at ${restarting.endpoint} could not be reached: `));
        expect(performance.now() - started).toBeLessThan(3000);
      }

      await restarting.start();
      expect((await store.query('ns', { vector: unit(1, 0), topK: 1 }))[0]?.id).toBe('a');
      await store.upsert('ns', [{ id: 'c', documentId: 'd3', vector: unit(1, 1) }]);
      expect(await store.count('ns')).toBe(3);
      expect(await store.deleteDocument('ns', 'd1')).toBe(1);
    } finally {
      await restarting.close();
    }
  });

  it('times out a request that gets no answer, then works when the server answers again', async () => {
    const config = configOf(server);
    const store = open(config, { timeoutMs: 1000 });
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }]);
    server.stall = true;
    try {
      const error = await failure(store.query('ns', { vector: unit(1), topK: 1 }));
      expect([error.code, error.message]).toEqual(['timeout', `Weaviate at ${server.endpoint} did not answer within 1000 ms`]);
    } finally {
      server.stall = false;
    }
    expect((await store.query('ns', { vector: unit(1), topK: 1 }))[0]?.id).toBe('a');
  });

  it('refuses a Weaviate older than 1.29 in check', async () => {
    const old = await startWeaviateTestServer({ apiKey: API_KEY, version: '1.28.3' });
    try {
      const error = await failure(open(configOf(old)).check?.({ dimensions: 16 }) ?? Promise.resolve());
      expect([error.code, error.message]).toEqual(['invalid_request', 'Invalid vectorstore configuration: Weaviate 1.28.3 is too old: the adapter needs 1.29 or newer']);
      expect(old.collections.size).toBe(0);
    } finally {
      await old.close();
    }
  });

  it('stops a check when its signal aborts', async () => {
    const store = open(configOf(server));
    const error = await failure(store.check?.({ dimensions: 16, signal: AbortSignal.abort() }) ?? Promise.resolve());
    expect(error.code).toBe('aborted');
  });
});
