import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type ServerProcess, startServer, TEST_SERVER } from '../../mcp/test/helpers.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// The per-user caps over HTTP, against a real server whose caps are small (set by their
// environment variables, the flags' twins): one more of a kind than the cap answers 429
// rate_limited naming the cap and its flag, and nothing is written; another user is not held
// back; deleting one makes room. Creates racing at the cap never both pass (on PostgreSQL too:
// this suite runs in both storage modes).

const CAPS = { KEYS: 3, PROJECTS: 4, CREDENTIALS: 2, CHATS: 3, TOOLS: 2, MCP_SERVERS: 1, DOCUMENTS: 3, MESSAGES: 5 };

let s: TestServer;
let upstream: FakeUpstream;
let mcp: ServerProcess;
let projectId: string;

beforeAll(async () => {
  const port = await freePort();
  [upstream, mcp] = await Promise.all([startUpstream(), startServer([TEST_SERVER, 'http', String(port)], port)]);
  s = await startTestServer({
    // Users add the loopback MCP server: allowed as --allow-host 127.0.0.1 does.
    outbound: ALLOW_LOOPBACK,
    env: {
      OPENAI_BASE_URL: upstream.url,
      OPENAI_API_KEY: 'sk-upstream',
      ...Object.fromEntries(Object.entries(CAPS).map(([kind, n]) => [`AGENT_PLATFORM_MAX_${kind}_PER_USER`, String(n)])),
    },
  });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'p0', model: 'gpt-test', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
  await mcp.stop();
});

/** The refusal of one more than the cap: 429, naming the cap and its flag. */
function expectCapped(res: { status: number; body: any }, flag: string, max: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body).toMatchObject({ success: false, code: 'rate_limited', details: { max, flag } });
  expect(res.body.message).toContain(`at most ${max} (${flag})`);
}

describe('per-user caps', () => {
  it('API keys: the cap counts the key in use; a revoked one makes room; an operator key is not refused', async () => {
    const { key, userId } = await s.platform.createUserWithKey({ name: 'first' });
    for (let n = 2; n <= CAPS.KEYS; n++) expect((await s.call('POST', '/api/auth/create-key', { key, body: { name: `k${n}` } })).status).toBe(201);
    const over = await s.call('POST', '/api/auth/create-key', { key, body: { name: 'one too many' } });
    expectCapped(over, '--max-keys-per-user', CAPS.KEYS);
    expect(over.body.details.limit).toBe('keys');
    const listed = await s.call('GET', '/api/auth/keys', { key });
    expect(listed.body.total).toBe(CAPS.KEYS);
    expect(listed.body.keys.map((k: { name: string }) => k.name)).not.toContain('one too many');
    await s.call('DELETE', `/api/auth/keys/${listed.body.keys[0].id}`, { key });
    expect((await s.call('POST', '/api/auth/create-key', { key, body: { name: 'again' } })).status).toBe(201);
    // The operator's `keys create --user` is not a user's request: it is not capped.
    await s.platform.createKeyForUser(userId, { name: 'by the operator' });
    expect((await s.call('GET', '/api/auth/keys', { key })).body.total).toBe(CAPS.KEYS + 1);
  });

  it('projects: refused at the cap with nothing written, other users unaffected, room again after a delete', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'projects' });
    const create = (name: string, as = key) => s.call('POST', '/api/projects/create', { key: as, body: { name, model: 'm', provider: 'openai' } });
    const ids: string[] = [];
    for (let n = 0; n < CAPS.PROJECTS; n++) ids.push((await create(`p${n}`)).body.project.id);
    expectCapped(await create('over'), '--max-projects-per-user', CAPS.PROJECTS);
    const list = await s.call('GET', '/api/v1/projects?limit=100', { key });
    expect(list.body.total).toBe(CAPS.PROJECTS);
    expect(list.body.projects.map((p: { name: string }) => p.name)).not.toContain('over');
    expect((await create('b is free', s.keyB)).status).toBe(201);
    await s.call('DELETE', `/api/v1/projects/${ids[0]}`, { key });
    expect((await create('fits again')).status).toBe(201);
  });

  it('projects created at once at the cap: exactly the cap pass', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'racing' });
    const results = await Promise.all(Array.from({ length: 12 }, (_, n) => s.call('POST', '/api/projects/create', { key, body: { name: `r${n}`, model: 'm', provider: 'openai' } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(CAPS.PROJECTS);
    for (const r of results.filter((r) => r.status !== 201)) expectCapped(r, '--max-projects-per-user', CAPS.PROJECTS);
    expect((await s.call('GET', '/api/v1/projects', { key })).body.total).toBe(CAPS.PROJECTS);
  });

  it('credentials', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'credentials' });
    const create = (name: string) => s.call('POST', '/api/v1/credentials', { key, body: { name, provider: 'openai', apiKey: `sk-${name}-1234` } });
    for (let n = 0; n < CAPS.CREDENTIALS; n++) expect((await create(`c${n}`)).status).toBe(201);
    expectCapped(await create('over'), '--max-credentials-per-user', CAPS.CREDENTIALS);
    expect((await s.call('GET', '/api/v1/credentials', { key })).body.credentials).toHaveLength(CAPS.CREDENTIALS);
  });

  it('chats, also those a chat-scoped completion creates', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'chats' });
    const project = (await s.call('POST', '/api/projects/create', { key, body: { name: 'c', model: 'gpt-test', provider: 'openai' } })).body.project.id;
    for (let n = 0; n < CAPS.CHATS; n++) expect((await s.call('POST', '/api/chats', { key, body: { projectId: project } })).status).toBe(201);
    expectCapped(await s.call('POST', '/api/chats', { key, body: { projectId: project } }), '--max-chats-per-user', CAPS.CHATS);
    const requests = upstream.requests.length;
    const scoped = await s.call('POST', '/api/v1/ai/chat/completions', { key, body: { model: project, chatId: 'chat_mine0000000000000000', messages: [{ role: 'user', content: 'hi' }] } });
    expectCapped(scoped, '--max-chats-per-user', CAPS.CHATS);
    expect(upstream.requests.length).toBe(requests);
    expect((await s.call('GET', '/api/chats', { key })).body.total).toBe(CAPS.CHATS);
  });

  it('tools, refused before their code is prepared', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'tools' });
    const project = (await s.call('POST', '/api/projects/create', { key, body: { name: 't', model: 'm', provider: 'openai' } })).body.project.id;
    const create = (name: string) =>
      s.call('POST', '/api/tools/create', {
        key,
        body: { projectId: project, name, description: 'd', language: 'javascript', code: 'function main() { return 1 }', parameters: { type: 'object', properties: {} } },
      });
    for (let n = 0; n < CAPS.TOOLS; n++) expect((await create(`t${n}`)).status).toBe(201);
    expectCapped(await create('over'), '--max-tools-per-user', CAPS.TOOLS);
    expect((await s.call('GET', `/api/tools?projectId=${project}`, { key })).body.total).toBe(CAPS.TOOLS);
  });

  it('MCP servers, refused before connecting', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'mcp' });
    const project = (await s.call('POST', '/api/projects/create', { key, body: { name: 'm', model: 'm', provider: 'openai' } })).body.project.id;
    const add = (name: string, url: string) => s.call('POST', '/api/mcp/add-server', { key, body: { projectId: project, name, transport: 'http', url } });
    expect((await add('first', `http://127.0.0.1:${mcp.port}/mcp`)).status).toBe(201);
    // Nothing listens there: a 502 if it were tried; the cap answers first.
    expectCapped(await add('second', `http://127.0.0.1:${await freePort()}/mcp`), '--max-mcp-servers-per-user', CAPS.MCP_SERVERS);
    expect((await s.call('GET', `/api/mcp/servers?projectId=${project}`, { key })).body.total).toBe(1);
  });

  it('documents: posted texts and uploads; an upload that would pass the cap stores none of its files', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'documents' });
    const project = (await s.call('POST', '/api/projects/create', { key, body: { name: 'd', model: 'm', provider: 'openai' } })).body.project.id;
    const post = (n: number) =>
      s.call('POST', '/api/knowledge/documents', { key, body: { projectId: project, fileName: `d${n}.md`, fileType: 'md', sourceType: 'upload', content: `# Doc ${n}\n\nText ${n}.` } });
    for (let n = 0; n < CAPS.DOCUMENTS - 1; n++) expect((await post(n)).body.success).toBe(true);
    const form = new FormData();
    form.set('projectId', project);
    for (const name of ['a.txt', 'b.txt']) form.append('files', new Blob([`file ${name}`], { type: 'text/plain' }), name);
    const upload = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expectCapped({ status: upload.status, body: await upload.json() }, '--max-documents-per-user', CAPS.DOCUMENTS);
    const listed = async () => (await s.call('GET', `/api/knowledge/documents?projectId=${project}&limit=100`, { key })).body;
    expect((await listed()).total).toBe(CAPS.DOCUMENTS - 1);
    expect((await post(99)).body.success).toBe(true);
    expectCapped(await post(100), '--max-documents-per-user', CAPS.DOCUMENTS);
    const stream = await fetch(`${s.url}/api/knowledge/documents/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ projectId: project, fileName: 'x.md', fileType: 'md', sourceType: 'upload', content: 'x' }),
    });
    expect(stream.status).toBe(429);
    expect((await listed()).documents.map((d: { fileName: string }) => d.fileName).sort()).toEqual(['d0.md', 'd1.md', 'd99.md']);
  });

  it('chat messages: a turn that would pass the cap is refused before the model is called, and nothing of it is stored', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'messages' });
    const project = (await s.call('POST', '/api/projects/create', { key, body: { name: 'msg', model: 'gpt-test', provider: 'openai' } })).body.project.id;
    const chatId = (await s.call('POST', '/api/chats', { key, body: { projectId: project } })).body.chat.id;
    const ask = (content: string) => s.call('POST', '/api/v1/chat/completions', { key, body: { model: project, chatId, messages: [{ role: 'user', content }] } });
    // A turn stores the question and the answer: two turns make 4 messages of 5.
    for (const q of ['one', 'two']) expect((await ask(q)).status).toBe(200);
    const requests = upstream.requests.length;
    const over = await ask('three');
    expectCapped(over, '--max-messages-per-user', CAPS.MESSAGES);
    expect(over.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(upstream.requests.length).toBe(requests);
    expect((await s.call('GET', `/api/chats/${chatId}/messages`, { key })).body.messages).toHaveLength(4);
    // Another chat of the same user counts in the same total; deleting a chat frees its messages.
    const other = (await s.call('POST', '/api/chats', { key, body: { projectId: project } })).body.chat.id;
    expect((await s.call('POST', '/api/v1/chat/completions', { key, body: { model: project, chatId: other, messages: [{ role: 'user', content: 'x' }] } })).status).toBe(429);
    await s.call('DELETE', `/api/chats/${chatId}`, { key });
    expect((await s.call('POST', '/api/v1/chat/completions', { key, body: { model: project, chatId: other, messages: [{ role: 'user', content: 'x' }] } })).status).toBe(200);
  });

  it('chat messages: a turn found over the cap only as it is stored ends its recorded stream with the same OpenAI error live and replayed', async () => {
    const { key } = await s.platform.createUserWithKey({ name: 'replayed failure' });
    const project = (await s.call('POST', '/api/projects/create', { key, body: { name: 'replay', model: 'gpt-test', provider: 'openai' } })).body.project.id;
    const chatId = (await s.call('POST', '/api/chats', { key, body: { projectId: project } })).body.chat.id;
    expect((await s.call('POST', '/api/v1/chat/completions', { key, body: { model: project, chatId, messages: [{ role: 'user', content: 'one' }] } })).status).toBe(200);
    // 2 of 5 stored. The next turn is let in with room for its question and an answer (4), but
    // stores 4 more: the question, a call of a tool that is not there, its error, the answer.
    const streamId = (await s.call('POST', `/api/chats/${chatId}/streams`, { key, body: { chatId } })).body.stream.id;
    upstream.script({ toolCalls: [{ name: 'missing', arguments: '{}' }] }, { text: 'done' });
    const weather = { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: {} } } };
    const live = await fetch(`${s.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: project, chatId, streamId, stream: true, tools: [weather], messages: [{ role: 'user', content: 'two' }] }),
    });
    const replay = await fetch(`${s.url}/api/chats/${chatId}/streams/${streamId}`, { headers: { authorization: `Bearer ${key}` } });
    /** The `error` object of the stream's failure event. */
    const failureOf = (text: string) => {
      const failure = text.split('\n\n').find((event) => event.includes('data: {"error":')) ?? '';
      return JSON.parse(failure.slice(failure.indexOf('data: ') + 6) || 'null')?.error;
    };
    const [fromLive, fromReplay] = [failureOf(await live.text()), failureOf(await replay.text())];
    expect(fromLive).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', message: expect.stringContaining('--max-messages-per-user') });
    expect(fromReplay).toEqual(fromLive);
    expect((await s.call('GET', `/api/chats/${chatId}/messages`, { key })).body.messages).toHaveLength(2);
  });

  it('counts each user apart: the first user is held back by none of the above', async () => {
    expect((await s.call('POST', '/api/chats', { body: { projectId } })).status).toBe(201);
    expect((await s.call('POST', '/api/auth/create-key', { body: { name: 'a2' } })).status).toBe(201);
  });
});
