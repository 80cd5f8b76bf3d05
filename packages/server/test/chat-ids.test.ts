import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

// Chat ids are each user's own: on the chat-scoped completion route an id the caller has no chat
// of makes a new chat of the caller's (when `model` is one of their projects), whoever else has a
// chat of that id. So another user's id answers exactly as a never-used one, and no id can be
// taken from anyone in advance.
let s: TestServer;
let upstream: FakeUpstream;
let projectA: string;
let projectB: string;

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' } });
  const project = async (key: string) => (await s.call('POST', '/api/projects/create', { key, body: { name: 'p', model: 'gpt-test', provider: 'openai' } })).body.project.id as string;
  [projectA, projectB] = await Promise.all([project(s.keyA), project(s.keyB)]);
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const chat = (key: string, body: Record<string, unknown>, path = '/api/v1/ai/chat/completions') =>
  s.call('POST', path, { key, body: { messages: [{ role: 'user', content: `from ${key === s.keyA ? 'A' : 'B'}` }], ...body } });
const messagesOf = async (key: string, chatId: string) => ((await s.call('GET', `/api/chats/${chatId}/messages`, { key })).body.messages ?? []).map((m: { content: string }) => m.content) as string[];
/** The texts the model was sent in the last request, other than the system prompt. */
const sentUpstream = () => ((upstream.requests.at(-1)?.messages ?? []) as { role: string; content: string }[]).filter((m) => m.role !== 'system').map((m) => m.content);
/** An answer with what differs between two calls of the same kind taken out. */
const shape = (res: { status: number; body: any }) => JSON.stringify({ status: res.status, body: res.body }).replace(/"(id|created|chatId)":("[^"]*"|\d+)/g, '"$1":"…"');

describe('chat ids on the chat-scoped completion route', () => {
  it("answers another user's chat id exactly as a never-used one: a new chat of the caller's, with none of the other's messages", async () => {
    // A's chats: one of an id A chose, one the service made.
    expect((await chat(s.keyA, { model: projectA, chatId: 'conversation-1' })).status).toBe(200);
    const made = (await s.call('POST', '/api/chats', { key: s.keyA, body: { projectId: projectA } })).body.chat.id as string;
    expect((await chat(s.keyA, { model: projectA, chatId: made })).status).toBe(200);

    const answers = [];
    for (const chatId of ['conversation-1', made, 'never-used-1']) {
      const res = await chat(s.keyB, { model: projectB, chatId });
      expect(res.status, chatId).toBe(200);
      expect(res.body).toMatchObject({ success: true, chatId });
      // The model saw B's message alone: no history from A's chat of that id.
      expect(sentUpstream(), chatId).toEqual(['from B']);
      expect(await messagesOf(s.keyB, chatId), chatId).toEqual(['from B', 'You said: from B']);
      answers.push(shape(res));
    }
    expect(new Set(answers).size).toBe(1);

    // Without one of B's projects to make it in, every id B has no chat of is 404, alike.
    const missing = [];
    for (const chatId of ['conversation-2', 'never-used-2']) {
      missing.push(await chat(s.keyB, { model: 'gpt-test', chatId }));
      missing.push(await chat(s.keyB, { chatId }));
      missing.push(await chat(s.keyB, { model: projectB, chatId }, '/api/v1/chat/completions'));
    }
    expect((await chat(s.keyA, { model: projectA, chatId: 'conversation-2' })).status).toBe(200);
    for (const res of missing) expect(res).toMatchObject({ status: 404, body: { message: 'Chat not found' } });
    expect(shape(missing[0] as never)).toBe(shape(missing[3] as never));
    expect(shape(missing[1] as never)).toBe(shape(missing[4] as never));
    expect(shape(missing[2] as never)).toBe(shape(missing[5] as never));

    // A's chats are untouched by B's of the same ids.
    expect(await messagesOf(s.keyA, 'conversation-1')).toEqual(['from A', 'You said: from A']);
    expect(await messagesOf(s.keyA, made)).toEqual(['from A', 'You said: from A']);
    const listed = (await s.call('GET', '/api/chats?limit=100', { key: s.keyA })).body.chats.map((c: { id: string; projectId: string }) => [c.id, c.projectId]);
    expect(listed).toEqual(
      expect.arrayContaining([
        ['conversation-1', projectA],
        [made, projectA],
      ]),
    );
    expect(listed.every(([, project]: [string, string]) => project === projectA)).toBe(true);
  });

  it('lets no user take an id from another in advance', async () => {
    // B uses an id first; A's first use of the same id makes A's own chat.
    expect((await chat(s.keyB, { model: projectB, chatId: 'future-id' })).status).toBe(200);
    const res = await chat(s.keyA, { model: projectA, chatId: 'future-id' });
    expect(res).toMatchObject({ status: 200, body: { success: true, chatId: 'future-id' } });
    expect(sentUpstream()).toEqual(['from A']);
    expect(await messagesOf(s.keyA, 'future-id')).toEqual(['from A', 'You said: from A']);
    expect(await messagesOf(s.keyB, 'future-id')).toEqual(['from B', 'You said: from B']);
    // Deleting one user's chat leaves the other's.
    expect((await s.call('DELETE', '/api/chats/future-id', { key: s.keyB })).status).toBe(200);
    expect(await messagesOf(s.keyA, 'future-id')).toEqual(['from A', 'You said: from A']);
    expect((await s.call('GET', '/api/chats/future-id/messages', { key: s.keyB })).status).toBe(404);
  });

  it('makes a new chat only of an id of the one form (1-200 letters, digits, _ or -), a 400 naming chatId otherwise, creating nothing', async () => {
    const before = (await s.call('GET', '/api/chats', { key: s.keyA })).body.total;
    for (const chatId of ['has space', 'a.b', '..', 'x/y', 'ünicode', 'x'.repeat(201), '']) {
      const res = await chat(s.keyA, { model: projectA, chatId });
      expect(res.status, chatId).toBe(400);
      expect(res.body.message, chatId).toMatch(/^chatId/);
    }
    expect((await chat(s.keyA, { model: projectA, chatId: 'a.b' })).body.message).toBe('chatId: 1-200 letters, digits, _ or -');
    expect((await s.call('GET', '/api/chats', { key: s.keyA })).body.total).toBe(before);
    expect(upstream.requests).toEqual([]);
    for (const chatId of ['Ab_9-z', '0b1f7c52-4c7e-4c3f-9a51-55c1b0e8f0aa', 'x'.repeat(200)]) {
      expect((await chat(s.keyA, { model: projectA, chatId })).status, chatId).toBe(200);
    }
  });

  it("makes one chat of a new id that several of the caller's requests name at once", async () => {
    const answers = await Promise.all(Array.from({ length: 5 }, () => chat(s.keyA, { model: projectA, chatId: 'at-once' })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const chats = (await s.call('GET', '/api/chats?limit=100', { key: s.keyA })).body.chats.filter((c: { id: string }) => c.id === 'at-once');
    expect(chats).toHaveLength(1);
    expect(await messagesOf(s.keyA, 'at-once')).toHaveLength(10);
  });
});
