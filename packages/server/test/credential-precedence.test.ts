import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

// Which credential and address a project's completions use: the project's credential, else the
// caller's newest of the provider, else the operator's environment; and GET says which.
let operator: FakeUpstream; // OPENAI_BASE_URL
let other: FakeUpstream; // a credential's own baseUrl
let s: TestServer;

beforeAll(async () => {
  [operator, other] = await Promise.all([startUpstream(), startUpstream()]);
  s = await startTestServer({ env: { OPENAI_BASE_URL: operator.url, OPENAI_API_KEY: 'sk-operator' } });
});
afterAll(async () => {
  await s.stop();
  await Promise.all([operator.close(), other.close()]);
});

const credential = async (body: Record<string, unknown>, key = s.keyA) => (await s.call('POST', '/api/v1/credentials', { key, body: { provider: 'openai', apiKey: 'sk-secret-value-1234', ...body } })).body.credential.id as string;
const resolved = async (projectId: string) => (await s.call('GET', `/api/v1/projects/${projectId}`)).body.project.resolved;
/** Which fake upstream a completion of the project reached. */
async function reached(projectId: string): Promise<'operator' | 'other'> {
  const before = [operator.requests.length, other.requests.length];
  const res = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, messages: [{ role: 'user', content: 'hi' }] } });
  expect(res.status).toBe(200);
  if (operator.requests.length > (before[0] as number)) return 'operator';
  expect(other.requests.length).toBe((before[1] as number) + 1);
  return 'other';
}

describe('credential precedence, shown on the project', () => {
  it('environment < newest credential of the provider < the credential the project names', async () => {
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'gpt-test', provider: 'openai' } })).body.project.id;
    // No credential: the operator's environment.
    expect(await resolved(projectId)).toEqual({ credentialId: null, baseUrl: operator.url, source: 'environment' });
    expect(await reached(projectId)).toBe('operator');

    // A credential with its own baseUrl: the newest credential wins over the environment.
    const mine = await credential({ name: 'elsewhere', baseUrl: other.url });
    expect(await resolved(projectId)).toEqual({ credentialId: mine, baseUrl: other.url, source: 'newest' });
    expect(await reached(projectId)).toBe('other');

    // The README's way: a credential that names the operator's address, named by the project.
    const named = await credential({ name: 'operator', baseUrl: operator.url });
    const newer = await credential({ name: 'newer', baseUrl: other.url });
    const patched = await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: named } });
    expect(patched.status).toBe(200);
    expect(patched.body.project).toMatchObject({ credentialId: named, resolved: { credentialId: named, baseUrl: operator.url, source: 'project' } });
    expect(await reached(projectId)).toBe('operator');
    expect(JSON.stringify(patched.body)).not.toContain('sk-secret');

    // null names none again: the newest credential applies.
    await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: null } });
    expect(await resolved(projectId)).toEqual({ credentialId: newer, baseUrl: other.url, source: 'newest' });
  });

  it('a credential without baseUrl goes to the provider default, which the project shows', async () => {
    const keyOnly = await credential({ name: 'key only' }, s.keyB);
    const created = await s.call('POST', '/api/projects/create', { key: s.keyB, body: { name: 'q', model: 'gpt-test', provider: 'openai', credentialId: keyOnly } });
    expect(created.status).toBe(201);
    expect(created.body.project.resolved).toEqual({ credentialId: keyOnly, baseUrl: operator.url, source: 'project' });
  });

  it("refuses a credentialId that is not the caller's (404) or of another provider (400), on create and update", async () => {
    const theirs = await credential({ name: 'b' }, s.keyB);
    const ollama = await credential({ name: 'ollama', provider: 'ollama' });
    const create = (credentialId: string) => s.call('POST', '/api/projects/create', { body: { name: 'r', model: 'm', provider: 'openai', credentialId } });
    expect(await create(theirs)).toMatchObject({ status: 404, body: { code: 'not_found', message: `credentialId: credential ${theirs} not found` } });
    expect((await create('cred_unknown')).status).toBe(404);
    expect(await create(ollama)).toMatchObject({ status: 400, body: { code: 'invalid_request', message: expect.stringContaining('is for provider ollama, the project uses openai') } });
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'r', model: 'm', provider: 'openai' } })).body.project.id;
    expect((await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: theirs } })).status).toBe(404);
    // Switching the provider away from the named credential's provider is refused too.
    const mine = await credential({ name: 'mine', baseUrl: other.url });
    await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: mine } });
    expect((await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { provider: 'ollama' } })).status).toBe(400);
    expect((await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { provider: 'ollama', credentialId: ollama } })).status).toBe(200);
  });

  it('deleting a credential a project names is 409 naming the project; after unnaming it, 200', async () => {
    const used = await credential({ name: 'used', baseUrl: other.url });
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'uses', model: 'm', provider: 'openai', credentialId: used } })).body.project.id;
    const refused = await s.call('DELETE', `/api/v1/credentials/${used}`);
    expect(refused).toMatchObject({ status: 409, body: { code: 'conflict', message: expect.stringContaining(projectId), projects: [projectId] } });
    expect((await s.call('GET', `/api/v1/credentials/${used}`)).status).toBe(200);
    // Another user's delete of that id is still a plain 404.
    expect((await s.call('DELETE', `/api/v1/credentials/${used}`, { key: s.keyB })).status).toBe(404);
    await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: null } });
    expect((await s.call('DELETE', `/api/v1/credentials/${used}`)).status).toBe(200);
  });
});
