import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { formatCommandLine } from '@agent-platform/mcp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVERYTHING, freePort, type ServerProcess, startEverything, startServer, TEST_SERVER } from '../../mcp/test/helpers.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// Real MCP servers on loopback: server-everything over streamable HTTP and SSE, and a server
// written with the SDK's classes whose tools hang, fail or crash. The whole suite runs in a
// loopback-only network namespace (scripts/isolated.sh), so nothing can leave this machine.
let s: TestServer;
let upstream: FakeUpstream;
let http: ServerProcess;
let sse: ServerProcess;
let faulty: ServerProcess;
let projectId: string;
const SECRET_HEADER = 'Bearer mcp-header-secret-5d2a';

beforeAll(async () => {
  [upstream, http, sse] = await Promise.all([startUpstream(), startEverything('streamableHttp'), startEverything('sse')]);
  const port = await freePort();
  faulty = await startServer([TEST_SERVER, 'http', String(port)], port);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'k', AGENT_PLATFORM_MCP_TIMEOUT_MS: '1000' } });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'mcp agent', model: 'gpt-test', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await Promise.all([upstream.close(), http.stop(), sse.stop(), faulty.stop()]);
});

const everythingUrl = () => `http://127.0.0.1:${http.port}/mcp`;
const sseUrl = () => `http://127.0.0.1:${sse.port}/sse`;
const add = (body: Record<string, unknown>, key = s.keyA) => s.call('POST', '/api/mcp/add-server', { key, body: { projectId, ...body } });

describe('transport detection', () => {
  it('finds streamable HTTP and SSE, and says when nothing answers', async () => {
    expect((await s.call('POST', '/api/mcp/detect-transport', { body: { url: everythingUrl() } })).body).toMatchObject({
      success: true,
      supportedTypes: ['http'],
      recommended: 'http',
    });
    expect((await s.call('POST', '/api/mcp/detect-transport', { body: { url: sseUrl() } })).body).toMatchObject({
      success: true,
      supportedTypes: expect.arrayContaining(['sse']),
    });
    const closed = await s.call('POST', '/api/mcp/detect-transport', { body: { url: `http://127.0.0.1:${await freePort()}/mcp` } });
    expect(closed.status).toBe(502);
    expect(closed.body).toMatchObject({ success: false, message: 'Unable to detect transport types', supportedTypes: [], recommended: null });
  });

  it('refuses private and metadata addresses before connecting, and bad URLs', async () => {
    for (const url of ['http://10.0.0.1/mcp', 'http://169.254.169.254/latest/meta-data', 'http://[fd00::1]/mcp']) {
      const res = await s.call('POST', '/api/mcp/detect-transport', { body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.message, url).toMatch(/refused|not allowed|private|link-local/i);
    }
    expect((await s.call('POST', '/api/mcp/detect-transport', { body: { url: 'file:///etc/passwd' } })).status).toBe(400);
    expect((await s.call('POST', '/api/mcp/detect-transport', { body: {} })).body.message).toMatch(/url/);
  });
});

describe('MCP servers of a project', () => {
  it('adds a streamable HTTP server, lists it and its tools, and deletes it', async () => {
    const created = await add({ name: 'everything', transport: 'http', url: everythingUrl(), headers: { Authorization: SECRET_HEADER } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.server).toMatchObject({ id: expect.stringMatching(/^mcp_/), name: 'everything', transport: 'http', url: everythingUrl(), headerNames: ['Authorization'] });
    expect(created.body.tools.map((t: { name: string }) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    const id = created.body.server.id;

    const list = await s.call('GET', `/api/mcp/servers?projectId=${projectId}`);
    expect(list.body).toMatchObject({ success: true, total: 1, servers: [{ id, name: 'everything' }] });
    expect(JSON.stringify(list.body)).not.toContain(SECRET_HEADER);
    const tools = await s.call('GET', `/api/mcp/servers/${id}/tools`);
    expect(tools.body.tools.find((t: { name: string }) => t.name === 'echo')).toMatchObject({ inputSchema: { type: 'object', properties: { message: expect.any(Object) } } });
    // The header value is a secret: sealed in the database, never answered.
    expect(await s.stored.holds('mcp-header-secret')).toBe(false);

    expect((await s.call('DELETE', `/api/mcp/servers/${id}`)).body).toEqual({ success: true, message: 'MCP server deleted' });
    const again = await s.call('DELETE', `/api/mcp/servers/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ success: false, message: 'MCP server not found' });
    expect((await s.call('GET', `/api/mcp/servers/${id}/tools`)).status).toBe(404);
  });

  it('adds a legacy SSE server, lists its tools, lets the agent call one, deletes it', async () => {
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'sse agent', model: 'gpt-test', provider: 'openai' } })).body.project;
    const created = await s.call('POST', '/api/mcp/add-server', { body: { projectId: project.id, name: 'legacy', transport: 'sse', url: sseUrl() } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.tools.map((t: { name: string }) => t.name)).toContain('echo');
    const id = created.body.server.id;
    expect((await s.call('GET', `/api/mcp/servers/${id}/tools`)).body.tools.map((t: { name: string }) => t.name)).toContain('get-sum');
    upstream.requests.length = 0;
    upstream.script({ toolCalls: [{ name: 'mcp__legacy__echo', arguments: '{"message":"over SSE"}' }] }, { text: 'Done.' });
    await s.call('POST', '/api/v1/chat/completions', { body: { model: project.id, messages: [{ role: 'user', content: 'echo' }] } });
    expect((upstream.requests[1] as { messages: { content: string }[] }).messages.at(-1)?.content).toBe('Echo: over SSE');
    expect((await s.call('DELETE', `/api/mcp/servers/${id}`)).status).toBe(200);
    expect((await s.call('DELETE', `/api/mcp/servers/${id}`)).body).toMatchObject({ success: false, message: 'MCP server not found' });
  });

  it('saves nothing that cannot be reached, is not MCP, or is refused', async () => {
    const closed = await add({ name: 'closed', transport: 'http', url: `http://127.0.0.1:${await freePort()}/mcp` });
    expect(closed.status).toBe(503);
    expect(closed.body.message).toMatch(/127\.0\.0\.1/);
    const notMcp = await add({ name: 'not-mcp', transport: 'http', url: `${upstream.url}/not-mcp` });
    expect(notMcp.status, JSON.stringify(notMcp.body)).toBe(502);
    const refused = await add({ name: 'private', transport: 'http', url: 'http://192.168.1.10/mcp' });
    expect(refused.status).toBe(400);
    const stdio = await add({ name: 'local', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] });
    expect(stdio.status).toBe(400);
    expect(stdio.body.message).toContain('--allow-stdio-mcp');
    expect((await s.call('GET', `/api/mcp/servers?projectId=${projectId}`)).body.total).toBe(0);
  });

  it('names the field of a bad configuration', async () => {
    const check = async (body: Record<string, unknown>, field: RegExp) => {
      const res = await add(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toMatch(field);
    };
    await check({ name: 'x', transport: 'http' }, /url: required/);
    await check({ name: 'x', transport: 'stdio' }, /command: required/);
    await check({ name: 'x', transport: 'http', url: everythingUrl(), command: 'ls' }, /command: not used/);
    await check({ name: 'x', transport: 'sse', url: 'ftp://127.0.0.1/x' }, /url/);
    await check({ name: 'a__b', transport: 'http', url: everythingUrl() }, /name/);
    await check({ name: 'x', transport: 'websocket', url: everythingUrl() }, /transport/);
    await check({ name: 'x', transport: 'http', url: everythingUrl(), headers: { 'Bad Header': 'v' } }, /headers/);
    // "The tools named" with no name would mean none: refused, naming the field (false says none).
    await check({ name: 'x', transport: 'http', url: everythingUrl(), requiresApproval: [] }, /^requiresApproval: name at least one tool/);
    const first = await add({ name: 'twice', transport: 'http', url: everythingUrl() });
    expect((await add({ name: 'twice', transport: 'http', url: everythingUrl() })).status).toBe(409);
    const id = first.body.server.id;
    const empty = await s.call('PATCH', `/api/mcp/servers/${id}`, { body: { requiresApproval: [] } });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/^requiresApproval: name at least one tool/);
    expect((await s.call('GET', `/api/mcp/servers/${id}`)).body.server.requiresApproval).toBe(false);
    expect((await s.call('PATCH', `/api/mcp/servers/${id}`, { body: { requiresApproval: ['echo'] } })).body.server.requiresApproval).toEqual(['echo']);
    await s.call('DELETE', `/api/mcp/servers/${id}`);
  });

  it("keeps users' servers apart", async () => {
    const id = (await add({ name: 'mine', transport: 'http', url: everythingUrl() })).body.server.id;
    for (const [method, path] of [
      ['GET', `/api/mcp/servers/${id}`],
      ['GET', `/api/mcp/servers/${id}/tools`],
      ['DELETE', `/api/mcp/servers/${id}`],
      ['GET', `/api/mcp/servers?projectId=${projectId}`],
    ] as const) {
      expect((await s.call(method, path, { key: s.keyB })).status, `${method} ${path}`).toBe(404);
    }
    expect((await add({ name: 'theirs', transport: 'http', url: everythingUrl() }, s.keyB)).status).toBe(404);
    expect((await s.call('GET', `/api/mcp/servers/${id}`)).status).toBe(200);
    await s.call('DELETE', `/api/mcp/servers/${id}`);
  });
});

describe('the agent uses MCP tools', () => {
  it('calls a server-everything tool during a completion and answers', async () => {
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'echo agent', model: 'gpt-test', provider: 'openai' } })).body.project;
    await s.call('POST', '/api/mcp/add-server', { body: { projectId: project.id, name: 'everything', transport: 'http', url: everythingUrl() } });
    upstream.requests.length = 0;
    upstream.script({ toolCalls: [{ name: 'mcp__everything__echo', arguments: '{"message":"hello over MCP"}' }] }, { text: 'It said hello.' });
    const res = await s.call('POST', '/api/v1/chat/completions', { body: { model: project.id, messages: [{ role: 'user', content: 'Echo hello' }] } });
    expect(res.body.choices[0].message.content).toBe('It said hello.');
    const offered = (upstream.requests[0] as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
    const second = upstream.requests[1] as { messages: { role: string; content: string }[] };
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', content: 'Echo: hello over MCP' });
  });

  it('answers even when a tool hangs, fails or crashes its server: the model gets the error', async () => {
    const project = (await s.call('POST', '/api/projects/create', { body: { name: 'faulty agent', model: 'gpt-test', provider: 'openai' } })).body.project;
    const added = await s.call('POST', '/api/mcp/add-server', { body: { projectId: project.id, name: 'faulty', transport: 'http', url: `http://127.0.0.1:${faulty.port}/mcp` } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    for (const [tool, error] of [
      ['hang', /did not answer within 1000 ms|timed out|timeout/i],
      ['fail', /this tool failed on purpose/],
      // Last: the server process exits mid-call.
      ['crash', /MCP|connection|closed|terminated|unavailable/i],
    ] as const) {
      upstream.requests.length = 0;
      upstream.script({ toolCalls: [{ name: `mcp__faulty__${tool}`, arguments: '{}' }] }, { text: 'Sorry, that did not work.' });
      const started = Date.now();
      const res = await s.call('POST', '/api/v1/chat/completions', { body: { model: project.id, messages: [{ role: 'user', content: `use ${tool}` }] } });
      expect(res.body.choices?.[0]?.message.content, JSON.stringify(res.body)).toBe('Sorry, that did not work.');
      expect(Date.now() - started).toBeLessThan(10_000);
      const last = (upstream.requests[1] as { messages: { role: string; content: string }[] }).messages.at(-1);
      expect(last?.role).toBe('tool');
      expect(last?.content).toMatch(/^Error: /);
      expect(last?.content).toMatch(error);
    }
  });
});

describe('stdio servers where the operator allows them', () => {
  let allowed: TestServer;
  // The operator allows one whole command line: server-everything over stdio, with API_TOKEN settable.
  const line = formatCommandLine(process.execPath, [EVERYTHING, 'stdio']);
  beforeAll(async () => {
    allowed = await startTestServer({
      env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'k' },
      mcp: { allowStdio: [line, { command: process.execPath, args: [EVERYTHING, 'stdio'], env: ['API_TOKEN'] }] },
    });
  });
  afterAll(() => allowed.stop());

  it('starts an allowed command line, uses its tools, and stops it when deleted', async () => {
    const project = (await allowed.call('POST', '/api/projects/create', { body: { name: 'stdio agent', model: 'gpt-test', provider: 'openai' } })).body.project;
    const created = await allowed.call('POST', '/api/mcp/add-server', {
      body: { projectId: project.id, name: 'local', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.server).toMatchObject({ transport: 'stdio', command: process.execPath, url: null });
    upstream.requests.length = 0;
    upstream.script({ toolCalls: [{ name: 'mcp__local__get-sum', arguments: '{"a":2,"b":40}' }] }, { text: '42' });
    await allowed.call('POST', '/api/v1/chat/completions', { body: { model: project.id, messages: [{ role: 'user', content: '2+40' }] } });
    expect((upstream.requests[1] as { messages: { content: string }[] }).messages.at(-1)?.content).toMatch(/42/);
    // Only the listed command lines: anything else is refused.
    const other = await allowed.call('POST', '/api/mcp/add-server', { body: { projectId: project.id, name: 'other', transport: 'stdio', command: 'sh', args: ['-c', 'id'] } });
    expect(other.status).toBe(400);
    expect((await allowed.call('DELETE', `/api/mcp/servers/${created.body.server.id}`)).status).toBe(200);
  });

  it('refuses node -e, extra arguments and env keys outside the entry, and saves none of them', async () => {
    const project = (await allowed.call('POST', '/api/projects/create', { body: { name: 'stdio refusals', model: 'gpt-test', provider: 'openai' } })).body.project;
    const marker = join(allowed.dataDir, 'ran');
    const add = (name: string, fields: Record<string, unknown>) =>
      allowed.call('POST', '/api/mcp/add-server', { body: { projectId: project.id, name, transport: 'stdio', command: process.execPath, ...fields } });
    const code = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')`;
    const inline = await add('inline', { args: ['-e', code] });
    expect(inline.status).toBe(400);
    expect(inline.body.message).toMatch(/^The arguments of ".+" in ".+" are not allowed for stdio MCP servers on this server: the command and all its arguments must equal an allowed command line/);
    expect(inline.body.message).toContain(`(allowed: "${line}")`);
    expect((await add('extra', { args: [EVERYTHING, 'stdio', '--extra'] })).status).toBe(400);
    expect((await add('preload', { args: ['--require', marker, EVERYTHING, 'stdio'] })).status).toBe(400);
    const env = await add('env', { args: [EVERYTHING, 'stdio'], env: { API_TOKEN: 't', NODE_OPTIONS: `--require ${marker}` } });
    expect(env.status).toBe(400);
    expect(env.body.message).toMatch(
      /^env NODE_OPTIONS cannot be set for a stdio MCP server on this server, by any allowed command line: it changes what the command loads or runs \(NODE_OPTIONS: Node\.js reads NODE_\*/,
    );
    const other = await add('other', { args: [EVERYTHING, 'stdio'], env: { API_TOKEN: 't', OTHER: 'x' } });
    expect(other.status).toBe(400);
    expect(other.body.message).toBe(`env OTHER cannot be set for the stdio MCP server "${line}" on this server (allowed: API_TOKEN)`);
    expect((await add('token', { args: [EVERYTHING, 'stdio'], env: { API_TOKEN: 't' } })).status).toBe(201);
    expect(existsSync(marker)).toBe(false);
    expect((await allowed.call('GET', `/api/mcp/servers?projectId=${project.id}`)).body.servers.map((s: { name: string }) => s.name)).toEqual(['token']);
  });
});
