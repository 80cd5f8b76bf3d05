import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

let ollama: OllamaTestServer;
let upstream: FakeUpstream;
let s: TestServer;
beforeAll(async () => {
  ollama = await startOllamaServer();
  ollama.models = [ollamaTag('llama3.2:3b', 2_019_393_189), ollamaTag('nomic-embed-text:latest', 274_302_450)];
  upstream = await startUpstream();
  // Loopback for callers' URLs: port 9 (nothing listens there) and the fake upstream, by host and port.
  s = await startTestServer({ env: { OLLAMA_HOST: ollama.url }, outbound: { allowedHosts: ['127.0.0.1:9', new URL(upstream.url).host] } });
});
afterAll(async () => {
  await s.stop();
  await Promise.all([ollama.close(), upstream.close()]);
});

describe('local model runtime routes', () => {
  it('lists the installed models with sha256 digests (default address from OLLAMA_HOST)', async () => {
    const res = await s.call('GET', '/api/v1/localmodel/list-models');
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.models.map((m: { name: string }) => m.name)).toEqual(['llama3.2:3b', 'nomic-embed-text:latest']);
    expect(res.body.models[0]).toMatchObject({ size: 2_019_393_189, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), modified_at: expect.any(String) });
    // The operator's address is reached for calls that give none; a caller naming it is judged by the callers' policy.
    const explicit = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(ollama.url)}`);
    expect(explicit.status).toBe(400);
    expect(explicit.body).toMatchObject({
      success: false,
      models: [],
      error: expect.stringMatching(new RegExp(`^Refused to connect to 127\\.0\\.0\\.1: loopback address .*; allow it with --allow-host 127\\.0\\.0\\.1:${ollama.port}$`)),
    });
  });

  it('deletes a model by its exact name, and answers the spec texts on failure', async () => {
    const ok = await s.call('DELETE', '/api/v1/localmodel/delete-model', { body: { modelName: 'nomic-embed-text:latest' } });
    expect(ok.body).toEqual({ success: true, message: 'Model nomic-embed-text:latest deleted' });
    const missing = await s.call('DELETE', '/api/v1/localmodel/delete-model', { body: { modelName: 'nomic-embed-text:latest' } });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ success: false, error: 'Model not found' });
    ollama.deleteStatus = 500;
    const broken = await s.call('DELETE', '/api/v1/localmodel/delete-model', { body: { modelName: 'llama3.2:3b' } });
    expect(broken.body).toMatchObject({ success: false, error: 'Failed to delete model' });
    ollama.deleteStatus = undefined;
    ollama.tagsStatus = 500;
    const failing = await s.call('GET', '/api/v1/localmodel/list-models');
    expect(failing.body).toMatchObject({ success: false, error: 'Failed to list models', models: [] });
    ollama.tagsStatus = undefined;
  });

  it('says when the runtime is not running', async () => {
    const res = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent('http://127.0.0.1:9')}`);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ success: false, models: [], error: expect.stringMatching(/not running/) });
  });

  it('refuses private and metadata addresses before connecting, and bad input', async () => {
    for (const url of ['http://10.0.0.5:11434', 'http://169.254.169.254', 'http://[::ffff:192.168.1.1]:11434']) {
      const res = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(url)}`);
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ success: false, models: [], error: expect.stringMatching(/^Refused to connect/) });
    }
    expect((await s.call('DELETE', '/api/v1/localmodel/delete-model', { body: {} })).body).toMatchObject({ success: false, error: expect.stringContaining('modelName') });
    expect((await s.call('GET', '/api/v1/localmodel/list-models?baseUrl=not-a-url')).status).toBe(400);
    expect((await s.call('GET', '/api/v1/localmodel/list-models', { key: null })).body).toMatchObject({ success: false, error: 'Unauthorized', models: [] });
  });
});

describe('outbound policy on credentials', () => {
  it("refuses a credential's private baseUrl when it is saved, and before connecting when one is stored; loopback works", async () => {
    const saved = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'internal', provider: 'openai', apiKey: 'sk', baseUrl: 'http://10.1.2.3:8000/v1' } });
    expect(saved.status).toBe(400);
    expect(saved.body.message).toBe('baseUrl: Refused to connect to 10.1.2.3: private address; allow it with --allow-host 10.1.2.3:8000');
    // One stored anyway (saved under an allow-list since removed): its calls are refused.
    const { body } = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'internal', provider: 'openai', apiKey: 'sk', baseUrl: upstream.url } });
    const userId = (await s.platform.authenticate(s.keyB))?.userId as string;
    await s.platform.storage.credentials.update(userId, body.credential.id, { baseUrl: 'http://10.1.2.3:8000/v1', updatedAt: new Date() });
    const refused = await s.call('POST', '/api/v1/chat/completions', { key: s.keyB, body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/Refused to connect to 10\.1\.2\.3/);

    await s.call('POST', '/api/v1/credentials', { body: { name: 'loopback', provider: 'openai', apiKey: 'sk', baseUrl: upstream.url } });
    const ok = await s.call('POST', '/api/v1/chat/completions', { body: { model: 'm', messages: [{ role: 'user', content: 'x' }] } });
    expect(ok.status).toBe(200);
  });
});
