import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPlatformError, type PlatformError, type VectorStore } from '@agent-platform/core';
import { describeVectorStore } from '@agent-platform/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { documentPrefix, pineconeNamespace, recordId } from '../src/pinecone/ids.js';
import { createPineconeVectorStore, DEFAULT_PINECONE_ENDPOINT, parsePineconeConfig } from '../src/pinecone/index.js';
import { type PineconeTestServer, startPineconeTestServer } from './fixtures/pinecone-server.js';

// Pinecone cannot run here: the official client talks to a test server that speaks the
// documented REST API (test/fixtures/pinecone-server.ts).
let server: PineconeTestServer;
const extraServers: PineconeTestServer[] = [];
const stores: VectorStore[] = [];
beforeAll(async () => {
  server = await startPineconeTestServer();
});
afterAll(async () => {
  await Promise.all([server, ...extraServers].map((s) => s.stop()));
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const indexName = () => `it-${randomBytes(6).toString('hex')}`;
const open = (config: Record<string, unknown>, options?: Parameters<typeof createPineconeVectorStore>[1]) => {
  const store = createPineconeVectorStore(config, options);
  stores.push(store);
  return store;
};
const openOn = (s: PineconeTestServer, options?: Parameters<typeof createPineconeVectorStore>[1], name = indexName()) => open({ apiKey: s.apiKey, endpoint: s.url, indexName: name }, options);
const extraServer = async (options?: Parameters<typeof startPineconeTestServer>[0]) => {
  const s = await startPineconeTestServer(options);
  extraServers.push(s);
  return s;
};

const unit = (...xs: number[]) => {
  const norm = Math.hypot(...xs);
  const v = new Float32Array(Math.max(xs.length, 16));
  for (const [i, x] of xs.entries()) v[i] = x / norm;
  return v;
};

async function failure(promise: Promise<unknown>): Promise<PlatformError> {
  try {
    await promise;
  } catch (error) {
    if (isPlatformError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}
function thrown(fn: () => unknown): PlatformError {
  try {
    fn();
  } catch (error) {
    if (isPlatformError(error)) return error;
    throw error;
  }
  throw new Error('expected a PlatformError');
}

describeVectorStore('pinecone (test server)', {
  create: () => createPineconeVectorStore({ apiKey: server.apiKey, endpoint: server.url, indexName: indexName() }),
  dimensions: 16,
});

describe('pinecone settings', () => {
  const valid = { indexName: 'agent-platform', apiKey: 'pc-key' };

  it.each([
    [{ indexName: 'x' }, 'apiKey is required for pinecone'],
    [{ indexName: 'x', apiKey: '  ' }, 'apiKey is required for pinecone'],
    [{ indexName: 'x', apiKey: 42 }, 'apiKey must be a string'],
    [{ apiKey: 'k' }, 'indexName is required'],
    [{ apiKey: 'k', indexName: 7 }, 'indexName must be a string'],
    [{ apiKey: 'k', indexName: 'My_Index' }, 'indexName must be 1-45 lower-case letters'],
    [{ ...valid, endpoint: 'ftp://pinecone.example' }, 'endpoint must be an http(s) URL'],
    [{ ...valid, endpoint: 'not a url' }, 'endpoint must be an http(s) URL'],
    [{ ...valid, endpoint: 443 }, 'endpoint must be a string'],
    [{ ...valid, endpoint: 'https://user:pass@pinecone.example' }, 'endpoint must not carry credentials, a query or a fragment'],
    [{ ...valid, endpoint: 'https://pinecone.example/?key=secret' }, 'endpoint must not carry credentials, a query or a fragment'],
    // Even an empty query or fragment: the client appends its paths to the endpoint as text.
    [{ ...valid, endpoint: 'https://pinecone.example/?' }, 'endpoint must not carry credentials, a query or a fragment'],
    [{ ...valid, endpoint: 'https://pinecone.example#' }, 'endpoint must not carry credentials, a query or a fragment'],
    [{ ...valid, region: 'us-east-1' }, 'unknown key region for pinecone'],
  ])('refuses %j', (config, reason) => {
    const error = thrown(() => createPineconeVectorStore(config));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain(`Invalid vectorstore configuration: ${reason}`);
  });

  it('refuses a configuration that is not an object, and names the key in the issues', () => {
    for (const config of [null, 'pinecone', [valid]]) expect(thrown(() => createPineconeVectorStore(config)).code).toBe('invalid_request');
    expect(thrown(() => parsePineconeConfig({ indexName: 'x' })).issues?.[0]?.path).toEqual(['settings', 'vectorStoreConfig', 'apiKey']);
  });

  it('defaults the endpoint to Pinecone and accepts the legacy environment key', () => {
    expect(parsePineconeConfig({ ...valid, environment: 'us-west1-gcp' })).toEqual({ ...valid, endpoint: DEFAULT_PINECONE_ENDPOINT });
    expect(parsePineconeConfig({ ...valid, endpoint: 'http://127.0.0.1:5080/' }).endpoint).toBe('http://127.0.0.1:5080');
  });
});

describe('pinecone at run time', () => {
  it('is unavailable, clearly, when nothing listens at the endpoint', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const store = open({ apiKey: 'k', endpoint: `http://127.0.0.1:${port}`, indexName: 'it-down' });
    for (const call of [store.check({ dimensions: 16 }), store.query('ns', { vector: unit(1), topK: 1 }), store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }])]) {
      const error = await failure(call);
      expect(error.code).toBe('unavailable');
      expect(error.retryable).toBe(true);
      expect(error.message).toMatch(new RegExp(`^pinecone at http://127\\.0\\.0\\.1:${port} could not be reached: .*ECONNREFUSED`));
    }
  });

  it('reports a refused API key without showing it', async () => {
    const store = open({ apiKey: 'pc-wrong-secret', endpoint: server.url, indexName: indexName() });
    const error = await failure(store.check({ dimensions: 16 }));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toBe('Invalid vectorstore configuration: pinecone refused the API key (401)');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain('pc-wrong-secret');
    expect(server.requests.at(-1)).toMatchObject({ plane: 'control', apiKey: 'pc-wrong-secret' });
  });

  it('refuses an existing index of another dimension or metric, and writes nothing', async () => {
    const name = indexName();
    await server.addIndex(name, 8);
    const store = openOn(server, undefined, name);
    const expected = `Invalid vectorstore configuration: index "${name}" has dimension 8, the embedding model gives 16`;
    await expect(store.check({ dimensions: 16 })).rejects.toMatchObject({ code: 'invalid_request', message: expected });
    await expect(store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1) }])).rejects.toMatchObject({ code: 'invalid_request', message: expected });
    await expect(store.query('ns', { vector: unit(1), topK: 1 })).rejects.toMatchObject({ code: 'invalid_request' });
    expect(server.indexes.get(name)?.namespaces.size).toBe(0);

    const euclidean = indexName();
    await server.addIndex(euclidean, 16, 'euclidean');
    await expect(openOn(server, undefined, euclidean).check({ dimensions: 16 })).rejects.toMatchObject({
      code: 'invalid_request',
      message: `Invalid vectorstore configuration: index "${euclidean}" uses the euclidean metric, the knowledge base needs cosine`,
    });
  });

  it('creates a serverless cosine index on first write and waits until it is ready; reads create nothing', async () => {
    const name = indexName();
    const store = openOn(server, undefined, name);
    expect(await store.query('ns', { vector: unit(1), topK: 3 })).toEqual([]);
    expect(await store.count('ns')).toBe(0);
    expect(await store.deleteDocument('ns', 'd')).toBe(0);
    await store.dropNamespace('ns');
    expect(server.indexes.has(name)).toBe(false);

    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1, 1) }]);
    const created = server.requests.find((r) => r.method === 'POST' && r.path === '/indexes' && r.body?.name === name);
    expect(created?.body).toEqual({ name, dimension: 16, metric: 'cosine', spec: { serverless: { cloud: 'aws', region: 'us-east-1' } } });
    const index = server.indexes.get(name)!;
    const firstWrite = server.requests.find((r) => r.index === name);
    expect(firstWrite?.at).toBeGreaterThanOrEqual(index.readyAt);
    expect(server.requests.filter((r) => r.path === `/indexes/${name}`).length).toBeGreaterThanOrEqual(3);
    expect(await store.count('ns')).toBe(1);
  });

  it('creates the index once when several first writes race (a 409 means it exists)', async () => {
    const s = await extraServer();
    // Slow answers: the three writes all find the index missing before any creates it.
    s.delayMs = 50;
    const name = indexName();
    const [a, b] = [openOn(s, undefined, name), openOn(s, undefined, name)];
    await Promise.all([a, b, a].map((store, i) => store.upsert('ns', [{ id: `c${i}`, documentId: 'd', vector: unit(1, i) }])));
    expect(s.requests.filter((r) => r.method === 'POST' && r.path === '/indexes').length).toBe(3);
    expect(s.indexes.size).toBe(1);
    expect(await b.count('ns')).toBe(3);
  });

  it('creates the index on check, and bounds the wait for it', async () => {
    const name = indexName();
    await openOn(server, undefined, name).check({ dimensions: 24 });
    expect(server.indexes.get(name)).toMatchObject({ dimension: 24, metric: 'cosine' });

    const slow = await extraServer({ readyAfterMs: 60_000 });
    const error = await failure(openOn(slow, { readyTimeoutMs: 400 }).check({ dimensions: 16 }));
    expect(error.code).toBe('timeout');
    expect(error.message).toMatch(/was not ready within 400 ms \(state Initializing\)/);
  });

  it('speaks the documented wire format: native namespaces, <documentId>#<chunkId> ids, metadata filters, headers', async () => {
    const name = indexName();
    const store = openOn(server, undefined, name);
    await store.upsert('proj_x:builtin:use-lite-512', [
      { id: 'c1', documentId: 'doc_1', vector: unit(1, 0) },
      { id: 'c2', documentId: 'doc_2', vector: unit(0, 1) },
    ]);
    const hits = await store.query('proj_x:builtin:use-lite-512', { vector: unit(1, 0), topK: 5, documentIds: ['doc_2'] });
    expect(hits.map((h) => [h.id, h.documentId])).toEqual([['c2', 'doc_2']]);

    const stored = server.indexes.get(name)!.namespaces.get('proj_x:builtin:use-lite-512');
    expect([...(stored?.keys() ?? [])].sort()).toEqual(['doc_1#c1', 'doc_2#c2']);
    expect(stored?.get('doc_1#c1')?.metadata).toEqual({ documentId: 'doc_1', chunkId: 'c1' });
    const query = server.requests.find((r) => r.index === name && r.path === '/query');
    expect(query?.body).toMatchObject({ namespace: 'proj_x:builtin:use-lite-512', topK: 5, includeMetadata: true, includeValues: false, filter: { documentId: { $in: ['doc_2'] } } });
    const mine = server.requests.filter((r) => r.index === name || r.path.includes(name));
    expect(mine.every((r) => r.apiKey === server.apiKey && r.apiVersion === '2026-04')).toBe(true);
  });

  it("upserts in batches within Pinecone's limits (1,000 vectors, 2 MB)", async () => {
    const name = indexName();
    const store = openOn(server, undefined, name);
    const vector = (i: number) => Float32Array.from({ length: 384 }, (_, j) => Math.sin(i + j * 0.37));
    await store.upsert(
      'big',
      Array.from({ length: 1500 }, (_, i) => ({ id: `c${i}`, documentId: `d${i % 7}`, vector: vector(i) })),
    );
    const upserts = server.requests.filter((r) => r.index === name && r.path === '/vectors/upsert');
    expect(upserts.length).toBeGreaterThanOrEqual(4);
    expect(upserts.every((r) => r.body.vectors.length <= 1000 && Buffer.byteLength(JSON.stringify(r.body)) <= 2 * 1024 * 1024)).toBe(true);
    expect(upserts.reduce((n, r) => n + r.body.vectors.length, 0)).toBe(1500);
    expect(await store.count('big')).toBe(1500);
    const small = indexName();
    await openOn(server, undefined, small).upsert(
      's',
      Array.from({ length: 2500 }, (_, i) => ({ id: `c${i}`, documentId: 'd', vector: unit(1, i) })),
    );
    expect(server.requests.filter((r) => r.index === small && r.path === '/vectors/upsert').map((r) => r.body.vectors.length)).toEqual([1000, 1000, 500]);
  });

  it('deletes a document by listing its id prefix page by page, never touching look-alike documents', async () => {
    const name = indexName();
    const store = openOn(server, undefined, name);
    await store.upsert('ns', [
      ...Array.from({ length: 250 }, (_, i) => ({ id: `c${i}`, documentId: 'doc', vector: unit(1, i) })),
      { id: 'x', documentId: 'doc2', vector: unit(0, 1) },
      { id: 'b#c', documentId: 'a', vector: unit(1, 1) },
      { id: 'y', documentId: 'a#b', vector: unit(1, 2) },
    ]);
    expect(await store.deleteDocument('ns', 'doc')).toBe(250);
    const lists = server.requests.filter((r) => r.index === name && r.path.startsWith('/vectors/list'));
    expect(lists.length).toBe(3);
    expect(new URL(lists[0]!.path, 'http://x').searchParams.get('prefix')).toBe('doc#');
    expect(await store.deleteDocument('ns', 'a#b')).toBe(1);
    expect((await store.query('ns', { vector: unit(1, 1), topK: 10 })).map((h) => [h.id, h.documentId]).sort()).toEqual([
      ['b#c', 'a'],
      ['x', 'doc2'],
    ]);
    expect(await store.count('ns')).toBe(2);
  });

  it('keeps any namespace and id apart, whatever their characters and length', async () => {
    const store = openOn(server);
    const long = `proj_${'x'.repeat(600)}`;
    await store.upsert('proj_ü:m', [{ id: 'chünk', documentId: 'dœc', vector: unit(1) }]);
    await store.upsert('proj_u:m', [{ id: 'c', documentId: 'd', vector: unit(1) }]);
    await store.upsert(long, [{ id: 'c'.repeat(700), documentId: 'd'.repeat(300), vector: unit(1) }]);
    expect(await store.query('proj_ü:m', { vector: unit(1), topK: 5 })).toEqual([{ id: 'chünk', documentId: 'dœc', score: expect.closeTo(1, 5) }]);
    expect([await store.count('proj_ü:m'), await store.count('proj_u:m'), await store.count(long)]).toEqual([1, 1, 1]);
    expect((await store.query(long, { vector: unit(1), topK: 1 }))[0]?.id).toBe('c'.repeat(700));
    expect(await store.deleteDocument(long, 'd'.repeat(300))).toBe(1);
    expect(pineconeNamespace('proj_ü:m')).toBe('proj_%C3%BC:m');
    expect(pineconeNamespace(long)).toMatch(/^~[0-9a-f]{64}$/);
    expect(recordId('a#b', 'c')).toBe('a%23b#c');
    expect(documentPrefix('a')).toBe('a#');
    expect(recordId('d', 'x'.repeat(600)).length).toBeLessThanOrEqual(512);
  });

  it('fails clearly while the server is down and works again, with the same store, once it is back', async () => {
    const s = await extraServer();
    const store = openOn(s);
    await store.upsert('ns', [{ id: 'a', documentId: 'd', vector: unit(1, 0) }]);
    await s.stop();
    for (const call of [store.query('ns', { vector: unit(1, 0), topK: 1 }), store.count('ns'), store.upsert('ns', [{ id: 'b', documentId: 'd', vector: unit(0, 1) }])]) {
      const error = await failure(call);
      expect(error.code).toBe('unavailable');
      expect(error.message).toMatch(/^pinecone at http:\/\/127\.0\.0\.1:\d+ could not be reached: /);
    }
    await s.start();
    expect(await store.query('ns', { vector: unit(1, 0), topK: 1 })).toEqual([{ id: 'a', documentId: 'd', score: expect.closeTo(1, 5) }]);
    await store.upsert('ns', [{ id: 'b', documentId: 'd', vector: unit(0, 1) }]);
    expect(await store.count('ns')).toBe(2);
  });

  it("maps timeouts, Pinecone's own errors (after the client's retries) and aborts", async () => {
    const s = await extraServer();
    const store = openOn(s, { timeoutMs: 150 });
    await store.check({ dimensions: 16 });
    s.delayMs = 600;
    const late = await failure(store.count('ns'));
    expect(late.code).toBe('timeout');
    expect(late.message).toMatch(/^pinecone at http:\/\/127\.0\.0\.1:\d+ did not answer within 150 ms$/);
    s.delayMs = 0;
    // Let the late request end on the server before failures are scripted.
    await new Promise((resolve) => setTimeout(resolve, 700));

    s.failNext(4, 500, 'Internal error: shard unavailable');
    const broken = await failure(store.count('ns'));
    expect(broken).toMatchObject({ code: 'upstream_error', message: expect.stringMatching(/^pinecone at http:\/\/127\.0\.0\.1:\d+ answered 500$/), retryable: true });
    expect(await store.count('ns')).toBe(0);

    s.failNext(1, 400, 'Bad request: something');
    expect(await failure(store.count('ns'))).toMatchObject({ code: 'upstream_error', message: expect.stringMatching(/^pinecone at http:\/\/127\.0\.0\.1:\d+ answered 400$/), retryable: false });

    const aborted = await failure(store.check({ dimensions: 16, signal: AbortSignal.abort() }));
    expect(aborted.code).toBe('aborted');
  });

  it('closes idempotently and refuses calls afterwards', async () => {
    const store = openOn(server);
    await store.close();
    await store.close();
    expect((await failure(store.count('ns'))).message).toBe('The pinecone vector store is closed');
  });
});
