import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, DOCS_CSP } from '../src/console.js';
import { apiRoutes } from '../src/routes.js';
import { startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ bodyLimit: 4096 });
});
afterAll(async () => {
  await s.stop();
});

const createProject = async (name: string, key = s.keyA) => {
  const res = await s.call('POST', '/api/projects/create', { key, body: { name, model: 'gpt-4o-mini', provider: 'openai' } });
  expect(res.status).toBe(201);
  return res.body.project as { id: string; name: string };
};

describe('authentication', () => {
  const concrete = (path: string) => path.replace(/\{\w+\}/g, 'proj_doesnotmatter');

  it('answers 401 Unauthorized on every API route without a valid key', async () => {
    expect(apiRoutes.length).toBeGreaterThanOrEqual(8);
    for (const route of apiRoutes) {
      for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer ap_wrongwrongwrongwrongwrongwrongwrongwrongwron' }, { authorization: `Basic ${s.keyA}` }]) {
        const res = await s.call(route.method, concrete(route.path), { key: null, headers, body: route.body ? {} : undefined });
        expect(res.status, `${route.method} ${route.path}`).toBe(401);
        // The local model routes answer `error` instead of `message`, as the spec says.
        expect(res.body).toMatchObject(route.kind === 'raw' ? { success: false, error: 'Unauthorized' } : { success: false, message: 'Unauthorized' });
      }
    }
  });

  it('serves /health, /openapi.json and /docs without a key', async () => {
    expect(await s.call('GET', '/health', { key: null })).toMatchObject({ status: 200, body: { status: 'ok' } });
    const docs = await fetch(`${s.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('/docs/swagger-ui-bundle.js');
    const bundle = await fetch(`${s.url}/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect((await fetch(`${s.url}/docs/..%2fpackage.json`)).status).toBe(404);
  });

  it("sends the console's security headers on /docs and its files: its CSP (no framing by any site), nosniff, no referrer", async () => {
    for (const path of ['/docs', '/docs/init.js', '/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/favicon-32x32.png']) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toBe(DOCS_CSP);
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("script-src 'self'");
      // The console's policy but for its images (swagger-ui's icons are data: images, the console's attached ones blob:); nothing else is loosened.
      expect(csp.replace("img-src 'self' data:", "img-src 'self' blob:"), path).toBe(CONSOLE_CSP);
      expect(csp, path).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
    }
    // The page keeps no key: swagger-ui is started without persistAuthorization, and what an
    // earlier version kept is removed (in real Chromium: packages/console/test/docs-page.test.ts).
    const init = await (await fetch(`${s.url}/docs/init.js`)).text();
    expect(init).toContain('persistAuthorization: false');
    expect(init).toContain("localStorage.removeItem('authorized')");
  });

  it('documents every API route in /openapi.json', async () => {
    const { status, body } = await s.call('GET', '/openapi.json', { key: null });
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    for (const route of apiRoutes) {
      expect(body.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
    const list = body.paths['/api/v1/projects'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['cursor', 'limit', 'offset', 'searchWord']);
    expect(body.paths['/api/projects/create'].post.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['name', 'model', 'provider']));
  });

  it('creates, lists and revokes keys; a revoked key stops working', async () => {
    const created = await s.call('POST', '/api/auth/create-key', { body: { name: 'ci' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ success: true, name: 'ci', id: expect.stringMatching(/^key_/), key: expect.stringMatching(/^ap_/) });
    const newKey = created.body.key as string;

    const listed = await s.call('GET', '/api/auth/keys', { key: newKey });
    expect(listed.status).toBe(200);
    expect(listed.body.keys.map((k: { name: string }) => k.name)).toEqual(['ci', 'a']);
    expect(JSON.stringify(listed.body)).not.toContain(newKey);
    expect(JSON.stringify(listed.body)).not.toContain(newKey.slice(15));

    // user B cannot revoke user A's key
    expect((await s.call('DELETE', `/api/auth/keys/${created.body.id}`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('DELETE', `/api/auth/keys/${created.body.id}`)).status).toBe(200);
    expect((await s.call('GET', '/api/auth/keys', { key: newKey })).status).toBe(401);
  });

  it('lists keys a page at a time, newest first, with the total (limit 1-100, default 20)', async () => {
    const { key, userId } = await s.platform.createUserWithKey({ name: 'k0' });
    for (let n = 1; n < 25; n++) await s.platform.createKeyForUser(userId, { name: `k${n}` });
    const first = await s.call('GET', '/api/auth/keys', { key });
    expect(first.body).toMatchObject({ success: true, userId, total: 25, hasMore: true, nextOffset: 20 });
    expect(first.body.keys).toHaveLength(20);
    expect(first.body.keys[0].name).toBe('k24');
    const rest = await s.call('GET', '/api/auth/keys?limit=10&offset=20', { key });
    expect(rest.body).toMatchObject({ total: 25, hasMore: false, nextOffset: 25 });
    expect(rest.body.keys.map((k: { name: string }) => k.name)).toEqual(['k4', 'k3', 'k2', 'k1', 'k0']);
    const all = [...first.body.keys, ...rest.body.keys].map((k: { id: string }) => k.id);
    expect(new Set(all).size).toBe(25);
    for (const bad of ['limit=0', 'limit=101', 'offset=-1', 'limit=x']) {
      const res = await s.call('GET', `/api/auth/keys?${bad}`, { key });
      expect(res.status, bad).toBe(400);
      expect(res.body.message, bad).toMatch(/^(limit|offset):/);
    }
  });

  it("answers the caller's user id where a key is created and listed, so an operator can add keys to that user", async () => {
    const listedA = await s.call('GET', '/api/auth/keys');
    const listedB = await s.call('GET', '/api/auth/keys', { key: s.keyB });
    const userA = listedA.body.userId as string;
    expect(userA).toMatch(/^user_/);
    expect(listedB.body.userId).toMatch(/^user_/);
    expect(listedB.body.userId).not.toBe(userA);

    const created = await s.call('POST', '/api/auth/create-key', { body: { name: 'second' } });
    expect(created.body.userId).toBe(userA);
    expect((await s.call('GET', '/api/auth/keys', { key: created.body.key })).body.userId).toBe(userA);
    // What `keys create --user` does with that id: another key of the same user.
    const operator = await s.platform.createKeyForUser(userA, { name: 'operator' });
    expect(operator.userId).toBe(userA);
    const seen = await s.call('GET', '/api/auth/keys', { key: operator.key });
    expect(seen.body.userId).toBe(userA);
    expect(seen.body.keys.map((k: { name: string }) => k.name)).toEqual(expect.arrayContaining(['a', 'second', 'operator']));

    const doc = await s.call('GET', '/openapi.json', { key: null });
    const schemaOf = (path: string, method: string, status: string) => doc.body.paths[path][method].responses[status].content['application/json'].schema;
    expect(schemaOf('/api/auth/create-key', 'post', '201').required).toContain('userId');
    expect(schemaOf('/api/auth/keys', 'get', '200').required).toContain('userId');
  });
});

describe('projects', () => {
  it('creates, reads, changes and deletes a project', async () => {
    const res = await s.call('POST', '/api/projects/create', {
      body: { name: '  Support bot ', model: 'llama3.2', provider: 'ollama', color: '#3b82f6' },
    });
    expect(res.status).toBe(201);
    const p = res.body.project;
    expect(p).toMatchObject({ name: 'Support bot', model: 'llama3.2', provider: 'ollama', color: '#3b82f6', description: '', icon: '' });
    expect(p.id).toMatch(/^proj_/);
    expect(new Date(p.createdAt).toISOString()).toBe(p.createdAt);

    expect(await s.call('GET', `/api/v1/projects/${p.id}`)).toMatchObject({ status: 200, body: { success: true, project: p } });
    const patched = await s.call('PATCH', `/api/v1/projects/${p.id}`, { body: { description: 'Answers support mail' } });
    expect(patched.status).toBe(200);
    expect(patched.body.project).toMatchObject({ ...p, description: 'Answers support mail', updatedAt: expect.any(String) });

    expect(await s.call('DELETE', `/api/v1/projects/${p.id}`)).toMatchObject({ status: 200, body: { success: true } });
    expect(await s.call('GET', `/api/v1/projects/${p.id}`)).toMatchObject({ status: 404, body: { success: false, code: 'not_found' } });
    expect((await s.call('DELETE', `/api/v1/projects/${p.id}`)).status).toBe(404);
  });

  it("hides one user's projects from another (404, never 403)", async () => {
    const p = await createProject('private to A');
    for (const [method, body] of [['GET'], ['PATCH', { name: 'stolen' }], ['DELETE']] as const) {
      const res = await s.call(method, `/api/v1/projects/${p.id}`, { key: s.keyB, body });
      expect(res.status, method).toBe(404);
      expect(res.body).toEqual({ success: false, message: `Project ${p.id} not found`, code: 'not_found' });
    }
    const listB = await s.call('GET', '/api/v1/projects?limit=100', { key: s.keyB });
    expect(listB.body.projects.map((x: { id: string }) => x.id)).not.toContain(p.id);
    expect((await s.call('GET', `/api/v1/projects/${p.id}`)).body.project.name).toBe('private to A');
  });

  it('filters the list by searchWord', async () => {
    await createProject('Zebra finder');
    await createProject('zebra crossing');
    const res = await s.call('GET', `/api/v1/projects?searchWord=${encodeURIComponent('ZEBRA')}`);
    expect(res.body.projects.map((x: { name: string }) => x.name)).toEqual(['zebra crossing', 'Zebra finder']);
    expect(res.body.total).toBe(2);
  });
});

describe('pagination', () => {
  let key: string;
  const ids: string[] = [];
  beforeAll(async () => {
    key = (await s.platform.createUserWithKey({ name: 'pager' })).key;
    for (let i = 0; i < 45; i++) ids.unshift((await createProject(`p${i}`, key)).id);
  });

  it('by offset gives every project exactly once, newest first', async () => {
    const seen: string[] = [];
    let offset = 0;
    for (let page = 0; page < 10; page++) {
      const res = await s.call('GET', `/api/v1/projects?limit=10&offset=${offset}`, { key });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(45);
      seen.push(...res.body.projects.map((p: { id: string }) => p.id));
      expect(res.body.nextOffset).toBe(offset + res.body.projects.length);
      if (!res.body.hasMore) {
        expect(res.body.nextCursor).toBe('');
        break;
      }
      offset = res.body.nextOffset;
    }
    expect(seen).toEqual(ids);
  });

  it('defaults limit to 20', async () => {
    const res = await s.call('GET', '/api/v1/projects', { key });
    expect(res.body.projects).toHaveLength(20);
    expect(res.body).toMatchObject({ hasMore: true, nextOffset: 20, total: 45, success: true, message: expect.any(String) });
  });

  it('by cursor gives every project exactly once, also while projects are being created', async () => {
    const seen: string[] = [];
    const added: string[] = [];
    let cursor = '';
    for (let page = 0; page < 20; page++) {
      const res = await s.call('GET', `/api/v1/projects?limit=7${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(res.status).toBe(200);
      seen.push(...res.body.projects.map((p: { id: string }) => p.id));
      expect(res.body.nextOffset).toBe(seen.length + added.length);
      // New projects arrive between pages; they are newer than every page already read.
      added.push((await createProject(`new ${page}`, key)).id);
      if (!res.body.hasMore) break;
      cursor = res.body.nextCursor;
    }
    expect(seen).toEqual(ids);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of added) await s.call('DELETE', `/api/v1/projects/${id}`, { key });
  });
});

describe('bad input', () => {
  const expect400 = async (res: { status: number; body: any }, field: string) => {
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.code).toBe('invalid_request');
    expect(res.body.message).toContain(field);
  };

  it('rejects malformed JSON', async () => {
    const res = await s.call('POST', '/api/projects/create', { raw: '{"name": "x",' });
    await expect400(res, 'Malformed JSON');
  });

  it('rejects wrong types and missing fields, naming the field', async () => {
    await expect400(await s.call('POST', '/api/projects/create', { body: { name: 42, model: 'm', provider: 'openai' } }), 'name');
    await expect400(await s.call('POST', '/api/projects/create', { body: { name: 'x', model: 'm' } }), 'provider');
    await expect400(await s.call('POST', '/api/projects/create', { body: { name: 'x', model: 'm', provider: 'skynet' } }), 'provider');
    await expect400(await s.call('POST', '/api/projects/create', { body: [1, 2] }), 'body');
    await expect400(await s.call('POST', '/api/projects/create', { raw: 'null' }), 'body');
    await expect400(await s.call('POST', '/api/auth/create-key', { body: { name: '' } }), 'name');
    const p = await createProject('patch me');
    await expect400(await s.call('PATCH', `/api/v1/projects/${p.id}`, { body: { owner: 'me' } }), 'owner');
    await expect400(await s.call('PATCH', `/api/v1/projects/${p.id}`, { body: {} }), 'at least one field');
    await expect400(await s.call('PATCH', `/api/v1/projects/${p.id}`, { body: { name: 'x'.repeat(201) } }), 'name');
  });

  it('rejects bad list parameters, naming the field', async () => {
    for (const q of ['limit=-1', 'limit=0', 'limit=101', 'limit=1e9', 'limit=abc', 'limit=2.5', 'offset=-3']) {
      await expect400(await s.call('GET', `/api/v1/projects?${q}`), q.split('=')[0] as string);
    }
    await expect400(await s.call('GET', '/api/v1/projects?searchWord=a&searchWord=b'), 'searchWord');
    await expect400(await s.call('GET', `/api/v1/projects?searchWord=${'x'.repeat(500)}`), 'searchWord');
    await expect400(await s.call('GET', '/api/v1/projects?cursor=not-a-cursor'), 'cursor');
  });

  it('answers 413 for a body over the limit, and writes nothing', async () => {
    const before = (await s.call('GET', '/api/v1/projects')).body.total;
    const res = await s.call('POST', '/api/projects/create', { body: { name: 'big', model: 'm', provider: 'openai', description: 'x'.repeat(5000) } });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ success: false, code: 'payload_too_large' });
    // also when the client does not announce the length (chunked)
    const chunked = await fetch(`${s.url}/api/projects/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: new Blob([JSON.stringify({ name: 'big', model: 'm', provider: 'openai', description: 'y'.repeat(10_000) })]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await s.call('GET', '/api/v1/projects')).body.total).toBe(before);
  });

  it('answers unknown routes with 404 in the error shape and keeps serving', async () => {
    expect(await s.call('GET', '/api/v1/nothing-here')).toMatchObject({ status: 404, body: { success: false, code: 'not_found' } });
    expect(await s.call('PUT', '/api/v1/projects')).toMatchObject({ status: 404 });
    expect((await s.call('GET', '/health', { key: null })).status).toBe(200);
  });
});

describe('request ids', () => {
  it('returns a request id, echoing a sane one given by the client', async () => {
    const own = await s.call('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
    expect(own.headers.get('x-request-id')).toBe('trace-123');
    const generated = await s.call('GET', '/api/v1/projects');
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const insane = await s.call('GET', '/health', { headers: { 'x-request-id': 'a b\tc' } });
    expect(insane.headers.get('x-request-id')).not.toBe('a b\tc');
  });
});
