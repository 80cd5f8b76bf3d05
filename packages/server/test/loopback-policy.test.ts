import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform, createSecretBox } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * The loopback policy over HTTP: every URL a user supplies (a credential's baseUrl, a vector
 * store endpoint, a local model runtime address, an MCP server URL) is refused on loopback
 * unless the operator allowed that host and port (`--allow-host 127.0.0.1:PORT`), before any
 * connection, with a 400 naming the entry that would allow it; the operator's own loopback
 * upstreams from the environment (OPENAI_BASE_URL, OLLAMA_HOST) keep working; base URLs refuse
 * a query string or fragment. `service` stands for what a deployment keeps on loopback without
 * authentication (a Chroma, an admin port): it counts every connection it gets, and must get none.
 */
let service: Server;
let servicePort = 0;
let connections = 0;
let operatorUpstream: FakeUpstream;
let lmStudio: FakeUpstream;
let ollama: OllamaTestServer;
let s: TestServer;
let allowing: TestServer;

beforeAll(async () => {
  service = createServer((_req, res) => res.end('{"ok":true}'));
  service.on('connection', () => connections++);
  await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
  servicePort = (service.address() as AddressInfo).port;
  [operatorUpstream, lmStudio, ollama] = await Promise.all([startUpstream(), startUpstream(), startOllamaServer([ollamaTag('llama3.2:3b', 2_019_393_189)])]);
  const env = { OPENAI_BASE_URL: operatorUpstream.url, OPENAI_API_KEY: 'sk-operator', OLLAMA_HOST: ollama.url, AGENT_PLATFORM_MCP_TIMEOUT_MS: '2000' };
  // The default: no --allow-host. And an operator who allowed one local model server by port.
  [s, allowing] = await Promise.all([startTestServer({ env }), startTestServer({ env, outbound: { allowedHosts: [new URL(lmStudio.url).host] } })]);
});
afterAll(async () => {
  await Promise.all([s?.stop(), allowing?.stop()]);
  await Promise.all([operatorUpstream?.close(), lmStudio?.close(), ollama?.close(), new Promise((resolve) => service?.close(resolve))]);
});

/** The refusal of a loopback address on `port`, with the entry that would allow it. */
const refusal = (port: number, address = '127\\.0\\.0\\.1') =>
  new RegExp(`Refused to connect to [^:]*${address}\\)?: loopback address \\(this server's own machine\\)( \\(embeds 127\\.0\\.0\\.1\\))?; allow it with --allow-host \\S+:${port}$`);
const serviceUrl = (path = '') => `http://127.0.0.1:${servicePort}${path}`;

describe('loopback in URLs users supply is refused by default, before any connection', () => {
  it("a credential's baseUrl, on create and on PATCH, in every spelling of loopback; nothing is stored", async () => {
    const before = connections;
    const listed = (await s.call('GET', '/api/v1/credentials')).body.credentials;
    const spellings = [
      serviceUrl('/v1'),
      `http://localhost:${servicePort}/v1`,
      `http://127.1:${servicePort}/v1`,
      `http://0x7f000001:${servicePort}/v1`,
      `http://2130706433:${servicePort}/v1`,
      `http://127.9.8.7:${servicePort}/v1`,
      `http://[::ffff:127.0.0.1]:${servicePort}/v1`,
    ];
    for (const baseUrl of spellings) {
      for (const provider of ['openai', 'ollama']) {
        const res = await s.call('POST', '/api/v1/credentials', { body: { name: 'mine', provider, apiKey: 'sk-mine', baseUrl } });
        expect(res.status, baseUrl).toBe(400);
        expect(res.body, baseUrl).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^baseUrl: Refused to connect to .*loopback address/) });
        expect(res.body.message, baseUrl).toMatch(new RegExp(`; allow it with --allow-host \\S+:${servicePort}$`));
      }
    }
    expect((await s.call('POST', '/api/v1/credentials', { body: { name: 'six', provider: 'openai', apiKey: 'sk', baseUrl: `http://[::1]:${servicePort}/v1` } })).body.message).toBe(
      `baseUrl: Refused to connect to ::1: loopback address (this server's own machine); allow it with --allow-host [::1]:${servicePort}`,
    );
    expect((await s.call('GET', '/api/v1/credentials')).body.credentials).toEqual(listed);

    const { body } = await s.call('POST', '/api/v1/credentials', { body: { name: 'public', provider: 'openai', apiKey: 'sk-public' } });
    const patched = await s.call('PATCH', `/api/v1/credentials/${body.credential.id}`, { body: { data: { baseUrl: serviceUrl('/v1') } } });
    expect(patched.status).toBe(400);
    expect(patched.body.message).toMatch(refusal(servicePort));
    expect((await s.call('GET', `/api/v1/credentials/${body.credential.id}`)).body.credential.baseUrl).toBeNull();
    await s.call('DELETE', `/api/v1/credentials/${body.credential.id}`);
    expect(connections).toBe(before);
  });

  it('a vector store endpoint (Qdrant, Chroma, Weaviate, Pinecone): the settings are refused and kept', async () => {
    const before = connections;
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'store', model: 'gpt-test', provider: 'openai', ...s.ownVectorStore() } })).body.project.id;
    const kept = (await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body.settings;
    for (const [vectorstoreProvider, vectorStoreConfig] of [
      ['qdrant', { endpoint: serviceUrl(), indexName: 'kb' }],
      ['chroma', { endpoint: `http://localhost:${servicePort}`, indexName: 'docs' }],
      // Weaviate's gRPC address (by default the endpoint's host on 50051) is checked too.
      ['weaviate', { endpoint: serviceUrl(), grpcEndpoint: serviceUrl(), indexName: 'Docs' }],
      ['pinecone', { endpoint: serviceUrl(), indexName: 'docs', apiKey: 'pc' }],
    ] as const) {
      const res = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorstoreProvider, vectorStoreConfig } } });
      expect(res.status, vectorstoreProvider).toBe(400);
      expect(res.body.message, vectorstoreProvider).toMatch(new RegExp(`Refused to connect to .*loopback address.*; allow it with --allow-host \\S+:${servicePort}$`));
    }
    expect((await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body.settings).toEqual(kept);
    expect(connections).toBe(before);
  });

  it("a local model runtime's baseUrl (list and delete); the operator's OLLAMA_HOST, a loopback address, still answers calls that give none", async () => {
    const before = connections;
    const listed = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(serviceUrl())}`);
    expect(listed.status).toBe(400);
    expect(listed.body).toMatchObject({ success: false, models: [], error: expect.stringMatching(refusal(servicePort)) });
    const deleted = await s.call('DELETE', '/api/v1/localmodel/delete-model', { body: { modelName: 'llama3.2:3b', baseUrl: `http://localhost:${servicePort}` } });
    expect(deleted.status).toBe(400);
    expect(deleted.body).toMatchObject({ success: false, error: expect.stringMatching(refusal(servicePort)) });
    // OLLAMA_HOST named by a caller is a caller's URL like any other.
    expect((await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(ollama.url)}`)).body.error).toMatch(refusal(ollama.port));
    expect(connections).toBe(before);

    const operator = await s.call('GET', '/api/v1/localmodel/list-models');
    expect(operator.status).toBe(200);
    expect(operator.body.models.map((m: { name: string }) => m.name)).toEqual(['llama3.2:3b']);
  });

  it('an MCP server URL (detect, add, HTTP and SSE); nothing is stored', async () => {
    const before = connections;
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'mcp', model: 'gpt-test', provider: 'openai', ...s.ownVectorStore() } })).body.project.id;
    const detected = await s.call('POST', '/api/mcp/detect-transport', { body: { url: serviceUrl('/mcp') } });
    expect(detected.status).toBe(400);
    expect(detected.body.message).toMatch(refusal(servicePort));
    for (const [transport, url] of [
      ['http', serviceUrl('/mcp')],
      ['sse', `http://localhost:${servicePort}/sse`],
    ] as const) {
      const added = await s.call('POST', '/api/mcp/add-server', { body: { projectId, name: `loop-${transport}`, transport, url } });
      expect(added.status, transport).toBe(400);
      expect(added.body.message, transport).toMatch(new RegExp(`loopback address.*; allow it with --allow-host \\S+:${servicePort}$`));
    }
    expect((await s.call('GET', `/api/mcp/servers?projectId=${projectId}`)).body.servers).toEqual([]);
    expect(connections).toBe(before);
  });

  it("the operator's OPENAI_BASE_URL on loopback still serves completions that use no credential", async () => {
    const before = operatorUpstream.requests.length;
    const res = await s.call('POST', '/api/v1/chat/completions', { key: s.keyB, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(200);
    expect(res.body.choices[0].message.content).toBe('You said: hi');
    expect(operatorUpstream.requests.length).toBe(before + 1);
  });
});

describe('--allow-host HOST:PORT', () => {
  it('lets users name exactly that port: a local model server works, another port of the same address is refused', async () => {
    const lmPort = Number(new URL(lmStudio.url).port);
    const created = await allowing.call('POST', '/api/v1/credentials', { body: { name: 'lm studio', provider: 'openai', apiKey: 'lm-studio', baseUrl: lmStudio.url } });
    expect(created.status).toBe(201);
    const before = lmStudio.requests.length;
    const res = await allowing.call('POST', '/api/v1/chat/completions', { body: { model: 'local-model', messages: [{ role: 'user', content: 'hello' }] } });
    expect(res.status).toBe(200);
    expect(lmStudio.requests.length).toBe(before + 1);
    expect(lmStudio.requests.at(-1)?.model).toBe('local-model');

    const beforeService = connections;
    const other = await allowing.call('POST', '/api/v1/credentials', { key: allowing.keyB, body: { name: 'x', provider: 'openai', apiKey: 'sk', baseUrl: serviceUrl('/v1') } });
    expect(other.status).toBe(400);
    expect(other.body.message).toBe(`baseUrl: Refused to connect to 127.0.0.1: loopback address (this server's own machine); allow it with --allow-host 127.0.0.1:${servicePort}`);
    // The entry names 127.0.0.1, not every name of this machine: localhost on that port is judged by its address, which is allowed.
    const byName = await allowing.call('POST', '/api/v1/credentials', { key: allowing.keyB, body: { name: 'y', provider: 'openai', apiKey: 'sk', baseUrl: `http://localhost:${lmPort}/v1` } });
    expect(byName.status).toBe(201);
    expect(connections).toBe(beforeService);
  });

  it('a stored baseUrl on a port no longer allowed is refused at the call, before connecting', async () => {
    const { body } = await allowing.call('POST', '/api/v1/credentials', { key: allowing.keyB, body: { name: 'moved', provider: 'openai', apiKey: 'sk-moved', baseUrl: lmStudio.url } });
    const userId = (await allowing.platform.authenticate(allowing.keyB))?.userId as string;
    await allowing.platform.storage.credentials.update(userId, body.credential.id, { baseUrl: serviceUrl('/v1'), updatedAt: new Date() });
    await allowing.call('PATCH', `/api/v1/credentials/${body.credential.id}`, { key: allowing.keyB, body: { data: { default: true } } });
    const before = connections;
    const res = await allowing.call('POST', '/api/v1/chat/completions', { key: allowing.keyB, body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(refusal(servicePort));
    expect(connections).toBe(before);
  });
});

describe('base URLs take no query string or fragment', () => {
  it("a credential's baseUrl (create, PATCH) and a local model baseUrl: 400 naming the field, nothing stored or sent", async () => {
    const listed = (await s.call('GET', '/api/v1/credentials', { key: s.keyB })).body.credentials;
    for (const baseUrl of ['https://models.example/v1?x=/', 'https://models.example/v1?', 'https://models.example/v1#', 'https://models.example/v1#/../admin']) {
      const res = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'q', provider: 'openai', apiKey: 'sk', baseUrl } });
      expect(res.status, baseUrl).toBe(400);
      expect(res.body.message, baseUrl).toBe('baseUrl: must not have a query string or fragment (paths are appended to a base URL)');
      const local = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(baseUrl)}`, { key: s.keyB });
      expect(local.status, baseUrl).toBe(400);
      expect(local.body, baseUrl).toMatchObject({ success: false, models: [], error: 'baseUrl: must not have a query string or fragment (paths are appended to a base URL)' });
    }
    expect((await s.call('GET', '/api/v1/credentials', { key: s.keyB })).body.credentials).toEqual(listed);
  });

  it('a credential stored with one before is refused at the call, naming the credential and how to fix it', async () => {
    const { body } = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'old', provider: 'openai', apiKey: 'sk-old' } });
    const id = body.credential.id as string;
    const userId = (await s.platform.authenticate(s.keyB))?.userId as string;
    await s.platform.storage.credentials.update(userId, id, { baseUrl: 'https://models.example/v1?path=/admin', updatedAt: new Date() });
    await s.call('PATCH', `/api/v1/credentials/${id}`, { key: s.keyB, body: { data: { default: true } } });
    const before = operatorUpstream.requests.length;
    const res = await s.call('POST', '/api/v1/chat/completions', { key: s.keyB, body: { model: 'gpt-test', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      `Credential ${id} cannot be used: its baseUrl must not have a query string or fragment (paths are appended to a base URL); give it a new baseUrl (PATCH /api/v1/credentials/${id})`,
    );
    expect(operatorUpstream.requests.length).toBe(before);
    await s.call('DELETE', `/api/v1/credentials/${id}`, { key: s.keyB });
  });

  it('vector store endpoints likewise, and store names that would walk the path', async () => {
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'names', model: 'gpt-test', provider: 'openai', ...s.ownVectorStore() } })).body.project.id;
    for (const [vectorstoreProvider, vectorStoreConfig, message] of [
      ['qdrant', { endpoint: 'https://q.example?', indexName: 'kb' }, 'endpoint must not have a query string or fragment'],
      ['qdrant', { endpoint: 'https://q.example', indexName: '..' }, 'indexName must not be "." or ".."'],
      ['chroma', { endpoint: 'https://c.example#x', indexName: 'docs' }, 'without a path, query string or fragment'],
      ['chroma', { endpoint: 'https://c.example', indexName: 'docs', tenant: '..' }, 'tenant must be at least 3 characters'],
      ['chroma', { endpoint: 'https://c.example', indexName: 'a..b' }, 'without ".."'],
      ['weaviate', { endpoint: 'https://w.example/?', indexName: 'Docs' }, 'endpoint must not have a query string or fragment'],
      ['pinecone', { endpoint: 'https://p.example/#', indexName: 'docs', apiKey: 'pc' }, 'endpoint must not carry credentials, a query or a fragment'],
    ] as const) {
      const res = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorstoreProvider, vectorStoreConfig } } });
      expect(res.status, JSON.stringify(vectorStoreConfig)).toBe(400);
      expect(res.body.message, JSON.stringify(vectorStoreConfig)).toContain(message);
    }
  });
});

describe('the library (AgentPlatform with its default policy)', () => {
  it("refuses loopback in a caller's URLs too, and reaches its own default local runtime address", async () => {
    const platform = new AgentPlatform({ storage: memoryStorage(), secrets: createSecretBox('a test master key'), localModelUrl: ollama.url });
    try {
      const { key } = await platform.createUserWithKey({ name: 'u' });
      const caller = (await platform.authenticate(key)) as { userId: string };
      const before = connections;
      await expect(platform.createCredential(caller, { name: 'x', provider: 'openai', apiKey: 'sk', baseUrl: serviceUrl('/v1') })).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(refusal(servicePort)),
      });
      await expect(platform.listLocalModels(caller, { baseUrl: serviceUrl() })).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(refusal(servicePort)) });
      expect(connections).toBe(before);
      expect(await platform.listLocalModels(caller)).toMatchObject({ success: true, models: [{ name: 'llama3.2:3b' }] });
    } finally {
      await platform.close();
    }
  });
});
