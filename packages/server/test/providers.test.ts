import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ForwardProxy, startForwardProxy } from '../../core/test/forward-proxy.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

let upstream: FakeUpstream;
let proxy: ForwardProxy;
let s: TestServer;
beforeAll(async () => {
  upstream = await startUpstream();
  proxy = await startForwardProxy();
  // Credentials name the fake upstream: its host and port allowed, as `--allow-host 127.0.0.1:PORT` does.
  s = await startTestServer({
    outbound: { allowedHosts: [new URL(upstream.url).host] },
    env: { OPENAI_API_KEY: 'sk-from-env', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', HTTP_PROXY: proxy.url, OLLAMA_HOST: upstream.url.replace(/\/v1$/, '') },
  });
});
afterAll(async () => {
  await s.stop();
  await proxy.close();
  await upstream.close();
});

const complete = (key: string, body: Record<string, unknown> = {}) =>
  s.call('POST', '/api/v1/chat/completions', { key, body: { model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }], ...body } });

describe('provider credentials', () => {
  it("uses the caller's credential (key and baseUrl) instead of the environment", async () => {
    const res = await s.call('POST', '/api/v1/credentials', { body: { name: 'mine', provider: 'openai', apiKey: 'sk-user-a', baseUrl: upstream.url } });
    expect(res.status).toBe(201);
    const before = upstream.requests.length;
    expect((await complete(s.keyA)).body.choices[0].message.content).toBe('You said: hi');
    expect(upstream.requests.length).toBe(before + 1);
    // user B has no credential: the environment's (unreachable) base URL is used
    expect((await complete(s.keyB)).status).toBe(503);
  });

  it('sends the traffic of a proxy: true credential through the configured proxy', async () => {
    const { body } = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'proxied', provider: 'openai', apiKey: 'sk-user-b', baseUrl: upstream.url, proxy: true } });
    expect(body.credential.proxy).toBe(true);
    const carriedBefore = proxy.carried.length;
    const res = await complete(s.keyB);
    expect(res.status).toBe(200);
    expect(proxy.carried.length).toBeGreaterThan(carriedBefore);
    expect(proxy.carried.at(-1)).toContain(new URL(upstream.url).port);
  });

  it('uses Ollama through its OpenAI-compatible /v1 for projects of the ollama provider', async () => {
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'local', model: 'llama3.2:3b', provider: 'ollama' } })).body.project;
    const before = upstream.requests.length;
    const res = await complete(s.keyA, { model: project.id });
    expect(res.status).toBe(200);
    expect(upstream.requests[before]?.model).toBe('llama3.2:3b');
  });

  it('refuses the local provider with a clear 501', async () => {
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'bundled', model: 'tiny', provider: 'local' } })).body.project;
    const res = await complete(s.keyA, { model: project.id });
    expect(res.status).toBe(501);
    expect(res.body.error.message).toContain('local provider');
  });
});

describe('proxy without a configured proxy', () => {
  it('answers 400 naming the missing setting', async () => {
    const bare = await startTestServer({ outbound: { allowedHosts: [new URL(upstream.url).host] }, env: { OPENAI_API_KEY: 'k' } });
    try {
      await bare.call('POST', '/api/v1/credentials', { body: { name: 'p', provider: 'openai', apiKey: 'sk', baseUrl: upstream.url, proxy: true } });
      const res = await bare.call('POST', '/api/v1/chat/completions', { body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('HTTPS_PROXY');
    } finally {
      await bare.stop();
    }
  });
});
