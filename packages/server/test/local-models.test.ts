import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

let ollama: OllamaTestServer;
let s: TestServer;
beforeAll(async () => {
  ollama = await startOllamaServer();
  ollama.models = [ollamaTag('llama3.2:3b', 2_019_393_189), ollamaTag('nomic-embed-text:latest', 274_302_450)];
  s = await startTestServer({ env: { OLLAMA_HOST: ollama.url } });
});
afterAll(async () => {
  await s.stop();
  await ollama.close();
});

describe('local model runtime routes', () => {
  it('lists the installed models with sha256 digests (default address from OLLAMA_HOST)', async () => {
    const res = await s.call('GET', '/api/v1/localmodel/list-models');
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.models.map((m: { name: string }) => m.name)).toEqual(['llama3.2:3b', 'nomic-embed-text:latest']);
    expect(res.body.models[0]).toMatchObject({ size: 2_019_393_189, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), modified_at: expect.any(String) });
    const explicit = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(ollama.url)}`);
    expect(explicit.body.models).toHaveLength(2);
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
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it("refuses a credential's private baseUrl when it is saved, and before connecting when one is stored; loopback works", async () => {
    const saved = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'internal', provider: 'openai', apiKey: 'sk', baseUrl: 'http://10.1.2.3:8000/v1' } });
    expect(saved.status).toBe(400);
    expect(saved.body.message).toBe('baseUrl: Refused to connect to 10.1.2.3: private address; allow it with --allow-host');
    // One stored anyway (saved under an allow-list since removed): its calls are refused.
    const { body } = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'internal', provider: 'openai', apiKey: 'sk', baseUrl: 'http://127.0.0.1:8000/v1' } });
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
