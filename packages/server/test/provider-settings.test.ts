import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// Issue 28's provider seam: credentials with each provider's fields (sealed, never answered),
// projects' providerOptions checked against the provider's registry entry, and a request's
// provider_options over the project's, reaching the model call.
let upstream: FakeUpstream;
let s: TestServer;

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-operator' } });
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const KEY = 'sk-provider-fields-SECRET-9876';

describe('credentials per provider', () => {
  it('answers the fields that are not secrets and the last four characters of each secret, never a secret', async () => {
    const created = await s.call('POST', '/api/v1/credentials', { body: { name: 'fields', provider: 'openai', apiKey: KEY, baseUrl: upstream.url, default: false } });
    expect(created.status).toBe(201);
    expect(created.body.credential).toMatchObject({ provider: 'openai', apiKeyLast4: '9876', fields: {}, secretsLast4: { apiKey: '9876' } });
    expect(JSON.stringify(created.body)).not.toContain('SECRET');
    const userId = (await s.platform.authenticate(s.keyA))?.userId as string;
    const usable = await s.platform.providerCredential({ userId }, 'openai', created.body.credential.id);
    expect(usable).toMatchObject({ apiKey: KEY, fields: { apiKey: KEY } });
    expect(await s.stored.holds('SECRET-9876')).toBe(false);
  });

  it("refuses a field that is not the provider's, naming it, on create and on update", async () => {
    const create = await s.call('POST', '/api/v1/credentials', { body: { name: 'x', provider: 'openai', apiKey: KEY, region: 'us-east-1' } });
    expect(create.status).toBe(400);
    expect(create.body.message).toContain('region');
    const id = (await s.call('POST', '/api/v1/credentials', { body: { name: 'y', provider: 'openai', apiKey: KEY, default: false } })).body.credential.id;
    const update = await s.call('PATCH', `/api/v1/credentials/${id}`, { body: { data: { region: 'us-east-1' } } });
    expect(update.status).toBe(400);
    // A field of no provider is an unknown member of the body; one of another provider's is named by the service (see the Bedrock case).
    expect(update.body).toMatchObject({ code: 'invalid_request' });
    expect(update.body.message).toContain('region');
  });

  it('refuses a provider the registry does not list, naming the providers it does', async () => {
    const res = await s.call('POST', '/api/v1/credentials', { body: { name: 'x', provider: 'nope', apiKey: KEY } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('provider must be one of openai, ollama');
  });

  it('a new key replaces the sealed fields: the next call upstream carries it, and the answers its last four', async () => {
    const id = (await s.call('POST', '/api/v1/credentials', { body: { name: 'rotate', provider: 'openai', apiKey: 'sk-old-key-aaaa', baseUrl: upstream.url, default: false } })).body.credential.id;
    expect((await s.call('PATCH', `/api/v1/credentials/${id}`, { body: { data: { apiKey: 'sk-new-key-bbbb' } } })).status).toBe(200);
    expect((await s.call('GET', `/api/v1/credentials/${id}`)).body.credential).toMatchObject({ apiKeyLast4: 'bbbb', secretsLast4: { apiKey: 'bbbb' }, isValid: null });
    const userId = (await s.platform.authenticate(s.keyA))?.userId as string;
    expect((await s.platform.providerCredential({ userId }, 'openai', id))?.apiKey).toBe('sk-new-key-bbbb');
  });
});

describe('provider options', () => {
  const project = (providerOptions: unknown, provider = 'openai') => s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'gpt-test', provider, providerOptions } });

  it("keeps a project's options when they are its provider's, and answers them", async () => {
    const res = await project({ reasoningEffort: 'low', api: 'chat' });
    expect(res.status).toBe(201);
    expect(res.body.project.providerOptions).toEqual({ reasoningEffort: 'low', api: 'chat' });
    expect((await s.call('GET', `/api/v1/projects/${res.body.project.id}`)).body.project.providerOptions).toEqual({ reasoningEffort: 'low', api: 'chat' });
  });

  it("refuses options that are not the provider's: 400 naming the key and what the provider takes", async () => {
    const unknown = await project({ thinking: { type: 'enabled', budgetTokens: 2048 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('providerOptions: "thinking" is not an option of provider openai (it takes api, reasoningEffort)');
    const wrong = await project({ reasoningEffort: 'extreme' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/^providerOptions\.reasoningEffort: /);
    expect((await project({ reasoningEffort: 'low' }, 'ollama')).body.message).toContain('"reasoningEffort" is not an option of provider ollama (it takes none)');
  });

  it('checks options on update against the provider the project will have, kept options included', async () => {
    const id = (await project({ reasoningEffort: 'high' })).body.project.id;
    const bad = await s.call('PATCH', `/api/v1/projects/${id}`, { body: { providerOptions: { budget: 1 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('"budget" is not an option of provider openai');
    const moved = await s.call('PATCH', `/api/v1/projects/${id}`, { body: { provider: 'ollama' } });
    expect(moved.status).toBe(400);
    expect(moved.body.message).toContain('"reasoningEffort" is not an option of provider ollama');
    const both = await s.call('PATCH', `/api/v1/projects/${id}`, { body: { provider: 'ollama', providerOptions: null } });
    expect(both.status).toBe(200);
    expect(both.body.project).toMatchObject({ provider: 'ollama', providerOptions: null });
  });

  it("sends the project's options with each model call, the request's provider_options over them (through the openai client)", async () => {
    const id = (await project({ reasoningEffort: 'low' })).body.project.id;
    const client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: id, messages: [{ role: 'user', content: 'hi' }] });
    expect(upstream.requests.at(-1)).toMatchObject({ model: 'gpt-test', reasoning_effort: 'low' });
    await client.chat.completions.create({ model: id, messages: [{ role: 'user', content: 'hi' }], provider_options: { reasoningEffort: 'high' } } as never);
    expect(upstream.requests.at(-1)).toMatchObject({ reasoning_effort: 'high' });
    // A plain model takes them too; the `api` choice is never sent upstream.
    await client.chat.completions.create({ model: 'gpt-plain', messages: [{ role: 'user', content: 'hi' }], provider_options: { api: 'chat' } } as never);
    expect(upstream.requests.at(-1)).not.toHaveProperty('api');
  });

  it("refuses a request's provider_options the provider does not take, naming the key, before anything goes upstream", async () => {
    const client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: 'gpt-plain', messages: [{ role: 'user', content: 'hi' }], provider_options: { thinking: {} } } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('provider_options: "thinking" is not an option of provider openai');
    expect(upstream.requests).toEqual([]);
  });
});
