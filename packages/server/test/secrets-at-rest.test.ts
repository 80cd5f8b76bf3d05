import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type QdrantTestServer, startQdrantTestServer } from '../../adapters-vector/test/fixtures/qdrant-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// Every secret a caller hands over is sealed at rest (AES-256-GCM, like a credential's key) and
// never answered: a vector store's apiKey, a credential's base URL with user:password (a base
// URL takes no query), an MCP server URL with user:password or a query. Checked on the bytes of the SQLite file and its WAL, and
// on every GET; the real counterpart (a Qdrant test server, server-everything) still gets them.
let s: TestServer;
let qdrant: QdrantTestServer;
let everything: ServerProcess;
const STORE_KEY = 'qdrant-STORE-SECRET-key-wxyz';

beforeAll(async () => {
  [qdrant, everything] = await Promise.all([startQdrantTestServer({ apiKey: STORE_KEY }), startEverything('streamableHttp')]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK });
});
afterAll(async () => {
  await s.stop();
  await Promise.all([qdrant.stop(), everything.stop()]);
});

async function expectNowhere(secret: string, responses: { body: unknown }[]): Promise<void> {
  expect(await s.stored.holds(secret), `${secret} in the database`).toBe(false);
  for (const res of responses) expect(JSON.stringify(res.body)).not.toContain(secret);
}

const newProject = async (name: string) => (await s.call('POST', '/api/projects/create', { body: { name, model: 'm', provider: 'openai' } })).body.project.id as string;

describe('vector store secrets', () => {
  it('seals apiKey, answers it redacted, keeps it when sent back redacted, and the store still gets it', async () => {
    const projectId = await newProject('sealed store');
    const config = { endpoint: qdrant.url, indexName: 'sealed', apiKey: STORE_KEY };
    const put = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorstoreProvider: 'qdrant', vectorStoreConfig: config, topK: 4 } } });
    expect(put.body).toMatchObject({ success: true });
    const read = await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`);
    expect(read.body).toMatchObject({ success: true, settings: { vectorstoreProvider: 'qdrant', vectorStoreConfig: { ...config, apiKey: '****wxyz' }, topK: 4 } });
    expect(read.body.defaults).not.toContain('vectorStoreConfig');
    await expectNowhere('STORE-SECRET', [put, read]);

    // Sent back as read: the stored key stays, and the store keeps working with it.
    const again = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorStoreConfig: read.body.settings.vectorStoreConfig, topK: 6 } } });
    expect(again.body).toMatchObject({ success: true, message: 'Knowledge settings updated' });
    const seen = qdrant.requests.length;
    const added = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'a.md', fileType: 'md', sourceType: 'upload', content: 'Sealed keys open doors.' } });
    expect(added.body.success).toBe(true);
    const deadline = Date.now() + 30_000;
    while ((qdrant.collections.get('sealed')?.points.size ?? 0) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(qdrant.collections.get('sealed')?.points.size).toBe(1);
    expect(qdrant.requests.slice(seen).every((r) => r.apiKey === STORE_KEY)).toBe(true);
    expect((await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body.settings).toMatchObject({ topK: 6, vectorStoreConfig: { apiKey: '****wxyz' } });

    // A change that leaves the configuration out keeps it, sealed key and all, and the store keeps working.
    expect((await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { topK: 7 } } })).body).toMatchObject({ success: true, reindex: 'none' });
    expect((await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body.settings).toMatchObject({
      topK: 7,
      vectorstoreProvider: 'qdrant',
      vectorStoreConfig: { ...config, apiKey: '****wxyz' },
    });
    const later = qdrant.requests.length;
    expect((await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'Sealed keys', searchType: 'semantic' } })).body.documents[0]?.content).toBe('Sealed keys open doors.');
    expect(qdrant.requests.length).toBeGreaterThan(later);
    expect(qdrant.requests.slice(later).every((r) => r.apiKey === STORE_KEY)).toBe(true);

    // A redaction that is not the stored key's is refused, never stored as a key.
    const wrong = await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { vectorstoreProvider: 'qdrant', vectorStoreConfig: { ...config, apiKey: '****abcd' } } } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toContain('settings.vectorStoreConfig.apiKey: "****abcd" is a redacted value that matches no stored apiKey');
    await expectNowhere('STORE-SECRET', [wrong]);
  });

  it("answers another user's settings as not found", async () => {
    const projectId = await newProject('mine');
    expect((await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`)).body).toMatchObject({ success: true, settings: { vectorStoreConfig: null } });
    expect((await s.call('GET', `/api/knowledge/settings?projectId=${projectId}`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('GET', '/api/knowledge/settings')).status).toBe(400);
  });
});

describe('URLs with user:password or a query', () => {
  it("seals a credential's base URL and answers it masked; provider calls get it whole", async () => {
    const baseUrl = 'http://alice:CRED-PASS-SECRET@127.0.0.1:9/v1';
    const created = await s.call('POST', '/api/v1/credentials', { body: { name: 'proxy', provider: 'openai', apiKey: 'sk-1234', baseUrl } });
    expect(created.status).toBe(201);
    expect(created.body.credential.baseUrl).toBe('http://****:****@127.0.0.1:9/v1');
    const responses = [created, await s.call('GET', '/api/v1/credentials'), await s.call('GET', `/api/v1/credentials/${created.body.credential.id}`)];
    for (const secret of ['CRED-PASS-SECRET']) await expectNowhere(secret, responses);
    const userId = (await s.platform.authenticate(s.keyA))?.userId as string;
    expect((await s.platform.providerCredential({ userId }, 'openai'))?.baseUrl).toBe(baseUrl);
    // A plain URL is stored and answered as it is.
    const plain = await s.call('POST', '/api/v1/credentials', { body: { name: 'plain', provider: 'ollama', apiKey: 'k-0000', baseUrl: 'http://127.0.0.1:11434' } });
    expect(plain.body.credential.baseUrl).toBe('http://127.0.0.1:11434');
  });

  it('seals an MCP server URL, answers it without them, and connects with it whole', async () => {
    const projectId = await newProject('mcp');
    for (const [name, url, secret] of [
      ['query', `http://127.0.0.1:${everything.port}/mcp?token=MCP-QUERY-SECRET`, 'MCP-QUERY-SECRET'],
      ['userinfo', `http://bob:MCP-PASS-SECRET@127.0.0.1:${everything.port}/mcp`, 'MCP-PASS-SECRET'],
    ] as const) {
      const added = await s.call('POST', '/api/mcp/add-server', { body: { projectId, name, transport: 'http', url } });
      expect(added.status, JSON.stringify(added.body)).toBe(201);
      expect(added.body.server.url).toBe(`http://127.0.0.1:${everything.port}/mcp`);
      const id = added.body.server.id;
      const tools = await s.call('GET', `/api/mcp/servers/${id}/tools`);
      expect(tools.body.tools.map((t: { name: string }) => t.name)).toContain('echo');
      await expectNowhere(secret, [added, tools, await s.call('GET', `/api/mcp/servers/${id}`), await s.call('GET', `/api/mcp/servers?projectId=${projectId}`)]);
    }
  });
});
