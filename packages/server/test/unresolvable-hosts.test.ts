import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// URLs whose host name does not resolve: `.invalid` never does (RFC 2606), and inside the
// loopback-only namespace of scripts/isolated.sh no name does (EAI_AGAIN), outside ENOTFOUND.
// Every route that connects where a caller says answers 503 `unavailable` saying so, never
// "not running" or "Unable to detect".
const HOST = 'nothing.invalid';
const DOES_NOT_RESOLVE = `host name '${HOST}' does not resolve`;
/** The whole message: what could not be reached, then the name (EAI_AGAIN adds why in parentheses). */
const unresolved = (subject: string) => expect.stringMatching(new RegExp(`^${(subject + DOES_NOT_RESOLVE).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( \\(.+\\))?$`));

let s: TestServer;
let projectId: string;
beforeAll(async () => {
  await expect(lookup(HOST)).rejects.toThrow(); // the premise: the name has no address here
  // A credential is first saved at 127.0.0.1:8000 (then its name is changed in storage): that port allowed.
  s = await startTestServer({ outbound: { allowedHosts: ['127.0.0.1:8000'] }, env: { AGENT_PLATFORM_MCP_TIMEOUT_MS: '2000' } });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'dns', model: 'gpt-test', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
});

describe('a caller-supplied URL whose host name does not resolve', () => {
  it('MCP transport detection says the name does not resolve (503)', async () => {
    const res = await s.call('POST', '/api/mcp/detect-transport', { body: { url: `http://${HOST}/mcp` } });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ success: false, code: 'unavailable', message: unresolved(`MCP server at http://${HOST}/mcp could not be reached: `), details: { host: HOST } });
  });

  it('adding an MCP server (http and sse) says so and saves nothing', async () => {
    for (const transport of ['http', 'sse']) {
      const res = await s.call('POST', '/api/mcp/add-server', { body: { projectId, name: `dns-${transport}`, transport, url: `http://${HOST}:8080/mcp` } });
      expect(res.status, transport).toBe(503);
      expect(res.body.message, transport).toEqual(unresolved(`MCP server at http://${HOST}:8080/mcp could not be reached: `));
    }
    expect((await s.call('GET', `/api/mcp/servers?projectId=${projectId}`)).body.servers).toEqual([]);
  });

  it("a credential's baseUrl: saving it answers 503 naming the name and stores nothing", async () => {
    const saved = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'typo', provider: 'openai', apiKey: 'sk-x', baseUrl: `http://${HOST}:8000/v1` } });
    expect(saved.status).toBe(503);
    expect(saved.body).toMatchObject({ code: 'unavailable', message: unresolved('baseUrl: '), details: { host: HOST } });
    expect((await s.call('GET', '/api/v1/credentials', { key: s.keyB })).body.credentials).toEqual([]);
  });

  it('a stored credential whose name stopped resolving: the completion answers 503 naming the provider and the name', async () => {
    const { body } = await s.call('POST', '/api/v1/credentials', { key: s.keyB, body: { name: 'moved', provider: 'openai', apiKey: 'sk-x', baseUrl: 'http://127.0.0.1:8000/v1' } });
    // Its DNS record went away after it was saved (the API checks names when they are saved).
    const userId = (await s.platform.authenticate(s.keyB))?.userId as string;
    await s.platform.storage.credentials.update(userId, body.credential.id, { baseUrl: `http://${HOST}:8000/v1`, updatedAt: new Date() });
    const res = await s.call('POST', '/api/v1/chat/completions', { key: s.keyB, body: { model: 'gpt-x', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'unavailable', message: unresolved(`Model provider openai (http://${HOST}:8000/v1) is unreachable: `) });
  });

  it('the local model routes say so instead of "not running"', async () => {
    const list = await s.call('GET', `/api/v1/localmodel/list-models?baseUrl=${encodeURIComponent(`http://${HOST}:11434`)}`);
    expect(list.status).toBe(503);
    expect(list.body).toEqual({ success: false, code: 'unavailable', models: [], error: unresolved(`Local model runtime at http://${HOST}:11434 cannot be reached: `) });
    const del = await s.call('DELETE', '/api/v1/localmodel/delete-model', { body: { modelName: 'llama3.2:3b', baseUrl: `http://${HOST}:11434` } });
    expect(del.status).toBe(503);
    expect(del.body).toEqual({ success: false, code: 'unavailable', error: unresolved('Failed to delete model: ') });
  });

  it('a vector store endpoint: the settings are refused naming the name', async () => {
    const res = await s.call('PUT', '/api/knowledge/settings', {
      body: { projectId, settings: { vectorstoreProvider: 'qdrant', vectorStoreConfig: { endpoint: `http://${HOST}:6333`, indexName: 'x' } } },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(DOES_NOT_RESOLVE);
  });
});
