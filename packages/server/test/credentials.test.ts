import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSecretBox } from '../src/secrets.js';
import { onPostgres, startTestServer, type TestServer } from './helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

const KEY = 'sk-live-THIS-IS-A-SECRET-KEY-1234wxyz';

describe('credentials', () => {
  it('stores the key encrypted: never answered, not in the database file', async () => {
    const created = await s.call('POST', '/api/v1/credentials', {
      body: { name: 'OpenAI prod', provider: 'openai', apiKey: KEY, baseUrl: 'https://api.openai.com/v1' },
    });
    expect(created.status).toBe(201);
    expect(created.body.credential).toMatchObject({
      id: expect.stringMatching(/^cred_/),
      name: 'OpenAI prod',
      provider: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      proxy: false,
      isValid: null,
      apiKeyLast4: 'wxyz',
    });
    const id = created.body.credential.id;
    for (const res of [created, await s.call('GET', '/api/v1/credentials'), await s.call('GET', `/api/v1/credentials/${id}`)]) {
      expect(JSON.stringify(res.body)).not.toContain('THIS-IS-A-SECRET');
    }
    // The raw bytes of the database and its write-ahead log (a dump of every row on PostgreSQL).
    expect(await s.stored.holds('THIS-IS-A-SECRET')).toBe(false);
    // The same read finds what is stored in the clear (so the check above can fail).
    expect(await s.stored.holds('OpenAI prod')).toBe(true);
    // The platform itself can decrypt it for provider calls.
    const userId = (await s.platform.authenticate(s.keyA))?.userId as string;
    expect((await s.platform.providerCredential({ userId }, 'openai'))?.apiKey).toBe(KEY);
  });

  // SQLite only by nature: with a database every instance shares, the master key comes from
  // AGENT_PLATFORM_SECRET and no key file is made (see deployment.ts and cli.test.ts).
  it.skipIf(onPostgres)('creates the key file with mode 0600', async () => {
    expect((await stat(join(s.dataDir, 'secret.key'))).mode & 0o777).toBe(0o600);
    const again = await loadSecretBox(s.dataDir, {});
    const sealed = again.seal('x');
    expect((await loadSecretBox(s.dataDir, {})).open(sealed)).toBe('x');
    const fromEnv = await loadSecretBox(s.dataDir, { AGENT_PLATFORM_SECRET: 'a passphrase' });
    expect(() => fromEnv.open(sealed)).toThrow(/master key changed/);
  });

  it('PATCH changes only the given members; id and provider cannot change', async () => {
    const { body } = await s.call('POST', '/api/v1/credentials', { body: { name: 'ollama', provider: 'ollama', apiKey: 'none-1234' } });
    const id = body.credential.id;
    const patch = (data: unknown) => s.call('PATCH', `/api/v1/credentials/${id}`, { body: { data } });
    expect((await patch({ isValid: true })).body).toEqual({ success: true, message: 'Credential updated' });
    let now = (await s.call('GET', `/api/v1/credentials/${id}`)).body.credential;
    expect(now).toMatchObject({ name: 'ollama', isValid: true, proxy: false, apiKeyLast4: '1234' });
    // the alias path without /v1 is the same route
    expect((await s.call('PATCH', `/api/credentials/${id}`, { body: { data: { name: 'local ollama', apiKey: 'new-key-9999', proxy: true } } })).status).toBe(200);
    now = (await s.call('GET', `/api/v1/credentials/${id}`)).body.credential;
    expect(now).toMatchObject({ name: 'local ollama', proxy: true, apiKeyLast4: '9999', isValid: null, provider: 'ollama' });

    for (const [data, field] of [
      [{ provider: 'openai' }, 'provider'],
      [{ id: 'cred_other' }, 'id'],
      [{ name: '' }, 'name'],
      [{ owner: 'me' }, 'owner'],
      [{ isValid: 'yes' }, 'isValid'],
    ] as const) {
      const res = await patch(data);
      expect(res.status, JSON.stringify(data)).toBe(400);
      expect(res.body.message).toContain(field);
    }
    expect((await s.call('PATCH', `/api/v1/credentials/${id}`, { body: {} })).status).toBe(400);
  });

  it('rejects bad input on create', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await s.call('POST', '/api/v1/credentials', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(field);
    };
    await bad({ name: 'x', provider: 'skynet', apiKey: 'k' }, 'provider');
    await bad({ name: 'x', provider: 'openai' }, 'apiKey');
    await bad({ name: 'x', provider: 'openai', apiKey: 'k', baseUrl: 'ftp://x' }, 'baseUrl');
    await bad({ name: 'x', provider: 'openai', apiKey: 'k', baseUrl: 'not a url' }, 'baseUrl');
  });

  it("answers another user's credential as not found", async () => {
    const { body } = await s.call('POST', '/api/v1/credentials', { body: { name: 'mine', provider: 'openai', apiKey: 'k-5678' } });
    const id = body.credential.id;
    for (const [method, extra] of [['GET', {}], ['PATCH', { body: { data: { name: 'x' } } }], ['DELETE', {}]] as const) {
      const res = await s.call(method, `/api/v1/credentials/${id}`, { key: s.keyB, ...extra });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, message: 'Credential not found' });
    }
    expect((await s.call('GET', '/api/v1/credentials', { key: s.keyB })).body.credentials).toEqual([]);
    expect((await s.call('DELETE', `/api/v1/credentials/${id}`)).body).toEqual({ success: true, message: 'Credential deleted' });
    expect((await s.call('GET', `/api/v1/credentials/${id}`)).status).toBe(404);
  });
});
