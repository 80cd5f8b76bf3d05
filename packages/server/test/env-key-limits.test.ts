import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// Calls on the operator's own key (OPENAI_API_KEY: the user has no credential) through the
// official openai client against a real server: max_tokens capped (--env-key-max-tokens, set here
// by its variable) and only the allowed models (--env-key-model); a refusal is a 400 naming the
// flag, and nothing reaches the model. A user's own credential is not held to either.

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({
    // A user's credential names the fake too (a URL a user gives, on loopback): its host and port allowed, as --allow-host does.
    outbound: { allowedHosts: [new URL(fake.url).host] },
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-operator', AGENT_PLATFORM_ENV_KEY_MAX_TOKENS: '100', AGENT_PLATFORM_ENV_KEY_MODELS: 'gpt-allowed, gpt-also' },
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await s.stop();
  await fake.close();
});
beforeEach(() => fake.reset());

const sent = () => fake.lastRequest()?.body as { model: string; max_tokens?: number };
const hi = [{ role: 'user' as const, content: 'hi' }];

/** The 400 of a refused call, as the openai client raises it. */
async function refused(call: Promise<unknown>, flag: string, param: string) {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  const e = error as InstanceType<typeof OpenAI.BadRequestError>;
  expect(e.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
  expect(e.message).toContain(flag);
  expect(e.message).toContain(`${param}:`);
  expect(fake.requests).toHaveLength(0);
}

describe("calls on the server's own key", () => {
  it('send the cap as max_tokens when the request asks none, and what it asks up to the cap', async () => {
    await client.chat.completions.create({ model: 'gpt-allowed', messages: hi });
    expect(sent()).toMatchObject({ model: 'gpt-allowed', max_tokens: 100 });
    expect(fake.lastRequest()?.authorization).toBe('Bearer sk-operator');
    await client.chat.completions.create({ model: 'gpt-also', messages: hi, max_tokens: 60 });
    expect(sent().max_tokens).toBe(60);
    await client.chat.completions.create({ model: 'gpt-also', messages: hi, max_completion_tokens: 100 });
    expect(sent().max_tokens).toBe(100);
  });

  it('refuse more max_tokens than the cap, streamed or not, naming --env-key-max-tokens', async () => {
    await refused(client.chat.completions.create({ model: 'gpt-allowed', messages: hi, max_tokens: 101 }), '--env-key-max-tokens', 'max_tokens');
    await refused(client.chat.completions.create({ model: 'gpt-allowed', messages: hi, max_completion_tokens: 5000, stream: true }), '--env-key-max-tokens', 'max_tokens');
  });

  it("refuse a model the operator did not allow, named directly or as a project's, naming --env-key-model", async () => {
    await refused(client.chat.completions.create({ model: 'gpt-4o', messages: hi }), '--env-key-model', 'model');
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'big', model: 'gpt-4o', provider: 'openai' } })).body.project.id;
    await refused(client.chat.completions.create({ model: project, messages: hi }), '--env-key-model', 'model');
    const chatId = (await s.call('POST', '/api/chats', { body: { projectId: project } })).body.chat.id;
    const scoped = await s.call('POST', '/api/v1/ai/chat/completions', { body: { chatId, messages: hi } });
    expect(scoped.status).toBe(400);
    expect(scoped.body.message).toContain('--env-key-model');
    expect((await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages).toEqual([]);
  });

  it("hold a user's own credential to neither", async () => {
    const credential = (await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'mine', provider: 'openai', apiKey: 'sk-user-1234', baseUrl: fake.url } })).body.credential.id;
    const project = (await s.call('POST', '/api/projects/create', { key: s.keyB, body: { name: 'own', model: 'gpt-4o', provider: 'openai', credentialId: credential } })).body.project.id;
    const own = new OpenAI({ apiKey: s.keyB, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
    await own.chat.completions.create({ model: project, messages: hi, max_tokens: 5000 });
    expect(fake.lastRequest()?.authorization).toBe('Bearer sk-user-1234');
    expect(sent()).toMatchObject({ model: 'gpt-4o', max_tokens: 5000 });
    await own.chat.completions.create({ model: project, messages: hi });
    expect(sent().max_tokens).toBeUndefined();
  });

  it('cap max_tokens at 4096 by default, with any model', async () => {
    const plain = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-operator' } });
    try {
      const other = new OpenAI({ apiKey: plain.keyA, baseURL: `${plain.url}/api/v1`, maxRetries: 0 });
      await other.chat.completions.create({ model: 'gpt-anything', messages: hi });
      expect(sent()).toMatchObject({ model: 'gpt-anything', max_tokens: 4096 });
      const error = await other.chat.completions.create({ model: 'gpt-anything', messages: hi, max_tokens: 4097 }).catch((e: unknown) => e);
      expect((error as Error).message).toContain('at most 4096');
    } finally {
      await plain.stop();
    }
  });
});
