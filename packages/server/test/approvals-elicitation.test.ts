import { afterAll, beforeAll, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { ALLOW_LOOPBACK, sseEvents, startTestServer, type TestServer } from './helpers.js';

// An MCP server's question during a tool call (elicitation/create) as a pending question: the
// real server-everything over streamable HTTP asks with its trigger-elicitation-request tool;
// the run's stream (still open, the tool waiting) carries the form, POST /api/v1/approvals/{id}
// answers it, and the tool goes on with the answer (defaults applied) or the refusal.

let fake: FakeChatServer;
let everything: ServerProcess;
let s: TestServer;
let projectId = '';
const TOOL = 'mcp__everything__trigger-elicitation-request';

beforeAll(async () => {
  [fake, everything] = await Promise.all([startFakeChatServer(), startEverything('streamableHttp')]);
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '10000' }, outbound: ALLOW_LOOPBACK });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'forms', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const added = await s.call('POST', '/api/mcp/add-server', { body: { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` } });
  expect(added.status, JSON.stringify(added.body)).toBe(201);
  // The server offers the tool to clients that declare the elicitation capability (after initialising).
  const id = added.body.server.id as string;
  for (let i = 0; i < 100; i++) {
    const tools = (await s.call('GET', `/api/mcp/servers/${id}/tools`)).body.tools as { name: string }[];
    if (tools.some((t) => t.name === 'trigger-elicitation-request')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server-everything does not offer trigger-elicitation-request');
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([fake?.close(), everything?.stop()]);
});

/** Streams a completion that calls the elicitation tool, answering its question with each of `answers` in turn (until one is taken) when it comes. */
async function askAndAnswer(...answers: Record<string, unknown>[]) {
  const chatId = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id as string;
  fake.script({ toolCalls: [{ id: 'call_form', name: TOOL, arguments: {} }] }, { text: 'Thanks.' });
  const res = await fetch(`${s.url}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: projectId, chatId, stream: true, messages: [{ role: 'user', content: 'Fill in the form' }] }),
  });
  const chunks: Record<string, any>[] = [];
  const decisions: { status: number; body: any }[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const data = /^data: (\{.*)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (!data) continue;
      const chunk = JSON.parse(data) as Record<string, any>;
      chunks.push(chunk);
      if (chunk.elicitation) {
        // While the tool waits, the question is pending for this user only.
        expect((await s.call('GET', `/api/v1/approvals?chatId=${chatId}&state=pending`)).body.approvals.map((a: { id: string }) => a.id)).toEqual([chunk.elicitation.id]);
        expect((await s.call('GET', `/api/v1/approvals/${chunk.elicitation.id}`, { key: s.keyB })).status).toBe(404);
        for (const answer of answers) {
          const decided = await s.call('POST', `/api/v1/approvals/${chunk.elicitation.id}`, { body: answer });
          decisions.push(decided);
          if (decided.status === 200) break;
        }
      }
    }
  }
  return { chunks, decisions, chatId };
}

it('streams the form (fields with defaults), takes an accepted answer checked against the schema, and the tool goes on with it', async () => {
  const { chunks, decisions } = await askAndAnswer({ decision: 'accept', content: { name: 'Ada Lovelace', check: true } });
  const question = chunks.find((c) => c.elicitation)?.elicitation;
  expect(question).toMatchObject({ tool: TOOL, callId: 'call_form', message: 'Please provide inputs for the following fields:' });
  const fields: Record<string, any> = Object.fromEntries((question.fields as { name: string }[]).map((f) => [f.name, f]));
  expect(fields.name).toMatchObject({ type: 'string', required: true, title: 'String' });
  expect(fields.integer).toMatchObject({ type: 'integer', default: 42, minimum: 1, maximum: 100 });
  expect(fields.untitledSingleSelectEnum.options.map((o: { value: string }) => o.value)).toContain('Rachel');
  expect(fields.titledSingleSelectEnum.options).toContainEqual({ value: 'hero-2', label: 'Green Lantern' });
  expect(fields.legacyTitledEnum.options).toContainEqual({ value: 'pet-2', label: 'Dogs' });
  expect(decisions).toHaveLength(1);
  expect(decisions[0]?.status, JSON.stringify(decisions[0]?.body)).toBe(200);
  expect(decisions[0]?.body.approval).toMatchObject({
    kind: 'elicitation',
    state: 'accepted',
    content: { name: 'Ada Lovelace', check: true, integer: 42, firstLine: 'It was a dark and stormy night.' },
  });
  const result = chunks.find((c) => c.toolResult)?.toolResult;
  expect(result.isError).toBe(false);
  expect(result.content).toContain('Name: Ada Lovelace');
  expect(result.content).toContain('Favorite Integer: 42');
  expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('')).toBe('Thanks.');
});

it('declines: the tool hears the refusal; a wrong answer is refused with the field named and the question stays open', async () => {
  const { chunks, decisions, chatId } = await askAndAnswer({ decision: 'decline', reason: 'not now' });
  expect(decisions[0]?.body.approval).toMatchObject({ state: 'declined', reason: 'not now' });
  expect(chunks.find((c) => c.toolResult)?.toolResult.content).toContain('User declined to provide the requested information');
  expect((await s.call('GET', `/api/v1/approvals?chatId=${chatId}`)).body.approvals.map((a: { state: string }) => a.state)).toEqual(['declined']);

  const checked = await askAndAnswer({ decision: 'accept', content: { integer: 500 } }, { decision: 'cancel' });
  expect(checked.decisions[0]?.status).toBe(400);
  expect(checked.decisions[0]?.body.message).toContain('content.name: required');
  expect(checked.decisions[0]?.body.message).toContain('content.integer: must be at most 100');
  expect(checked.decisions[1]?.body.approval.state).toBe('cancelled');
  expect(checked.chunks.find((c) => c.toolResult)?.toolResult.content).toContain('User cancelled');
}, 60_000);

it('declines a question nobody answers within the timeout, and the tool goes on with the refusal', async () => {
  const quick = await startTestServer({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '10000' },
    outbound: ALLOW_LOOPBACK,
    approvals: { questionTimeoutMs: 1000 },
  });
  try {
    const project = (await quick.call('POST', '/api/projects/create', { body: { name: 'forms', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
    const added = await quick.call('POST', '/api/mcp/add-server', { body: { projectId: project, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` } });
    for (let i = 0; i < 100; i++) {
      const tools = (await quick.call('GET', `/api/mcp/servers/${added.body.server.id}/tools`)).body.tools as { name: string }[];
      if (tools.some((t) => t.name === 'trigger-elicitation-request')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    fake.script({ toolCalls: [{ id: 'call_late', name: TOOL, arguments: {} }] }, { text: 'No answer, then.' });
    const res = await quick.call('POST', '/api/v1/chat/completions', { body: { model: project, stream: true, messages: [{ role: 'user', content: 'Fill in the form' }] } });
    const chunks = sseEvents(res.body as string);
    const question = chunks.find((c) => c.elicitation)?.elicitation;
    expect(chunks.find((c) => c.toolResult)?.toolResult.content).toContain('User declined to provide the requested information');
    expect((await quick.call('GET', `/api/v1/approvals/${question.id}`)).body.approval).toMatchObject({ state: 'declined', reason: 'No answer within 1 s' });
  } finally {
    await quick.stop();
  }
}, 60_000);
