import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChromaVectorStore } from '@agent-platform/adapters-vector/chroma';
import { createPineconeVectorStore } from '@agent-platform/adapters-vector/pinecone';
import { createQdrantVectorStore } from '@agent-platform/adapters-vector/qdrant';
import { createWeaviateVectorStore } from '@agent-platform/adapters-vector/weaviate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChromaServer, startChromaServer } from '../../adapters-vector/test/fixtures/chroma-server.js';
import { type PineconeTestServer, startPineconeTestServer } from '../../adapters-vector/test/fixtures/pinecone-server.js';
import { type QdrantTestServer, startQdrantTestServer } from '../../adapters-vector/test/fixtures/qdrant-server.js';
import { startWeaviateTestServer, type WeaviateTestServer } from '../../adapters-vector/test/fixtures/weaviate-server.js';
import { type Forwarder, METADATA_TRAP, startForwarder, trapsAvailable } from '../../core/test/traps.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

/**
 * Vector store endpoints through the outbound policy, over HTTP (PUT /api/knowledge/settings).
 * Inside the loopback-only namespace each store's test server (a wire-faithful double, or a real
 * Chroma) is also reachable at a refused address, 10.0.0.1 (and Qdrant at 169.254.169.254),
 * through a TCP forwarder that counts connections. Every spelling of those addresses must be
 * refused (400) with no connection at the forwarder, while the same store without the guard
 * reaches the test server through it (so the refusal is the guard's doing).
 */

const KEYS = { qdrant: 'qdrant-key', pinecone: 'pc-key', weaviate: 'wv-key' };

let s: TestServer;
let qdrant: QdrantTestServer;
let pinecone: PineconeTestServer;
let weaviate: WeaviateTestServer;
let chroma: ChromaServer;
let redirector: Server;
let redirectorUrl: string;
/** Where the redirector sends each request (the path kept), set per case. */
let redirectTo = '';
const fwd = {} as Record<'qdrant' | 'qdrantMetadata' | 'pinecone' | 'weaviate' | 'weaviateGrpc' | 'chroma', Forwarder>;

const portOf = (url: string) => Number(new URL(url).port);

describe.skipIf(!trapsAvailable)('vector store endpoints at refused addresses (traps in the loopback-only namespace)', () => {
  beforeAll(async () => {
    [qdrant, pinecone, weaviate, chroma] = await Promise.all([
      startQdrantTestServer({ apiKey: KEYS.qdrant }),
      startPineconeTestServer({ apiKey: KEYS.pinecone, readyAfterMs: 0 }),
      startWeaviateTestServer({ apiKey: KEYS.weaviate }),
      startChromaServer(),
    ]);
    fwd.qdrant = await startForwarder({ port: qdrant.port });
    fwd.qdrantMetadata = await startForwarder({ port: qdrant.port }, METADATA_TRAP);
    fwd.pinecone = await startForwarder({ port: portOf(pinecone.url) });
    fwd.weaviate = await startForwarder({ port: portOf(weaviate.endpoint) });
    fwd.weaviateGrpc = await startForwarder({ port: portOf(weaviate.grpcEndpoint) });
    fwd.chroma = await startForwarder({ port: chroma.port });
    redirector = createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: `${redirectTo}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    // The stores' own test servers (and the redirector) listen on 127.0.0.1: allowed, as --allow-host 127.0.0.1 does.
    s = await startTestServer({ outbound: ALLOW_LOOPBACK });
  });
  afterAll(async () => {
    await s?.stop();
    await Promise.all(Object.values(fwd).map((f) => f.close()));
    redirector?.closeAllConnections();
    await new Promise<void>((resolve) => (redirector ? redirector.close(() => resolve()) : resolve()));
    await Promise.all([qdrant?.stop(), pinecone?.stop(), weaviate?.close(), chroma?.dispose()]);
  });

  const connections = () => Object.values(fwd).reduce((sum, f) => sum + f.connections, 0);
  const project = async (name: string) => (await s.call('POST', '/api/projects/create', { body: { name, model: 'm', provider: 'openai' } })).body.project.id as string;
  const settings = (projectId: string, vectorstoreProvider: string, vectorStoreConfig: Record<string, unknown>) =>
    s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorstoreProvider, vectorStoreConfig } } });

  /** Spellings of the forwarder's address (10.0.0.1:<port>) that fetch reads as that address. */
  const spellings = (port: number) => [
    ` http://10.0.0.1:${port}`,
    `h\tttp://10.0.0.1:${port}`,
    `HTTP://0x0a000001:${port}`,
    `http://167772161:${port}`,
    `http://10.1:${port}`,
    `http://[::ffff:10.0.0.1]:${port}`,
    `http://%31%30.0.0.1:${port}/`,
  ];

  const configs = (): [provider: string, config: Record<string, unknown>][] => [
    ...spellings(fwd.qdrant.port).map((endpoint): [string, Record<string, unknown>] => ['qdrant', { indexName: 'x', endpoint, apiKey: KEYS.qdrant }]),
    ['qdrant', { indexName: 'x', endpoint: `ht\ntp://169.254.169.254:${fwd.qdrantMetadata.port}`, apiKey: KEYS.qdrant }],
    ...spellings(fwd.chroma.port).map((endpoint): [string, Record<string, unknown>] => ['chroma', { indexName: 'idx', endpoint }]),
    ...spellings(fwd.pinecone.port).map((endpoint): [string, Record<string, unknown>] => ['pinecone', { indexName: 'x', apiKey: KEYS.pinecone, endpoint }]),
    ...spellings(fwd.weaviate.port).map((endpoint): [string, Record<string, unknown>] => ['weaviate', { indexName: 'X', apiKey: KEYS.weaviate, endpoint, grpcEndpoint: weaviate.grpcEndpoint }]),
    // The REST endpoint on loopback, gRPC at the refused address: the gRPC connection is refused.
    ...spellings(fwd.weaviateGrpc.port).map((grpcEndpoint): [string, Record<string, unknown>] => [
      'weaviate',
      { indexName: 'X', apiKey: KEYS.weaviate, endpoint: weaviate.endpoint, grpcEndpoint: grpcEndpoint.replace(/\/$/, '') },
    ]),
  ];

  it('refuses every spelling of a refused address (400), and no connection reaches any store', async () => {
    const projectId = await project('refused endpoints');
    const seen = { qdrant: qdrant.requests.length, pinecone: pinecone.requests.length, weaviate: weaviate.calls.length };
    for (const [provider, config] of configs()) {
      const res = await settings(projectId, provider, config);
      expect(res.status, `${provider} ${JSON.stringify(config)}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.message, `${JSON.stringify(config)} ${res.body.message}`).toMatch(/^Invalid vectorstore configuration: Refused to connect to .*(private|cloud metadata) address/);
      expect(connections(), `${provider} ${JSON.stringify(config)}`).toBe(0);
    }
    expect({ qdrant: qdrant.requests.length, pinecone: pinecone.requests.length, weaviate: weaviate.calls.length }).toEqual(seen);
  });

  it('refuses a loopback store that redirects to a refused address; nothing reaches the store behind it', async () => {
    const projectId = await project('redirected endpoints');
    const cases: [provider: string, target: Forwarder, config: Record<string, unknown>][] = [
      ['qdrant', fwd.qdrant, { indexName: 'x', endpoint: redirectorUrl, apiKey: KEYS.qdrant }],
      ['chroma', fwd.chroma, { indexName: 'idx', endpoint: redirectorUrl }],
      ['pinecone', fwd.pinecone, { indexName: 'x', apiKey: KEYS.pinecone, endpoint: redirectorUrl }],
      ['weaviate', fwd.weaviate, { indexName: 'X', apiKey: KEYS.weaviate, endpoint: redirectorUrl, grpcEndpoint: weaviate.grpcEndpoint }],
    ];
    for (const [provider, target, config] of cases) {
      redirectTo = ` http://0x0a000001:${target.port}`;
      const res = await settings(projectId, provider, config);
      expect(res.status, `${provider}: ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.message, `${provider} ${res.body.message}`).toMatch(/Refused to connect to 10\.0\.0\.1: private address/);
      expect(connections(), provider).toBe(0);
    }
  });

  it('the same stores without the guard do reach the test servers through the forwarders (the cases above are real)', async () => {
    const before = { qdrant: fwd.qdrant.connections, chroma: fwd.chroma.connections, pinecone: fwd.pinecone.connections, weaviate: fwd.weaviate.connections, grpc: fwd.weaviateGrpc.connections };
    const stores = [
      createQdrantVectorStore({ indexName: 'control', endpoint: ` http://10.0.0.1:${fwd.qdrant.port}`, apiKey: KEYS.qdrant }),
      createChromaVectorStore({ indexName: 'control', endpoint: `h\tttp://10.0.0.1:${fwd.chroma.port}` }),
      createPineconeVectorStore({ indexName: 'control', apiKey: KEYS.pinecone, endpoint: `http://167772161:${fwd.pinecone.port}` }),
      createWeaviateVectorStore({ indexName: 'Control', apiKey: KEYS.weaviate, endpoint: `HTTP://0x0a000001:${fwd.weaviate.port}`, grpcEndpoint: `http://10.1:${fwd.weaviateGrpc.port}` }),
    ];
    try {
      for (const store of stores) await store.check?.({ dimensions: 8 });
    } finally {
      await Promise.all(stores.map((store) => store.close?.()));
    }
    expect(fwd.qdrant.connections).toBeGreaterThan(before.qdrant);
    expect(fwd.chroma.connections).toBeGreaterThan(before.chroma);
    expect(fwd.pinecone.connections).toBeGreaterThan(before.pinecone);
    expect(fwd.weaviate.connections).toBeGreaterThan(before.weaviate);
    expect(fwd.weaviateGrpc.connections).toBeGreaterThan(before.grpc);
  });
});
