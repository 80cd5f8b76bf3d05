import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ForwardProxy, startForwardProxy } from '../../core/test/forward-proxy.js';
import { type Forwarder, METADATA_TRAP, startForwarder, startTrap, type Trap, trapsAvailable } from '../../core/test/traps.js';
import { embedderResolver } from '../src/knowledge.js';
import { operatorHosts, outboundFetches } from '../src/outbound.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * Model providers and embedders through the guarded fetch: the operator's own URLs (environment)
 * with the operator's hosts allowed, callers' URLs by the callers' policy, and proxies. The fake
 * OpenAI upstream listens on loopback and is also reachable at 10.0.0.1 through a counting
 * forwarder (inside the loopback-only namespace); a trap listens on 169.254.169.254.
 */

let upstream: FakeUpstream;
let privateUpstream: Forwarder;
let metadata: Trap;
let redirector: Server;
let redirectorUrl: string;
let proxy: ForwardProxy;
let privateProxy: Forwarder;

describe.skipIf(!trapsAvailable)('providers and embedders through the outbound policy', () => {
  beforeAll(async () => {
    upstream = await startUpstream();
    privateUpstream = await startForwarder({ port: Number(new URL(upstream.url).port) });
    metadata = await startTrap(METADATA_TRAP);
    // Answers every request with a 307 to the same path on the metadata trap.
    redirector = createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: `http://169.254.169.254:${metadata.port}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectorUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}`;
    proxy = await startForwardProxy();
    privateProxy = await startForwarder({ port: proxy.port });
  });
  afterAll(async () => {
    await Promise.all([upstream.close(), privateUpstream.close(), metadata.close(), proxy.close(), privateProxy.close()]);
    redirector.closeAllConnections();
    await new Promise<void>((resolve) => redirector.close(() => resolve()));
  });

  /**
   * A credential of `key`'s user at `baseUrl`, which the API refuses to save: stored as one saved
   * under an allow-list the operator has since removed is (saved at loopback, then moved in storage).
   */
  async function storedCredential(s: TestServer, key: string, baseUrl: string, proxy = false): Promise<void> {
    const { body } = await s.call('POST', '/api/v1/credentials', { key, body: { name: 'stored', provider: 'openai', apiKey: 'sk-b', baseUrl: upstream.url, proxy } });
    const userId = (await s.platform.authenticate(key))?.userId as string;
    await s.platform.storage.credentials.update(userId, body.credential.id, { baseUrl, updatedAt: new Date() });
  }

  const complete = (s: TestServer, key: string) => s.call('POST', '/api/v1/chat/completions', { key, body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] } });

  it("reaches the operator's OPENAI_BASE_URL at a private address, and refuses a caller's credential naming that address", async () => {
    const s = await startTestServer({ outbound: { allowedHosts: [new URL(upstream.url).host] }, env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `http://10.0.0.1:${privateUpstream.port}/v1` } });
    try {
      const before = privateUpstream.connections;
      const operator = await complete(s, s.keyA);
      expect(operator.status, JSON.stringify(operator.body)).toBe(200);
      expect(operator.body.choices[0].message.content).toBe('You said: hi');
      expect(privateUpstream.connections).toBeGreaterThan(before);

      const reached = privateUpstream.connections;
      const saved = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'mine', provider: 'openai', apiKey: 'sk-b', baseUrl: `http://0x0a000001:${privateUpstream.port}/v1` } });
      expect(saved.status).toBe(400);
      expect(saved.body.message).toMatch(/^baseUrl: Refused to connect to 10\.0\.0\.1: private address/);
      await storedCredential(s, s.keyB, `http://0x0a000001:${privateUpstream.port}/v1`);
      const caller = await complete(s, s.keyB);
      expect(caller.status).toBe(400);
      expect(caller.body.error.message).toMatch(/^Refused to connect to 10\.0\.0\.1: private address/);
      expect(privateUpstream.connections).toBe(reached);
    } finally {
      await s.stop();
    }
  });

  it("checks every hop of the operator's own URLs: a redirect from OPENAI_BASE_URL to the metadata address is refused", async () => {
    const s = await startTestServer({ env: { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${redirectorUrl}/v1` } });
    try {
      const res = await complete(s, s.keyA);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/^Refused to connect to 169\.254\.169\.254: cloud metadata address/);
      expect(metadata.connections).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it("sends openai: embeddings through the operator's fetch: a redirect to the metadata address is refused", async () => {
    const env = { OPENAI_API_KEY: 'sk-env', OPENAI_BASE_URL: `${redirectorUrl}/v1` };
    const { callers, operator } = outboundFetches({}, env);
    const resolver = embedderResolver(env, { fetch: operator });
    try {
      await expect(resolver('openai:text-embedding-3-small', {} as never).embed(['hello'])).rejects.toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/^Refused to connect to 169\.254\.169\.254: cloud metadata address/),
      });
      expect(metadata.connections).toBe(0);
    } finally {
      await resolver.close();
      await callers.close();
    }
  });

  it("proxy: true: every target and hop is checked before the proxy hears of it; the operator's proxy may sit at a private address", async () => {
    const s = await startTestServer({ outbound: { allowedHosts: [new URL(upstream.url).host] }, env: { OPENAI_API_KEY: 'sk-env', HTTP_PROXY: `http://10.0.0.1:${privateProxy.port}` } });
    try {
      // Allowed: through the operator's proxy (at 10.0.0.1, allowed as the operator's host) to the loopback upstream.
      await s.call('POST', '/api/v1/credentials', { key: s.keyA, body: { name: 'p', provider: 'openai', apiKey: 'sk-a', baseUrl: upstream.url, proxy: true } });
      const through = await complete(s, s.keyA);
      expect(through.status, JSON.stringify(through.body)).toBe(200);
      expect(proxy.carried.at(-1)).toBe(`CONNECT ${new URL(upstream.url).host}`);
      expect(privateProxy.connections).toBeGreaterThan(0);

      // Refused: a private target, and a redirect to the metadata address, before the proxy carries them.
      const carried = proxy.carried.length;
      const before = privateUpstream.connections;
      const saved = await s.call('POST', '/api/v1/credentials', {
        key: s.keyB,
        body: { name: 'p', provider: 'openai', apiKey: 'sk-b', baseUrl: `http://10.0.0.1:${privateUpstream.port}/v1`, proxy: true },
      });
      expect(saved.status).toBe(400);
      await storedCredential(s, s.keyB, `http://10.0.0.1:${privateUpstream.port}/v1`, true);
      const refused = await complete(s, s.keyB);
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toMatch(/^Refused to connect to 10\.0\.0\.1: private address/);
      expect(proxy.carried.length).toBe(carried);
      expect(privateUpstream.connections).toBe(before);

      const redirected = await startTestServer({ outbound: { allowedHosts: [new URL(redirectorUrl).host] }, env: { OPENAI_API_KEY: 'sk-env', HTTP_PROXY: proxy.url } });
      try {
        await redirected.call('POST', '/api/v1/credentials', { body: { name: 'r', provider: 'openai', apiKey: 'sk-r', baseUrl: `${redirectorUrl}/v1`, proxy: true } });
        const hop = await complete(redirected, redirected.keyA);
        expect(hop.status).toBe(400);
        expect(hop.body.error.message).toMatch(/^Refused to connect to 169\.254\.169\.254: cloud metadata address/);
        expect(proxy.carried.at(-1)).toBe(`CONNECT ${new URL(redirectorUrl).host}`);
        expect(metadata.connections).toBe(0);
      } finally {
        await redirected.stop();
      }
    } finally {
      await s.stop();
    }
  });
});

describe('operatorHosts', () => {
  const env = { OPENAI_BASE_URL: 'http://vllm.internal:8000/v1', OLLAMA_HOST: '10.0.0.7:11434', HTTPS_PROXY: 'http://proxy.corp:3128', HF_ENDPOINT: 'https://hf-mirror.corp/' };

  it("names exactly the host and port of the operator's URLs as written (downloads: the hub too), and the default local runtime", () => {
    expect(operatorHosts(env)).toEqual(['vllm.internal:8000', '10.0.0.7:11434', 'proxy.corp:3128']);
    expect(operatorHosts(env, { modelDownloads: true })).toEqual(['vllm.internal:8000', '10.0.0.7:11434', 'proxy.corp:3128', 'hf-mirror.corp:443']);
    // Ollama's default address: loopback, which the policy refuses unless allowed.
    expect(operatorHosts({})).toEqual(['127.0.0.1:11434']);
    expect(operatorHosts({ OLLAMA_HOST: '[::1]' })).toEqual(['[::1]:11434']);
    // The server-wide vector store's hosts, on every port (a client may derive another port, as Weaviate's gRPC does).
    expect(operatorHosts({}, { urls: ['http://127.0.0.1:8000'] })).toEqual(['127.0.0.1:11434', '127.0.0.1']);
  });

  it('adds the public defaults with --allowed-hosts-only, where nothing else would be reachable', () => {
    expect(operatorHosts({}, { allowlistOnly: true })).toEqual(['127.0.0.1:11434', 'api.openai.com']);
    expect(operatorHosts({}, { allowlistOnly: true, modelDownloads: true })).toEqual(['127.0.0.1:11434', 'api.openai.com', 'huggingface.co', '*.huggingface.co', 'hf.co', '*.hf.co']);
    expect(operatorHosts(env, { allowlistOnly: true, modelDownloads: true })).toEqual(['vllm.internal:8000', '10.0.0.7:11434', 'proxy.corp:3128', 'hf-mirror.corp:443']);
  });

  it("allows them for the operator's requests only", async () => {
    const lookupEnv = { OPENAI_BASE_URL: 'http://10.0.0.9:8000/v1' };
    const { callers, operator } = outboundFetches({}, lookupEnv);
    try {
      await expect(operator.check('http://10.0.0.9:8000/v1/models')).resolves.toMatchObject({ host: '10.0.0.9' });
      await expect(callers.check('http://10.0.0.9:8000/v1/models')).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(operator.check('http://10.0.0.10/')).rejects.toMatchObject({ code: 'invalid_request' });
      await expect(operator.check('http://10.0.0.9:5432/')).rejects.toMatchObject({ code: 'invalid_request' }); // another port of it
      // The default local runtime (no OLLAMA_HOST): the operator's, not the callers'.
      await expect(operator.check('http://127.0.0.1:11434/api/tags')).resolves.toMatchObject({ host: '127.0.0.1' });
      await expect(callers.check('http://127.0.0.1:11434/api/tags')).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringContaining('--allow-host 127.0.0.1:11434') });
    } finally {
      await callers.close();
    }
  });

  it("the server-wide vector store (PostgreSQL mode's shared Chroma on loopback) is the operator's alone: a user naming it is refused", async () => {
    const { callers, operator } = outboundFetches({}, {}, { operatorUrls: ['http://127.0.0.1:8000'] });
    try {
      await expect(operator.check('http://127.0.0.1:8000/api/v2/heartbeat')).resolves.toMatchObject({ host: '127.0.0.1' });
      for (const url of ['http://127.0.0.1:8000/api/v2/heartbeat', 'http://localhost:8000/', 'http://127.0.0.1:5432/']) {
        await expect(callers.check(url), url).rejects.toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/loopback address .*; allow it with --allow-host \S+:(8000|5432)$/) });
      }
    } finally {
      await callers.close();
    }
  });
});
