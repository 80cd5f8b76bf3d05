import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// A project's instructions are its agent's system prompt; its description only describes it.
// Checked where the model sees it: the loopback OpenAI-compatible upstream records what it got.

let upstream: FakeChatServer;
let s: TestServer;
let client: OpenAI;

const DESCRIPTION = 'Answers support mail for the ACME shop (shown to people only)';
const INSTRUCTIONS = 'You are the support agent of ACME.\nAnswer in French, in two sentences at most.';

beforeAll(async () => {
  upstream = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => upstream.reset());

/** The messages the upstream model received in the last call. */
const sentMessages = () => (upstream.lastRequest()?.body.messages ?? []) as { role: string; content: string }[];

async function ask(model: string): Promise<void> {
  const completion = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Where is my parcel?' }] });
  expect(completion.choices[0]?.message.content).toBe('You said: Where is my parcel?');
}

describe('project instructions', () => {
  it('are sent to the model as the system prompt; the description never is', async () => {
    const created = await s.call('POST', '/api/projects/create', {
      body: { name: 'Support', model: 'gpt-4o-mini', provider: 'openai', description: DESCRIPTION, instructions: INSTRUCTIONS },
    });
    expect(created.status).toBe(201);
    expect(created.body.project).toMatchObject({ description: DESCRIPTION, instructions: INSTRUCTIONS });
    const id = created.body.project.id as string;

    await ask(id);
    expect(sentMessages()).toEqual([
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: 'Where is my parcel?' },
    ]);
    expect(upstream.lastRequest()?.raw).not.toContain('ACME shop');

    // GET and the list answer both fields.
    expect((await s.call('GET', `/api/v1/projects/${id}`)).body.project).toMatchObject({ description: DESCRIPTION, instructions: INSTRUCTIONS });
    const listed = (await s.call('GET', '/api/v1/projects?searchWord=Support')).body.projects;
    expect(listed.find((p: { id: string }) => p.id === id)).toMatchObject({ description: DESCRIPTION, instructions: INSTRUCTIONS });

    // Changing the description changes nothing the model sees; changing the instructions does.
    await s.call('PATCH', `/api/v1/projects/${id}`, { body: { description: 'Something else entirely' } });
    await ask(id);
    expect(sentMessages()[0]).toEqual({ role: 'system', content: INSTRUCTIONS });
    const patched = await s.call('PATCH', `/api/v1/projects/${id}`, { body: { instructions: 'Be brief.' } });
    expect(patched.status).toBe(200);
    expect(patched.body.project).toMatchObject({ description: 'Something else entirely', instructions: 'Be brief.' });
    await ask(id);
    expect(sentMessages()[0]).toEqual({ role: 'system', content: 'Be brief.' });

    // Empty instructions: no system message at all (the description is not a fallback).
    await s.call('PATCH', `/api/v1/projects/${id}`, { body: { instructions: '' } });
    await ask(id);
    expect(sentMessages()).toEqual([{ role: 'user', content: 'Where is my parcel?' }]);
  });

  it('a project created with a description and no instructions sends no system prompt', async () => {
    const created = await s.call('POST', '/api/projects/create', { body: { name: 'Described', model: 'gpt-4o-mini', provider: 'openai', description: DESCRIPTION } });
    expect(created.body.project).toMatchObject({ description: DESCRIPTION, instructions: '' });
    await ask(created.body.project.id);
    expect(sentMessages().map((m) => m.role)).toEqual(['user']);
  });

  it('takes 32,000 characters and refuses more with a 400 naming the field and the limit, changing nothing', async () => {
    const longest = 'x'.repeat(32_000);
    const created = await s.call('POST', '/api/projects/create', { body: { name: 'Long', model: 'gpt-4o-mini', provider: 'openai', instructions: longest } });
    expect(created.status).toBe(201);
    const id = created.body.project.id as string;
    await ask(id);
    expect(sentMessages()[0]?.content).toBe(longest);

    for (const [method, path, body] of [
      ['POST', '/api/projects/create', { name: 'Too long', model: 'gpt-4o-mini', provider: 'openai', instructions: `${longest}y` }],
      ['PATCH', `/api/v1/projects/${id}`, { instructions: `${longest}y` }],
    ] as const) {
      const res = await s.call(method, path, { body });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^instructions: .*32000 characters/);
    }
    expect((await s.call('GET', '/api/v1/projects?searchWord=Too%20long')).body.total).toBe(0);
    expect((await s.call('GET', `/api/v1/projects/${id}`)).body.project.instructions).toBe(longest);
    for (const instructions of [42, null, ['a']]) {
      const res = await s.call('PATCH', `/api/v1/projects/${id}`, { body: { instructions } });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^instructions: /);
    }
  });

  it("another user's project is a missing one", async () => {
    const created = await s.call('POST', '/api/projects/create', { body: { name: 'Mine', model: 'gpt-4o-mini', provider: 'openai', instructions: 'Secret prompt' } });
    const res = await s.call('PATCH', `/api/v1/projects/${created.body.project.id}`, { key: s.keyB, body: { instructions: 'Hijacked' } });
    expect(res.status).toBe(404);
    expect((await s.call('GET', `/api/v1/projects/${created.body.project.id}`)).body.project.instructions).toBe('Secret prompt');
  });
});
