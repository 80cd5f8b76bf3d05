import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatCommandLine } from '@agent-platform/mcp';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { EVERYTHING } from '../../mcp/test/helpers.js';
import { createKey, keyCall, serveBuilt } from './built-server.js';

// A pending approval outlives its process: the built server (real SQLite file) pauses a turn at
// a call of an MCP server's tool named for approval (server-everything over stdio; its other
// tool runs at once), is SIGKILLed, starts again on the same data folder, and the approval
// sent to the new process continues the turn, which is stored.

const MCP_LINE = formatCommandLine(process.execPath, [EVERYTHING, 'stdio']);
let dir = '';
let fake: FakeChatServer;
let key = '';

beforeAll(async () => {
  fake = await startFakeChatServer();
  dir = await mkdtemp(join(tmpdir(), 'ap-approvals-'));
  key = await createKey(dir, 'approver');
});
afterAll(async () => {
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const serve = () => serveBuilt(dir, ['--allow-mcp-command', MCP_LINE], { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '10000' });

const call = (url: string, method: string, path: string, body?: unknown) => keyCall(url, key, method, path, body);

it('survives a SIGKILL: approved on the restarted server, the paused turn completes and is stored; only the named MCP tool waited', async () => {
  const first = await serve();
  const projectId = (await call(first.url, 'POST', '/api/projects/create', { name: 'mcp', model: 'gpt-4o-mini', provider: 'openai' })).body.project.id as string;
  const added = await call(first.url, 'POST', '/api/mcp/add-server', {
    projectId,
    name: 'everything',
    transport: 'stdio',
    command: process.execPath,
    args: [EVERYTHING, 'stdio'],
    requiresApproval: ['echo'],
  });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  expect(added.body.server.requiresApproval).toEqual(['echo']);
  const chatId = (await call(first.url, 'POST', '/api/chats', { projectId })).body.chat.id as string;
  fake.script({
    toolCalls: [
      { id: 'call_sum', name: 'mcp__everything__get-sum', arguments: { a: 2, b: 40 } },
      { id: 'call_echo', name: 'mcp__everything__echo', arguments: { message: 'hello' } },
    ],
  });
  const paused = await call(first.url, 'POST', '/api/v1/chat/completions', { model: projectId, chatId, messages: [{ role: 'user', content: 'Sum, then echo' }] });
  expect(paused.status, JSON.stringify(paused.body)).toBe(200);
  expect(paused.body.choices[0].finish_reason).toBe('tool_calls');
  expect(paused.body.approvals.map((a: { tool: string }) => a.tool)).toEqual(['mcp__everything__echo']);
  const id = paused.body.approvals[0].id as string;
  const before = (await call(first.url, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
  expect(before.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  expect(before[2]?.content).toContain('The sum of 2 and 40 is 42.');

  const exited = new Promise((r) => first.child.on('exit', r));
  first.child.kill('SIGKILL');
  await exited;

  const second = await serve();
  try {
    expect((await call(second.url, 'GET', `/api/v1/approvals/${id}`)).body.approval).toMatchObject({ state: 'pending', tool: 'mcp__everything__echo', chatId });
    fake.script({ text: 'It echoed hello.' });
    const continued = await call(second.url, 'POST', `/api/v1/approvals/${id}`, { decision: 'approve' });
    expect(continued.status, JSON.stringify(continued.body)).toBe(200);
    expect(continued.body.choices[0].message.content).toBe('It echoed hello.');
    const sent = (fake.requests.at(-1) as unknown as { body: { messages: { role: string; tool_call_id?: string; content?: string }[] } }).body.messages;
    expect(sent.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_echo', content: 'Echo: hello' });
    const after = (await call(second.url, 'GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
    expect(after.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    expect(after.at(-1)?.content).toBe('It echoed hello.');
    expect((await call(second.url, 'POST', `/api/v1/approvals/${id}`, { decision: 'approve' })).status).toBe(409);
  } finally {
    const stopped = new Promise((r) => second.child.on('exit', r));
    second.child.kill('SIGTERM');
    await stopped;
  }
}, 120_000);
