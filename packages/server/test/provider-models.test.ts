import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// The models an upstream offers, for a project's model picker: asked with a credential's key at
// its address, or with what a project naming no credential uses. Real loopback upstreams that
// speak OpenAI's `GET /v1/models` and Ollama's `GET /api/tags` (its installed models).

let withKey: FakeChatServer;
let environment: FakeChatServer;
let ollama: OllamaTestServer;
let silent: Server;
let silentUrl: string;
let s: TestServer;

beforeAll(async () => {
  [withKey, environment, ollama] = await Promise.all([
    startFakeChatServer({ apiKey: 'sk-right-key', models: ['gpt-4o-mini', 'gpt-4o', 'o3-mini'] }),
    startFakeChatServer({ models: ['env-model'] }),
    startOllamaServer([ollamaTag('qwen2.5:0.5b', 400_000_000), ollamaTag('llama3.2:3b', 2_000_000_000)]),
  ]);
  // Accepts connections and never answers.
  silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: environment.url, OPENAI_API_KEY: 'sk-env', OLLAMA_HOST: ollama.url, AGENT_PLATFORM_MODEL_TIMEOUT_MS: '1500' } });
}, 60_000);
afterAll(async () => {
  await s.stop();
  silent.closeAllConnections();
  await new Promise((r) => silent.close(r));
  await Promise.all([withKey.close(), environment.close(), ollama.close()]);
});

const credential = async (body: Record<string, unknown>, key = s.keyA) => {
  const res = await s.call('POST', '/api/v1/credentials', { key, body: { name: 'c', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.credential.id as string;
};

describe('GET /api/v1/credentials/{id}/models', () => {
  it("lists the upstream's models with the credential's key, sorted", async () => {
    const id = await credential({ provider: 'openai', apiKey: 'sk-right-key', baseUrl: withKey.url });
    const res = await s.call('GET', `/api/v1/credentials/${id}/models`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      provider: 'openai',
      credentialId: id,
      baseUrl: withKey.url,
      models: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'o3-mini' }],
    });
  });

  it("answers the upstream's reason when it refuses the key: 502 naming the upstream, its status and error code, never its text or the key", async () => {
    const id = await credential({ provider: 'openai', apiKey: 'sk-wrong-key-9876', baseUrl: withKey.url });
    const res = await s.call('GET', `/api/v1/credentials/${id}/models`);
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ success: false, code: 'upstream_error' });
    expect(res.body.message).toBe(`Model provider openai (${withKey.url}) refused the credentials (HTTP 401) (invalid_api_key)`);
    expect(res.body.message).not.toContain('Incorrect API key');
    expect(JSON.stringify(res.body)).not.toContain('sk-wrong-key-9876');
  });

  it('gives up within the time limit (504) and says an upstream that is not there is unreachable (503)', async () => {
    const slow = await credential({ provider: 'openai', apiKey: 'sk-x', baseUrl: silentUrl });
    const started = Date.now();
    const res = await s.call('GET', `/api/v1/credentials/${slow}/models`);
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ code: 'timeout', message: expect.stringMatching(/^Model provider openai \(http:\/\/127\.0\.0\.1:\d+\/v1\) did not answer within /) });
    expect(Date.now() - started).toBeLessThan(10_500);

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const gone = await credential({ provider: 'openai', apiKey: 'sk-x', baseUrl: `http://127.0.0.1:${port}/v1` });
    const down = await s.call('GET', `/api/v1/credentials/${gone}/models`);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ code: 'unavailable', message: expect.stringContaining('is unreachable') });
  });

  it("lists an Ollama credential's installed models", async () => {
    const id = await credential({ provider: 'ollama', apiKey: 'none', baseUrl: ollama.url });
    const res = await s.call('GET', `/api/v1/credentials/${id}/models`);
    expect(res.body).toMatchObject({ provider: 'ollama', models: [{ id: 'llama3.2:3b' }, { id: 'qwen2.5:0.5b' }] });
  });

  it("answers another user's credential and an unknown one as missing", async () => {
    const id = await credential({ provider: 'openai', apiKey: 'sk-right-key', baseUrl: withKey.url });
    expect((await s.call('GET', `/api/v1/credentials/${id}/models`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('GET', '/api/v1/credentials/cred_missing/models')).status).toBe(404);
  });
});

describe('GET /api/v1/credentials/default/models', () => {
  it('asks where a project naming no credential calls: the environment without a credential, the chosen credential with one', async () => {
    const fresh = (await s.platform.createUserWithKey({ name: 'fresh' })).key;
    const env = await s.call('GET', '/api/v1/credentials/default/models?provider=openai', { key: fresh });
    expect(env.body).toEqual({ success: true, provider: 'openai', credentialId: null, baseUrl: environment.url, models: [{ id: 'env-model' }] });
    expect((await s.call('GET', '/api/v1/credentials/default/models?provider=ollama', { key: fresh })).body).toMatchObject({
      credentialId: null,
      models: [{ id: 'llama3.2:3b' }, { id: 'qwen2.5:0.5b' }],
    });

    const id = await credential({ provider: 'openai', apiKey: 'sk-right-key', baseUrl: withKey.url }, fresh);
    const project = (await s.call('POST', '/api/projects/create', { key: fresh, body: { name: 'p', model: 'm', provider: 'openai' } })).body.project;
    const chosen = await s.call('GET', '/api/v1/credentials/default/models?provider=openai', { key: fresh });
    expect(chosen.body).toMatchObject({ credentialId: id, baseUrl: withKey.url, models: [{ id: 'gpt-4o' }, { id: 'gpt-4o-mini' }, { id: 'o3-mini' }] });
    // The same credential a project that names none uses.
    expect(project.resolved.credentialId).toBe(id);
  });

  it('refuses a provider without a model list or an unknown one, naming provider', async () => {
    for (const provider of ['local', 'nope', '']) {
      const res = await s.call('GET', `/api/v1/credentials/default/models?provider=${provider}`);
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^provider: /);
    }
  });
});
