import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';
import { projectMcpClients } from './project-mcp-clients.js';

// Each project's agent as an MCP server, through the official SDK's client over streamable
// HTTP against a real server: its tools, sources, progress, cancellation, and who may call it.

let upstream: FakeUpstream;
let s: TestServer;
let projectId: string;
const mcp = projectMcpClients('agent-mcp-test');

const SHOUT = {
  name: 'shout',
  description: 'Shouts a word',
  language: 'javascript',
  code: 'async function main(args) { console.log("shouting"); return args.word.toUpperCase() + "!"; }',
  parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
};

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_TOOL_TIMEOUT_MS: '5000' } });
  const res = await s.call('POST', '/api/projects/create', { body: { name: 'Support', description: 'ACME support', model: 'gpt-test', provider: 'openai' } });
  projectId = res.body.project.id;
  const doc = await s.call('POST', '/api/knowledge/documents', {
    body: { projectId, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: '# Refunds\n\nACME refunds purchases within 30 days of delivery.' },
  });
  await s.indexed(doc.body.documentId);
  // Offered: shout. Not offered: a tool not opted in, and one opted in but disabled.
  expect((await s.call('POST', '/api/tools/create', { body: { projectId, ...SHOUT, exposeOverMcp: true } })).status).toBe(201);
  await s.call('POST', '/api/tools/create', { body: { projectId, ...SHOUT, name: 'private_tool' } });
  await s.call('POST', '/api/tools/create', { body: { projectId, ...SHOUT, name: 'disabled_tool', exposeOverMcp: true, enabled: false } });
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});
afterEach(async () => {
  await mcp.closeAll();
});

const endpoint = (project = projectId) => mcp.endpoint(s.url, project);

const connect = (key: string | null = s.keyA, project = projectId): Promise<Client> => mcp.connect(s.url, project, key);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a project's MCP server", () => {
  it('offers ask, search_knowledge and the tools its owner opted in, with precise schemas', async () => {
    const client = await connect();
    expect(client.getServerVersion()).toMatchObject({ name: 'agent-platform/Support', title: 'Support' });
    expect(client.getInstructions()).toContain('ACME support');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['ask', 'search_knowledge', 'shout']);
    const [ask, search, shout] = tools;
    expect(ask?.inputSchema).toMatchObject({ type: 'object', required: ['question'], additionalProperties: false, properties: { question: { type: 'string' }, chatId: { type: 'string' } } });
    expect(ask?.outputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['answer', 'sources', 'finishReason']) });
    expect(search?.inputSchema).toMatchObject({
      type: 'object',
      required: ['query'],
      properties: { query: { type: 'string' }, topK: { type: 'integer', minimum: 1, maximum: 100 }, searchType: { enum: ['semantic', 'mrr', 'hybrid'] } },
    });
    expect(shout).toEqual({ name: 'shout', description: 'Shouts a word', inputSchema: SHOUT.parameters });
  });

  it('ask runs the agent: the answer with its sources, and progress while it works', async () => {
    upstream.script({ text: 'Within 30 days [1].' });
    const client = await connect();
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'ask', arguments: { question: 'How long do I have to get a refund?' } }, CallToolResultSchema, { onprogress: (p) => progress.push(p) });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({
      answer: 'Within 30 days [1].',
      finishReason: 'stop',
      sources: [{ index: 1, fileName: 'refunds.md', chunkId: expect.stringMatching(/^chunk_/), documentId: expect.stringMatching(/^doc_/) }],
    });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringMatching(/^Within 30 days \[1\]\.\n\nSources:\n\[1\] refunds\.md \(score 0\.\d\d\)$/) }]);
    // The agent's context had the knowledge, as on the completions route.
    expect(JSON.stringify(upstream.requests[0]?.messages)).toContain('within 30 days of delivery');
    // Text as it streams: at most one notification per 200 ms, here the first delta's.
    expect(progress.map((p) => p.message)).toEqual(['Thinking', expect.stringMatching(/^Answering: \d+ characters$/)]);
    expect(progress.map((p) => p.progress)).toEqual([1, 2]);
  });

  it('reports each tool round as progress and as a log message', async () => {
    upstream.script({ toolCalls: [{ name: 'shout', arguments: '{"word":"hi"}' }] }, { text: 'Done: HI!' });
    const client = await connect();
    const logs: unknown[] = [];
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === 'notifications/message') logs.push(n.params);
    };
    const progress: Progress[] = [];
    const result = await client.callTool({ name: 'ask', arguments: { question: 'shout hi' } }, CallToolResultSchema, { onprogress: (p) => progress.push(p) });
    expect(result.structuredContent).toMatchObject({ answer: 'Done: HI!' });
    expect(progress.map((p) => p.message)).toEqual(['Thinking', 'Calling shout', 'shout answered', expect.stringMatching(/^Answering: \d+ characters$/)]);
    expect(progress.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    expect(logs).toEqual([
      { level: 'info', logger: 'agent', data: 'Calling shout' },
      { level: 'info', logger: 'agent', data: 'shout answered' },
    ]);
  });

  it('ask with a chatId stores the turn in that chat and continues it', async () => {
    const client = await connect();
    upstream.script({ text: 'Noted: blue.' }, { text: 'It is blue.' });
    const first = await client.callTool({ name: 'ask', arguments: { question: 'My colour is blue.', chatId: 'mcp-chat-1' } });
    expect(first.structuredContent).toMatchObject({ chatId: 'mcp-chat-1', answer: 'Noted: blue.' });
    await client.callTool({ name: 'ask', arguments: { question: 'What is my colour?', chatId: 'mcp-chat-1' } });
    const sent = JSON.stringify(upstream.requests[1]?.messages);
    expect(sent).toContain('My colour is blue.');
    expect(sent).toContain('Noted: blue.');
    const chats = await s.call('GET', `/api/chats?projectId=${projectId}`);
    expect(chats.body.chats.map((c: { id: string }) => c.id)).toContain('mcp-chat-1');
    // A chat of another project is not this agent's.
    const other = (await s.call('POST', '/api/projects/create', { body: { name: 'Other', model: 'gpt-test', provider: 'openai' } })).body.project.id;
    const elsewhere = await (await connect(s.keyA, other)).callTool({ name: 'ask', arguments: { question: 'hi', chatId: 'mcp-chat-1' } });
    expect(elsewhere).toMatchObject({ isError: true, content: [{ type: 'text', text: 'not_found: Chat mcp-chat-1 not found in this project' }] });
  });

  it('search_knowledge answers the passages with document, score and text', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'search_knowledge', arguments: { query: 'refunds within 30 days', topK: 3, searchType: 'hybrid' } });
    expect(result.structuredContent).toEqual({
      results: [
        {
          document: { id: expect.stringMatching(/^doc_/), fileName: 'refunds.md' },
          chunkId: expect.stringMatching(/^chunk_/),
          score: expect.any(Number),
          text: expect.stringContaining('within 30 days'),
        },
      ],
    });
    expect(upstream.requests).toEqual([]);
  });

  it('answers bad arguments as tool errors naming them, and an unknown tool as a protocol error', async () => {
    const client = await connect();
    expect(await client.callTool({ name: 'ask', arguments: { question: ' ' } })).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('question') }] });
    expect(await client.callTool({ name: 'search_knowledge', arguments: { query: 'x', topK: 0 } })).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('topK') }] });
    expect(await client.callTool({ name: 'ask', arguments: { question: 'x', extra: 1 } })).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('extra') }] });
    expect(await client.callTool({ name: 'shout', arguments: { word: 3 } })).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('word') }] });
    await expect(client.callTool({ name: 'private_tool', arguments: { word: 'x' } })).rejects.toThrow(/Unknown tool: private_tool/);
    await expect(client.callTool({ name: 'disabled_tool', arguments: { word: 'x' } })).rejects.toThrow(/Unknown tool: disabled_tool/);
    expect(upstream.requests).toEqual([]);
  });

  it('runs an opted-in tool in its sandbox, its console lines as log messages', async () => {
    const client = await connect();
    const logs: unknown[] = [];
    client.fallbackNotificationHandler = async (n) => {
      if (n.method === 'notifications/message') logs.push(n.params);
    };
    expect(await client.callTool({ name: 'shout', arguments: { word: 'hey' } })).toEqual({ content: [{ type: 'text', text: 'HEY!' }] });
    expect(logs).toEqual([{ level: 'info', logger: 'agent', data: 'shouting' }]);
    // A level set on one request holds for the session's next ones; another session keeps its own.
    await client.setLoggingLevel('warning');
    expect(await client.callTool({ name: 'shout', arguments: { word: 'again' } })).toEqual({ content: [{ type: 'text', text: 'AGAIN!' }] });
    expect(logs).toHaveLength(1);
    const other = await connect();
    const otherLogs: unknown[] = [];
    other.fallbackNotificationHandler = async (n) => {
      if (n.method === 'notifications/message') otherLogs.push(n.params);
    };
    await other.callTool({ name: 'shout', arguments: { word: 'hey' } });
    expect(otherLogs).toEqual([{ level: 'info', logger: 'agent', data: 'shouting' }]);
    // Opting out takes it away at once.
    const id = (await s.call('GET', `/api/tools?projectId=${projectId}`)).body.tools.find((t: { name: string }) => t.name === 'shout').id;
    await s.call('PUT', `/api/tools/${id}`, { body: { toolId: id, tool: { exposeOverMcp: false } } });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['ask', 'search_knowledge']);
    await s.call('PUT', `/api/tools/${id}`, { body: { toolId: id, tool: { exposeOverMcp: true } } });
    expect((await s.call('GET', `/api/tools/${id}`)).body.tool.exposeOverMcp).toBe(true);
  });

  it('cancelling a call stops the run and the upstream model call', async () => {
    upstream.script({ hang: true });
    const client = await connect();
    const controller = new AbortController();
    const before = upstream.aborted;
    const call = client.callTool({ name: 'ask', arguments: { question: 'take your time' } }, CallToolResultSchema, { signal: controller.signal });
    for (let i = 0; i < 200 && upstream.requests.length === 0; i++) await sleep(25);
    expect(upstream.requests).toHaveLength(1);
    controller.abort('changed my mind');
    await expect(call).rejects.toThrow();
    // The client's notifications/cancelled (a POST of its own) aborts the model call.
    for (let i = 0; i < 200 && upstream.aborted === before; i++) await sleep(25);
    expect(upstream.aborted).toBe(before + 1);
  });

  it("notifications/cancelled on a request of its own cancels that session's run only", async () => {
    upstream.script({ hang: true });
    const before = upstream.aborted;
    const post = (session: string, message: unknown, signal?: AbortSignal) =>
      fetch(endpoint(), {
        method: 'POST',
        ...(signal ? { signal } : {}),
        headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': session },
        body: JSON.stringify(message),
      });
    const controller = new AbortController();
    const res = await post('session-a', { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'ask', arguments: { question: 'wait' }, _meta: { progressToken: 1 } } }, controller.signal);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    for (let i = 0; i < 200 && upstream.requests.length === 0; i++) await sleep(25);
    const cancel = (session: string) => post(session, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, reason: 'enough' } });
    // Another session's request 9 is not this one.
    expect((await cancel('session-b')).status).toBe(202);
    await sleep(300);
    expect(upstream.aborted).toBe(before);
    expect((await cancel('session-a')).status).toBe(202);
    for (let i = 0; i < 200 && upstream.aborted === before; i++) await sleep(25);
    expect(upstream.aborted).toBe(before + 1);
    controller.abort();
  });

  it('a client that goes away stops the run too', async () => {
    upstream.script({ hang: true });
    const before = upstream.aborted;
    const controller = new AbortController();
    const res = await fetch(endpoint(), {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ask', arguments: { question: 'wait' }, _meta: { progressToken: 'p1' } } }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // The first progress notification, read as a client reads the stream; then the client leaves.
    const first = new TextDecoder().decode((await (res.body as ReadableStream<Uint8Array>).getReader().read()).value);
    expect(first).toContain('"progressToken":"p1"');
    for (let i = 0; i < 200 && upstream.requests.length === 0; i++) await sleep(25);
    controller.abort();
    for (let i = 0; i < 200 && upstream.aborted === before; i++) await sleep(25);
    expect(upstream.aborted).toBe(before + 1);
  });

  it("refuses a missing key (401), another user's key and an unknown project (404)", async () => {
    await expect(connect(null)).rejects.toThrow(/Unauthorized/);
    await expect(connect(s.keyB)).rejects.toThrow(/Project proj_\w+ not found/);
    await expect(connect(s.keyA, 'proj_unknown')).rejects.toThrow(/Project proj_unknown not found/);
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const accept = { accept: 'application/json, text/event-stream' };
    expect(await s.call('POST', `/api/v1/projects/${projectId}/mcp`, { key: null, body: init, headers: accept })).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await s.call('POST', `/api/v1/projects/${projectId}/mcp`, { key: s.keyB, body: init, headers: accept })).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('answers only POST (405 for GET and DELETE), mints a session id at initialize, refuses a foreign Origin (403), bad JSON (400) and a body over the limit (413)', async () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const accept = { accept: 'application/json, text/event-stream' };
    const path = `/api/v1/projects/${projectId}/mcp`;
    const ok = await s.call('POST', path, { body: init, headers: accept });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toMatch(/^mcps_[0-9a-f]{32}$/);
    for (const method of ['GET', 'DELETE']) {
      const refused = await s.call(method, path, { headers: { accept: 'text/event-stream' } });
      expect(refused).toMatchObject({ status: 405, body: { code: 'method_not_allowed', message: 'Method not allowed: POST only' } });
      expect(refused.headers.get('allow')).toBe('POST');
    }
    expect(await s.call('POST', path, { body: init, headers: { ...accept, origin: 'http://evil.example.com' } })).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    // Not even the server's own: a page reached by DNS rebinding has it (an allowed origin: agent-mcp-conformance.test.ts).
    expect((await s.call('POST', path, { body: init, headers: { ...accept, origin: s.url } })).status).toBe(403);
    expect(await s.call('POST', path, { raw: '{"jsonrpc":', headers: accept })).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'ask', arguments: { question: 'x'.repeat(1_100_000) } } });
    expect(await s.call('POST', path, { raw: huge, headers: accept })).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
  });
});
