import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

/**
 * The audit log over HTTP (SQLite, and PostgreSQL in the "postgres" project): what an event
 * keeps of a request (field names, never values or secrets; a capped user agent), failed
 * changes, `GET /api/v1/audit`'s filters and keyset pages, who reads what, and the retention's
 * purge. Every route's own event is checked by the route suite (routes.test.ts).
 */

let s: TestServer;
let userA: string;
let userB: string;

beforeAll(async () => {
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, audit: { retentionDays: 2, purgeIntervalMs: 100 } });
  userA = (await s.platform.authenticate(s.keyA))?.userId as string;
  userB = (await s.platform.authenticate(s.keyB))?.userId as string;
}, 60_000);
afterAll(async () => {
  await s?.stop();
});

const ok = async (method: string, path: string, body?: unknown, key = s.keyA) => {
  const res = await s.call(method, path, { key, body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
};
const audit = (query: Record<string, string> = {}, key = s.keyA) => s.call('GET', `/api/v1/audit?${new URLSearchParams(query)}`, { key });

describe('what an event keeps', () => {
  it('names the fields a change sets and never a value, a secret least of all', async () => {
    const SECRET = 'sk-audit-SECRET-4d9f1c';
    const HEADER_SECRET = 'Bearer audit-HEADER-SECRET-77e1';
    const ENV_SECRET = 'audit-ENV-SECRET-3a3a';
    const { credential } = await ok('POST', '/api/v1/credentials', { name: 'mine', provider: 'openai', apiKey: SECRET });
    await ok('PATCH', `/api/v1/credentials/${credential.id}`, { data: { apiKey: `${SECRET}-rotated`, name: 'renamed' } });
    const { project } = await ok('POST', '/api/projects/create', { name: 'secretive', model: 'gpt-test', provider: 'openai', description: 'D-VALUE-9' });
    // An MCP server whose headers carry a secret: refused (nothing listens there), its event failed, the secret nowhere.
    const mcp = await s.call('POST', '/api/mcp/add-server', {
      body: { projectId: project.id, name: 'm', transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: HEADER_SECRET, 'X-Env': ENV_SECRET } },
    });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(503);
    const { key } = await ok('POST', '/api/auth/create-key', { name: 'second' });

    const rows = await s.platform.storage.audit.list({ limit: 1000 });
    const text = JSON.stringify(rows);
    for (const secret of [SECRET, HEADER_SECRET, 'audit-HEADER-SECRET', ENV_SECRET, key, key.slice(-12), 'D-VALUE-9']) expect(text).not.toContain(secret);
    const listed = JSON.stringify((await audit({ limit: '100' })).body);
    for (const secret of [SECRET, HEADER_SECRET, ENV_SECRET, key]) expect(listed).not.toContain(secret);

    const of = (resource: string, action: string) => rows.find((e) => e.resource === resource && e.action === action && e.userId === userA);
    expect(of('credential', 'create')).toMatchObject({ resourceId: credential.id, fields: ['name', 'provider', 'apiKey'], outcome: 'succeeded' });
    expect(of('credential', 'update')).toMatchObject({ resourceId: credential.id, fields: ['apiKey', 'name'], outcome: 'succeeded' });
    expect(of('project', 'create')?.fields).toEqual(['name', 'model', 'provider', 'description']);
    expect(of('mcp-server', 'create')).toMatchObject({ resourceId: null, outcome: 'failed', fields: ['projectId', 'name', 'transport', 'url', 'headers'] });
  });

  it('records a refused change as failed, with the id it named; a body the schema refuses records nothing', async () => {
    const before = (await audit({ action: 'update', resource: 'project' })).body.events.length;
    const missing = await s.call('PATCH', '/api/v1/projects/proj_doesnotexist0', { body: { name: 'x' } });
    expect(missing.status).toBe(404);
    const bad = await s.call('PATCH', '/api/v1/projects/proj_doesnotexist0', { body: { name: 12 } });
    expect(bad.status).toBe(400);
    const { events } = (await audit({ action: 'update', resource: 'project' })).body;
    expect(events).toHaveLength(before + 1);
    expect(events[0]).toMatchObject({ resourceId: 'proj_doesnotexist0', outcome: 'failed', fields: ['name'], keyId: expect.stringMatching(/^key_/) });
  });

  it('keeps at most 256 characters of a user agent', async () => {
    await s.call('POST', '/api/projects/create', { body: { name: 'ua', model: 'm', provider: 'openai' }, headers: { 'user-agent': `agent/${'x'.repeat(5000)}` } });
    const [event] = (await audit({ resource: 'project', action: 'create', limit: '1' })).body.events;
    expect(event.userAgent).toHaveLength(256);
    expect(event.userAgent.startsWith('agent/xxx')).toBe(true);
  });
});

describe('GET /api/v1/audit', () => {
  let chats: string[];

  beforeAll(async () => {
    const { project } = await ok('POST', '/api/projects/create', { name: 'paged', model: 'gpt-test', provider: 'openai' });
    chats = [];
    for (let i = 0; i < 7; i++) chats.push((await ok('POST', '/api/chats', { projectId: project.id })).chat.id);
    await ok('PATCH', `/api/chats/${chats[0]}`, { name: 'renamed' });
    await ok('POST', '/api/projects/create', { name: 'b', model: 'gpt-test', provider: 'openai' }, s.keyB);
  });

  it('pages newest first with cursors, every event once, and filters by each member', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const res = await audit({ resource: 'chat', action: 'create', limit: '3', ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.body.events.map((e: { resourceId: string }) => e.resourceId));
      cursor = res.body.nextCursor ?? undefined;
      expect(res.body.hasMore).toBe(cursor !== undefined);
      if (!cursor) break;
    }
    expect(seen).toEqual([...chats].reverse());

    const all = (await audit({ limit: '100' })).body.events as { at: string; id: string; userId: string }[];
    const ordered = [...all].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1));
    expect(all.map((e) => e.id)).toEqual(ordered.map((e) => e.id));
    expect(new Set(all.map((e) => e.userId))).toEqual(new Set([userA]));

    expect((await audit({ resourceId: chats[0] as string })).body.events.map((e: { action: string }) => e.action)).toEqual(['update', 'create']);
    expect((await audit({ action: 'update', resource: 'chat' })).body.events).toHaveLength(1);
    expect((await audit({ userId: userB })).body.events).toEqual([]);
    expect((await audit({ outcome: 'failed', resource: 'chat' })).body.events).toEqual([]);
    const middle = (await audit({ resource: 'chat', action: 'create', limit: '100' })).body.events as { at: string }[];
    const from = (middle[5] as { at: string }).at;
    const to = (middle[1] as { at: string }).at;
    const window = (await audit({ resource: 'chat', action: 'create', from, to, limit: '100' })).body.events as { at: string }[];
    expect(window.length).toBeGreaterThan(0);
    for (const e of window) expect(e.at >= from && e.at < to).toBe(true);
  });

  it("reads the caller's own workspace only: another is 404, and another user's events are never in it", async () => {
    const own = await audit({ workspaceId: userA });
    expect(own.status).toBe(200);
    expect(own.body.events.length).toBeGreaterThan(0);
    const other = await audit({ workspaceId: userB });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ success: false, code: 'not_found' });
    const b = (await audit({}, s.keyB)).body.events as { userId: string; resource: string }[];
    // B's: the project, and the key the server made for B (no key: made outside the API).
    expect(b.map((e) => [e.userId, e.resource])).toEqual([
      [userB, 'project'],
      [userB, 'key'],
    ]);
  });

  it('refuses a cursor it did not make and a bad instant, naming them', async () => {
    const cursor = await audit({ cursor: 'not-a-cursor' });
    expect(cursor.status).toBe(400);
    expect(cursor.body.message).toMatch(/^cursor: /);
    const from = await audit({ from: 'yesterday' });
    expect(from.status).toBe(400);
    expect(from.body.message).toMatch(/^from: /);
  });
});

describe('retention', () => {
  it('deletes the events older than the retention on its interval, and only those', async () => {
    const now = s.platform.clock.now().getTime();
    const old = (n: number, days: number) => ({
      id: `aud_retention${n}`,
      at: new Date(now - days * 86_400_000),
      workspaceId: userA,
      userId: userA,
      keyId: null,
      action: 'update',
      resource: 'project',
      resourceId: `proj_old${n}`,
      fields: [],
      outcome: 'succeeded' as const,
      address: null,
      userAgent: null,
    });
    await s.platform.storage.audit.append(old(1, 3));
    await s.platform.storage.audit.append(old(2, 1));
    const ids = async () => (await s.platform.storage.audit.list({ resource: 'project', limit: 1000 })).map((e) => e.id);
    await expect.poll(ids, { timeout: 10_000 }).not.toContain('aud_retention1');
    expect(await ids()).toContain('aud_retention2');
  });
});
