import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
let projectId: string;
beforeAll(async () => {
  s = await startTestServer();
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'm', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
});

describe('chats', () => {
  it('creates, lists (newest first, paged), reads messages of and deletes chats', async () => {
    const first = await s.call('POST', '/api/chats', { body: { projectId, name: 'Support' } });
    expect(first.status).toBe(201);
    expect(first.body.chat).toMatchObject({ id: expect.stringMatching(/^chat_/), name: 'Support', projectId });
    const second = await s.call('POST', '/api/chats', { body: { projectId } });
    expect(second.body.chat.name).toBe('New chat');

    const page = await s.call('GET', '/api/chats?limit=1');
    expect(page.body).toMatchObject({ success: true, total: 2, hasMore: true, nextOffset: 1, message: expect.any(String) });
    expect(page.body.chats.map((c: { id: string }) => c.id)).toEqual([second.body.chat.id]);

    expect(await s.call('GET', `/api/chats/${first.body.chat.id}/messages`)).toMatchObject({ status: 200, body: { success: true, messages: [] } });
    expect((await s.call('DELETE', `/api/chats/${first.body.chat.id}`)).body).toEqual({ success: true, message: 'Chat deleted' });
    expect(await s.call('GET', `/api/chats/${first.body.chat.id}/messages`)).toMatchObject({ status: 404, body: { success: false, message: 'Chat not found' } });
  });

  it("lists one project's chats with ?projectId; another user's project is 404 with the empty list", async () => {
    const other = (await s.call('POST', '/api/projects/create', { body: { name: 'other', model: 'm', provider: 'openai' } })).body.project.id;
    const mine = (await s.call('POST', '/api/chats', { body: { projectId: other, name: 'Only here' } })).body.chat;
    const page = await s.call('GET', `/api/chats?projectId=${other}`);
    expect(page.body).toMatchObject({ success: true, total: 1, hasMore: false, chats: [{ id: mine.id, projectId: other }] });
    const all = (await s.call('GET', '/api/chats?limit=100')).body;
    expect(all.total).toBeGreaterThan(1);
    const ofFirst = (await s.call('GET', `/api/chats?projectId=${projectId}&limit=100`)).body;
    expect(ofFirst.chats.every((c: { projectId: string }) => c.projectId === projectId)).toBe(true);
    expect(ofFirst.total).toBe(all.total - 1);
    const foreign = await s.call('GET', `/api/chats?projectId=${other}`, { key: s.keyB });
    expect(foreign).toMatchObject({ status: 404, body: { success: false, chats: [], total: 0, message: `Project ${other} not found` } });
    await s.call('DELETE', `/api/v1/projects/${other}`);
  });

  it("keeps users' chats apart", async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    expect((await s.call('GET', '/api/chats', { key: s.keyB })).body.total).toBe(0);
    expect((await s.call('GET', `/api/chats/${chat.id}/messages`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('DELETE', `/api/chats/${chat.id}`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('POST', '/api/chats', { key: s.keyB, body: { projectId } })).status).toBe(404);
  });

  it("renames a chat: the new name is answered and listed; a bad name is 400 naming the field; another user's chat is 404", async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId, name: 'Before' } })).body.chat;
    const renamed = await s.call('PATCH', `/api/chats/${chat.id}`, { body: { name: '  Refund questions  ' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ success: true, chat: { ...chat, name: 'Refund questions', updatedAt: expect.any(String) } });
    expect(Date.parse(renamed.body.chat.updatedAt)).toBeGreaterThanOrEqual(Date.parse(chat.updatedAt));
    const listed = (await s.call('GET', `/api/chats?projectId=${projectId}&limit=100`)).body.chats.find((c: { id: string }) => c.id === chat.id);
    expect(listed.name).toBe('Refund questions');
    for (const [body, field] of [
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{}, 'name'],
      [{ name: 7 }, 'name'],
      [{ name: 'ok', projectId }, 'body'],
    ] as const) {
      const res = await s.call('PATCH', `/api/chats/${chat.id}`, { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^${field}: `));
    }
    // Each problem also comes as an issue with the path of its field (what the console shows at the field).
    const empty = await s.call('PATCH', `/api/chats/${chat.id}`, { body: { name: '' } });
    expect(empty.body).toEqual({
      success: false,
      code: 'invalid_request',
      message: 'name: Too small: expected string to have >=1 characters',
      details: { issues: [{ path: ['name'], code: 'too_small', message: 'Too small: expected string to have >=1 characters' }] },
    });
    expect((await s.call('PATCH', `/api/chats/${chat.id}`, { body: {} })).body.details.issues).toEqual([
      { path: ['name'], code: 'invalid_type', message: 'Invalid input: expected string, received undefined' },
    ]);
    expect((await s.call('PATCH', `/api/chats/${chat.id}`, { raw: '{"name":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect(await s.call('PATCH', `/api/chats/${chat.id}`, { key: s.keyB, body: { name: 'Mine now' } })).toMatchObject({ status: 404, body: { message: 'Chat not found' } });
    expect((await s.call('PATCH', '/api/chats/chat_missing', { body: { name: 'x' } })).status).toBe(404);
    // Nothing of the refused calls was written.
    expect((await s.call('GET', `/api/chats?projectId=${projectId}&limit=100`)).body.chats.find((c: { id: string }) => c.id === chat.id).name).toBe('Refund questions');
  });

  it('answers a bad list query with the failure shape of the spec', async () => {
    const res = await s.call('GET', '/api/chats?limit=0');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, chats: [], hasMore: false, total: 0, message: expect.stringContaining('limit') });
    expect((await s.call('POST', '/api/chats', { body: { projectId, name: '' } })).status).toBe(400);
    expect((await s.call('POST', '/api/chats', { body: {} })).body.message).toContain('projectId');
  });

  it('deleting the project deletes its chats', async () => {
    const other = (await s.call('POST', '/api/projects/create', { body: { name: 'q', model: 'm', provider: 'openai' } })).body.project.id;
    const chat = (await s.call('POST', '/api/chats', { body: { projectId: other } })).body.chat;
    await s.call('DELETE', `/api/v1/projects/${other}`);
    expect((await s.call('GET', `/api/chats/${chat.id}/messages`)).status).toBe(404);
  });
});
