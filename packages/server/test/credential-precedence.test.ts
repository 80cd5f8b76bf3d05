import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// Which credential and address a project's completions use: the project's credential, else the
// caller's default of the provider, else the operator's environment; and GET says which.
let operator: FakeUpstream; // OPENAI_BASE_URL
let other: FakeUpstream; // a credential's own baseUrl
let s: TestServer;

beforeAll(async () => {
  [operator, other] = await Promise.all([startUpstream(), startUpstream()]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: operator.url, OPENAI_API_KEY: 'sk-operator' } });
});
afterAll(async () => {
  await s.stop();
  await Promise.all([operator.close(), other.close()]);
});

const credential = async (body: Record<string, unknown>, key = s.keyA) =>
  (await s.call('POST', '/api/v1/credentials', { key, body: { provider: 'openai', apiKey: 'sk-secret-value-1234', ...body } })).body.credential.id as string;
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
  it('environment < default credential of the provider < the credential the project names', async () => {
    const projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'gpt-test', provider: 'openai' } })).body.project.id;
    // No credential: the operator's environment.
    expect(await resolved(projectId)).toEqual({ credentialId: null, baseUrl: operator.url, source: 'environment' });
    expect(await reached(projectId)).toBe('operator');

    // The first credential of the provider is its default: it wins over the environment.
    const mine = await credential({ name: 'elsewhere', baseUrl: other.url });
    expect(await resolved(projectId)).toEqual({ credentialId: mine, baseUrl: other.url, source: 'default' });
    expect(await reached(projectId)).toBe('other');

    // The README's way: a credential that names the operator's address, named by the project.
    const named = await credential({ name: 'operator', baseUrl: operator.url });
    const patched = await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: named } });
    expect(patched.status).toBe(200);
    expect(patched.body.project).toMatchObject({ credentialId: named, resolved: { credentialId: named, baseUrl: operator.url, source: 'project' } });
    expect(await reached(projectId)).toBe('operator');
    expect(JSON.stringify(patched.body)).not.toContain('sk-secret');

    // null names none again: the default applies (not the newer credential).
    await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: null } });
    expect(await resolved(projectId)).toEqual({ credentialId: mine, baseUrl: other.url, source: 'default' });
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
    expect(refused).toMatchObject({ status: 409, body: { code: 'conflict', message: expect.stringContaining(projectId), details: { projects: [projectId] } } });
    expect((await s.call('GET', `/api/v1/credentials/${used}`)).status).toBe(200);
    // Another user's delete of that id is still a plain 404.
    expect((await s.call('DELETE', `/api/v1/credentials/${used}`, { key: s.keyB })).status).toBe(404);
    await s.call('PATCH', `/api/v1/projects/${projectId}`, { body: { credentialId: null } });
    expect((await s.call('DELETE', `/api/v1/credentials/${used}`)).status).toBe(200);
  });
});

describe('the default credential of a provider', () => {
  /** A user of their own, with a project of each provider that names no credential. */
  async function user() {
    const key = (await s.platform.createUserWithKey({ name: 'u' })).key;
    const project = async (provider: string) => (await s.call('POST', '/api/projects/create', { key, body: { name: provider, model: 'm', provider } })).body.project.id as string;
    return { key, openaiProject: await project('openai'), ollamaProject: await project('ollama') };
  }
  const defaults = async (key: string) =>
    (await s.call('GET', '/api/v1/credentials', { key })).body.credentials
      .filter((c: { default: boolean }) => c.default)
      .map((c: { provider: string; id: string }) => `${c.provider}:${c.id}`)
      .sort();

  it('adding a credential never changes which one existing projects use; default: true moves it, on create and PATCH', async () => {
    const { key, openaiProject, ollamaProject } = await user();
    const first = await credential({ name: 'first', baseUrl: other.url }, key);
    expect(await defaults(key)).toEqual([`openai:${first}`]);
    // A newer credential (here one that cannot work: its key is refused upstream) takes nothing over.
    const newer = await credential({ name: 'newer', baseUrl: operator.url, apiKey: 'sk-wrong' }, key);
    const newest = await credential({ name: 'newest', baseUrl: operator.url, default: false }, key);
    const resolvedOf = async (id: string) => (await s.call('GET', `/api/v1/projects/${id}`, { key })).body.project.resolved;
    expect(await resolvedOf(openaiProject)).toEqual({ credentialId: first, baseUrl: other.url, source: 'default' });
    const list = (await s.call('GET', '/api/v1/credentials', { key })).body.credentials;
    expect(list.map((c: { id: string; default: boolean }) => [c.id, c.default])).toEqual([
      [newest, false],
      [newer, false],
      [first, true],
    ]);
    // Another provider has its own default; the ollama project is not touched by openai's.
    const ollama = await credential({ name: 'local', provider: 'ollama', baseUrl: 'http://127.0.0.1:11434' }, key);
    expect(await defaults(key)).toEqual([`ollama:${ollama}`, `openai:${first}`]);
    expect((await resolvedOf(ollamaProject)).credentialId).toBe(ollama);

    // Moved explicitly: by PATCH, then by a create with default: true.
    expect((await s.call('PATCH', `/api/v1/credentials/${newest}`, { key, body: { data: { default: true } } })).status).toBe(200);
    expect(await resolvedOf(openaiProject)).toEqual({ credentialId: newest, baseUrl: operator.url, source: 'default' });
    const made = await credential({ name: 'made default', baseUrl: other.url, default: true }, key);
    expect(await defaults(key)).toEqual([`ollama:${ollama}`, `openai:${made}`]);
    expect((await resolvedOf(openaiProject)).credentialId).toBe(made);
    // Completions follow what the project shows.
    const before = other.requests.length;
    expect((await s.call('POST', '/api/v1/chat/completions', { key, body: { model: openaiProject, messages: [{ role: 'user', content: 'hi' }] } })).status).toBe(200);
    expect(other.requests.length).toBe(before + 1);
  });

  it('default: false leaves the provider without one: projects that name none use the environment again', async () => {
    const { key, openaiProject } = await user();
    const only = await credential({ name: 'only', baseUrl: other.url }, key);
    expect((await s.call('PATCH', `/api/v1/credentials/${only}`, { key, body: { data: { default: false } } })).status).toBe(200);
    expect(await defaults(key)).toEqual([]);
    expect((await s.call('GET', `/api/v1/projects/${openaiProject}`, { key })).body.project.resolved).toEqual({ credentialId: null, baseUrl: operator.url, source: 'environment' });
    // The next credential saved while the provider has none becomes it; a false one never does.
    await credential({ name: 'not this', default: false }, key);
    expect(await defaults(key)).toEqual([]);
    const next = await credential({ name: 'next' }, key);
    expect(await defaults(key)).toEqual([`openai:${next}`]);
  });

  it('deleting the default while projects use it is 409 naming them; after moving the default it goes, and an unused default goes leaving none', async () => {
    const { key, openaiProject } = await user();
    const used = await credential({ name: 'used', baseUrl: other.url }, key);
    const spare = await credential({ name: 'spare', baseUrl: operator.url }, key);
    const refused = await s.call('DELETE', `/api/v1/credentials/${used}`, { key });
    expect(refused).toMatchObject({
      status: 409,
      body: {
        code: 'conflict',
        details: { projects: [openaiProject] },
        message: expect.stringContaining(`is the default openai credential, used by project ${openaiProject} (they name no credential)`),
      },
    });
    expect((await s.call('GET', `/api/v1/projects/${openaiProject}`, { key })).body.project.resolved.credentialId).toBe(used);
    await s.call('PATCH', `/api/v1/credentials/${spare}`, { key, body: { data: { default: true } } });
    expect((await s.call('DELETE', `/api/v1/credentials/${used}`, { key })).status).toBe(200);
    expect((await s.call('GET', `/api/v1/projects/${openaiProject}`, { key })).body.project.resolved.credentialId).toBe(spare);

    // A default no project relies on may go; nothing is promoted in its place.
    await s.call('PATCH', `/api/v1/projects/${openaiProject}`, { key, body: { credentialId: spare } });
    const unused = await credential({ name: 'unused default', default: true }, key);
    expect((await s.call('DELETE', `/api/v1/credentials/${unused}`, { key })).status).toBe(200);
    expect(await defaults(key)).toEqual([]);
  });

  it("concurrent creates of a new user's first credentials leave exactly one default", async () => {
    const { key } = await user();
    const created = await Promise.all(Array.from({ length: 12 }, (_, n) => s.call('POST', '/api/v1/credentials', { key, body: { name: `c${n}`, provider: 'openai', apiKey: `sk-${n}-0000` } })));
    expect(created.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(created.filter((r) => r.body.credential.default)).toHaveLength(1);
    // And moves at once, from every side: still one.
    const ids = created.map((r) => r.body.credential.id as string);
    const moves = await Promise.all(ids.map((id) => s.call('PATCH', `/api/v1/credentials/${id}`, { key, body: { data: { default: true } } })));
    expect(moves.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(await defaults(key)).toHaveLength(1);
  });
});
