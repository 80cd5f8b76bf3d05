import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { AgentPlatform } from '@agent-platform/core';
import { CreateProjectRequest, ListProjectsQuery } from '@agent-platform/core/schemas';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * What the list route's speed work could break (docs/BENCHMARKS.md, projects): how answers go
 * out, validation done once, and keys checked against the database on every request.
 */

/** The raw response of a GET: status, headers as Node received them, body. */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.stop());

describe('answers on the wire', () => {
  it('sends a JSON answer whole, with its content-length (not chunked), its content type and a request id', async () => {
    await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'm', provider: 'openai' } });
    for (const [path, key, status] of [
      ['/api/v1/projects?limit=5', s.keyA, 200],
      ['/api/v1/projects?limit=500', s.keyA, 400],
      ['/api/v1/projects', '', 401],
      ['/api/v1/nothing-here', s.keyA, 404],
      ['/health', '', 200],
    ] as const) {
      const res = await rawGet(s.url + path, key ? { authorization: `Bearer ${key}`, 'x-request-id': 'trace-1' } : { 'x-request-id': 'trace-1' });
      expect(res.status, path).toBe(status);
      expect(res.headers['transfer-encoding'], path).toBeUndefined();
      expect(res.headers['content-length'], path).toBe(String(Buffer.byteLength(res.body)));
      expect(res.headers['content-type'], path).toBe('application/json; charset=utf-8');
      expect(res.headers['x-request-id'], path).toBe('trace-1');
      JSON.parse(res.body);
    }
  });

  it('still streams Server-Sent Events with a request id', async () => {
    const { body } = await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'm', provider: 'openai' } });
    const { body: chat } = await s.call('POST', '/api/chats', { body: { projectId: body.project.id } });
    const { body: stream } = await s.call('POST', `/api/chats/${chat.chat.id}/streams`, { body: { chatId: chat.chat.id } });
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/chats/${chat.chat.id}/streams/${stream.stream.id}`, {
      headers: { authorization: `Bearer ${s.keyA}`, 'x-request-id': 'trace-2' },
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBe('trace-2');
    controller.abort();
  });
});

describe('one validation per request', () => {
  it("runs the route's query schema once: the platform's method takes the route's parsed query as it is", async () => {
    const spy = vi.spyOn(ListProjectsQuery, 'safeParse');
    try {
      const res = await s.call('GET', '/api/v1/projects?limit=5');
      expect(res.status).toBe(200);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it("runs the route's body schema once", async () => {
    const spy = vi.spyOn(CreateProjectRequest, 'safeParse');
    try {
      const res = await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'm', provider: 'openai' } });
      expect(res.status).toBe(201);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('still validates what a library user passes to the platform', async () => {
    await expect(s.platform.listProjects({ userId: 'user_x' }, { limit: 500 })).rejects.toThrow('limit: Too big: expected number to be <=100');
  });
});

describe('keys are checked against the database on every request (no key cache)', () => {
  it('a key revoked through one instance is refused at once by another on the same SQLite file, and its use is recorded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ap-keys-'));
    const open = async () => new AgentPlatform({ storage: await sqliteStorage({ path: join(dir, 'agent-platform.db') }) });
    const [a, b] = [await open(), await open()];
    try {
      const { key, id, userId } = await a.createUserWithKey({ name: 'k' });
      const other = await a.createKey({ userId }, { name: 'other' });
      expect((await a.listKeys({ userId })).keys.find((k) => k.id === id)?.lastUsedAt).toBeNull();
      // Used through b (which now knows the key), seen by a as used.
      expect(await b.authenticate(key)).toEqual({ userId, keyId: id });
      expect((await a.listKeys({ userId })).keys.find((k) => k.id === id)?.lastUsedAt).not.toBeNull();
      await a.deleteKey({ userId }, id);
      expect(await b.authenticate(key)).toBeUndefined();
      expect(await a.authenticate(key)).toBeUndefined();
      expect(await b.authenticate(other.key)).toEqual({ userId, keyId: other.id });
    } finally {
      await a.close();
      await b.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a key revoked over HTTP stops working on the next request', async () => {
    const created = await s.call('POST', '/api/auth/create-key', { body: { name: 'short-lived' } });
    expect(created.status).toBe(201);
    expect((await s.call('GET', '/api/v1/projects', { key: created.body.key })).status).toBe(200);
    expect((await s.call('DELETE', `/api/auth/keys/${created.body.id}`, { key: created.body.key })).status).toBe(200);
    expect((await s.call('GET', '/api/v1/projects', { key: created.body.key })).status).toBe(401);
  });
});
