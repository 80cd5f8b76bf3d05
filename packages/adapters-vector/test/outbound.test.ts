import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuardedFetch, createOutboundPolicy, type GuardedFetch, type VectorStore } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startForwarder, trapsAvailable } from '../../core/test/traps.js';
import { createChromaVectorStore } from '../src/chroma/index.js';
import { createPineconeVectorStore } from '../src/pinecone/index.js';
import { createQdrantVectorStore } from '../src/qdrant/index.js';
import { createWeaviateVectorStore } from '../src/weaviate/index.js';
import { type ChromaServer, startChromaServer } from './fixtures/chroma-server.js';
import { type PineconeTestServer, startPineconeTestServer } from './fixtures/pinecone-server.js';
import { type QdrantTestServer, startQdrantTestServer } from './fixtures/qdrant-server.js';
import { startWeaviateTestServer, type WeaviateTestServer } from './fixtures/weaviate-server.js';

/**
 * Every connection of each store's client goes through the fetch it is given. The stores are
 * configured with a host name only the guarded fetch's own resolver knows (`stores.test`,
 * answered 127.0.0.1; nothing else in the test namespace can resolve it): a request that went
 * around the guarded fetch, or a gRPC connection not made to the checked address, could not
 * reach the test server at all.
 */

let qdrant: QdrantTestServer;
let pinecone: PineconeTestServer;
let weaviate: WeaviateTestServer;
let chroma: ChromaServer;
let guarded: GuardedFetch;
const lookups: string[] = [];

beforeAll(async () => {
  [qdrant, pinecone, weaviate, chroma] = await Promise.all([startQdrantTestServer(), startPineconeTestServer({ readyAfterMs: 0 }), startWeaviateTestServer(), startChromaServer()]);
  // The stores' test servers listen on 127.0.0.1: allowed as `--allow-host 127.0.0.1` does.
  guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }), {
    lookup: async (host) => {
      lookups.push(host);
      if (host !== 'stores.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
});
afterAll(async () => {
  await guarded?.close();
  await Promise.all([qdrant?.stop(), pinecone?.stop(), weaviate?.close(), chroma?.dispose()]);
});

/** `url` with its host replaced by the name only the guarded fetch resolves. */
const named = (url: string) => url.replace('127.0.0.1', 'stores.test');

async function exercise(store: VectorStore): Promise<void> {
  try {
    await store.check?.({ dimensions: 4 });
    await store.upsert('ns', [{ id: 'c1', documentId: 'd1', vector: Float32Array.from([1, 0, 0, 0]) }]);
    const hits = await store.query('ns', { vector: Float32Array.from([1, 0, 0, 0]), topK: 1 });
    expect(hits[0]?.id).toBe('c1');
    expect(await store.deleteDocument('ns', 'd1')).toBeGreaterThanOrEqual(0);
  } finally {
    await store.close?.();
  }
}

describe('each store connects only through the fetch it is given', () => {
  it('qdrant (its client calls the global fetch: the store makes it the guarded one for its calls)', async () => {
    lookups.length = 0;
    const before = qdrant.requests.length;
    await exercise(createQdrantVectorStore({ indexName: 'outbound', endpoint: named(qdrant.url) }, { fetch: guarded }));
    expect(qdrant.requests.length).toBeGreaterThan(before);
    expect(lookups.length).toBeGreaterThanOrEqual(qdrant.requests.length - before);
    // Outside a store call the global fetch is the one it was: the name resolves nowhere.
    await expect(fetch(`${named(qdrant.url)}/collections`)).rejects.toThrow('fetch failed');
  });

  it('chroma (the fetch of its HTTP client)', async () => {
    lookups.length = 0;
    await exercise(createChromaVectorStore({ indexName: 'outbound', endpoint: named(chroma.url) }, { fetch: guarded }));
    expect(lookups.length).toBeGreaterThan(0);
  });

  it('pinecone (fetchApi: the control plane and the index host it names)', async () => {
    lookups.length = 0;
    const before = pinecone.requests.length;
    await exercise(createPineconeVectorStore({ indexName: 'outbound', apiKey: pinecone.apiKey, endpoint: named(pinecone.url) }, { fetch: guarded }));
    expect(pinecone.requests.slice(before).map((r) => r.plane)).toEqual(expect.arrayContaining(['control', 'data']));
  });

  it('weaviate: REST through the guarded fetch, gRPC to the address checked for the gRPC host', async () => {
    lookups.length = 0;
    const calls = weaviate.calls.length;
    await exercise(createWeaviateVectorStore({ indexName: 'Outbound', endpoint: named(weaviate.endpoint), grpcEndpoint: named(weaviate.grpcEndpoint) }, { fetch: guarded }));
    expect(weaviate.calls.length).toBeGreaterThan(calls);
    expect(lookups.filter((host) => host === 'stores.test').length).toBeGreaterThan(1);
  });

  it('weaviate: a gRPC host the policy refuses is refused before any connection (and tried again by the next call)', async () => {
    const refusing = guarded.withPolicy(createOutboundPolicy({ allowedHosts: ['stores.test'], allowlistOnly: true }));
    const store = createWeaviateVectorStore({ indexName: 'Outbound', endpoint: named(weaviate.endpoint), grpcEndpoint: weaviate.grpcEndpoint }, { fetch: refusing });
    const calls = weaviate.calls.length;
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(store.check?.({ dimensions: 4 })).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('Refused to connect to 127.0.0.1') });
      }
    } finally {
      await store.close?.();
    }
    expect(weaviate.calls.length).toBe(calls);
  });
});

describe.skipIf(!trapsAvailable)('pinecone: an index host the control plane names at a refused address', () => {
  it('is refused; nothing reaches the index behind it', async () => {
    await pinecone.addIndex('hostile', 4);
    const indexPort = (pinecone.indexes.get('hostile') as { port: number }).port;
    const data = await startForwarder({ port: indexPort });
    const control = new URL(pinecone.url);
    // A control plane in front of the test server that names the index's host at 10.0.0.1 (the forwarder).
    const hostile: Server = createServer((req, res) => {
      const upstream = request({ host: control.hostname, port: control.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8').split(`http://127.0.0.1:${indexPort}`).join(`http://0x0a000001:${data.port}`);
          const headers = { ...answer.headers };
          delete headers['content-length'];
          res.writeHead(answer.statusCode ?? 502, headers).end(body);
        });
      });
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    const before = pinecone.requests.filter((r) => r.plane === 'data').length;
    const store = createPineconeVectorStore({ indexName: 'hostile', apiKey: pinecone.apiKey, endpoint: `http://127.0.0.1:${(hostile.address() as AddressInfo).port}` }, { fetch: guarded });
    try {
      await expect(store.check?.({ dimensions: 4 })).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to 10\.0\.0\.1: private address/) });
      expect(data.connections).toBe(0);
      expect(pinecone.requests.filter((r) => r.plane === 'data').length).toBe(before);
    } finally {
      await store.close?.();
      hostile.closeAllConnections();
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
      await data.close();
    }
  });
});
