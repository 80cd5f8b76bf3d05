import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { addToolSource } from './add-tool.js';
import { sseEvents, startTestServer, type TestServer } from './helpers.js';

// Tool calls a person approves, on the built server's routes with a real SQLite file, a real
// JavaScript tool in its sandbox and the loopback OpenAI fake as the model: the turn pauses at
// a call of a tool marked requiresApproval (the other calls of the step run), the answer says
// so (finish_reason tool_calls, an approval, no tool_calls), and POST /api/v1/approvals/{id}
// continues it.

type Sent = { role: string; content?: unknown; tool_calls?: { id: string; function: { name: string } }[]; tool_call_id?: string };

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;
const { source: agentTools, calls: added } = addToolSource();

/** A tool that says what it removed: marked for approval. */
const REMOVE = {
  name: 'remove_file',
  description: 'Removes a file',
  language: 'javascript',
  code: 'function main(args) { return { removed: args.path } }',
  parameters: { type: 'object', properties: { path: { type: 'string' } } },
  requiresApproval: true,
};

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', OLLAMA_HOST: fake.origin, AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' },
    toolSources: [agentTools],
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Files', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const tool = await s.call('POST', '/api/tools/create', { body: { projectId, ...REMOVE } });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
  expect(tool.body.tool.requiresApproval).toBe(true);
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  added.length = 0;
});

const pauseStep = () =>
  fake.script({
    text: 'Adding, then removing.',
    toolCalls: [
      { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
      { id: 'call_rm', name: 'remove_file', arguments: { path: '/tmp/report.txt' } },
    ],
  });
const newChat = async () => (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id as string;
const stored = async (chatId: string) =>
  ((await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string | null; toolCalls?: { name: string }[]; toolCallId?: string }[]).map((m) => [
    m.role,
    m.toolCalls?.map((c) => c.name).join(',') ?? m.toolCallId ?? m.content,
  ]);
const lastSent = () => ((fake.requests.at(-1) as { body: unknown }).body as { messages: Sent[] }).messages;

describe('tool calls a person approves', () => {
  it('pauses at the marked call (the others run), says so without tool_calls, and the approval continues the turn', async () => {
    const chatId = await newChat();
    pauseStep();
    const paused = await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'Tidy up' }], chatId } as never);
    const choice = paused.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    // An OpenAI client sees no tool_calls it would try to run.
    expect(choice?.message.tool_calls).toBeUndefined();
    const approvals = (paused as unknown as { approvals: { id: string; tool: string; arguments: string; chatId: string; callId: string }[] }).approvals;
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ tool: 'remove_file', callId: 'call_rm', chatId, arguments: JSON.stringify({ path: '/tmp/report.txt' }) });
    expect(added).toEqual([{ a: 2, b: 3 }]);
    expect(await stored(chatId)).toEqual([
      ['user', 'Tidy up'],
      ['assistant', 'add,remove_file'],
      ['tool', 'call_add'],
    ]);
    const id = approvals[0]?.id as string;
    const pending = await s.call('GET', `/api/v1/approvals?chatId=${chatId}&state=pending`);
    expect(pending.body.approvals.map((a: { id: string }) => a.id)).toEqual([id]);
    // A new message while the chat waits for the decision is refused, naming the approval.
    const early = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content: 'and?' }] } });
    expect(early.status).toBe(409);
    expect(early.body.message).toContain(id);

    fake.script({ text: 'Removed /tmp/report.txt.' });
    const continued = await s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'approve' } });
    expect(continued.status, JSON.stringify(continued.body)).toBe(200);
    expect(continued.body.object).toBe('chat.completion');
    expect(continued.body.choices[0].message.content).toBe('Removed /tmp/report.txt.');
    expect(continued.body.chatId).toBe(chatId);
    // The model got both results after its calls, the approved tool's from its sandbox.
    expect(lastSent().slice(-3)).toEqual([
      expect.objectContaining({ role: 'assistant' }),
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_add', content: '5' }),
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_rm', content: JSON.stringify({ removed: '/tmp/report.txt' }) }),
    ]);
    expect(await stored(chatId)).toEqual([
      ['user', 'Tidy up'],
      ['assistant', 'add,remove_file'],
      ['tool', 'call_add'],
      ['tool', 'call_rm'],
      ['assistant', 'Removed /tmp/report.txt.'],
    ]);
    const decided = await s.call('GET', `/api/v1/approvals/${id}`);
    expect(decided.body.approval).toMatchObject({ state: 'approved', kind: 'tool', tool: 'remove_file' });
    // Decided once: a second decision is a conflict, and changes nothing.
    const again = await s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'deny' } });
    expect(again.status).toBe(409);
    expect((await s.call('GET', `/api/v1/approvals/${id}`)).body.approval.state).toBe('approved');
    // Another user's id is not found, to read or to decide.
    expect((await s.call('GET', `/api/v1/approvals/${id}`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('POST', `/api/v1/approvals/${id}`, { key: s.keyB, body: { decision: 'deny' } })).status).toBe(404);
    expect((await s.call('GET', '/api/v1/approvals', { key: s.keyB })).body.approvals).toEqual([]);
  });

  it('streams the pause (an approval chunk, finish_reason tool_calls) and a denial with its reason as a streamed continuation', async () => {
    pauseStep();
    const stream = (await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'Tidy up' }], stream: true })) as unknown as AsyncIterable<
      OpenAI.Chat.Completions.ChatCompletionChunk & { approval?: { id: string; tool: string; chatId: string } }
    >;
    let finish: string | null = null;
    const seen: { id: string; tool: string; chatId: string }[] = [];
    let toolCalls = 0;
    for await (const chunk of stream) {
      if (chunk.approval) seen.push(chunk.approval);
      toolCalls += chunk.choices[0]?.delta.tool_calls?.length ?? 0;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    expect(toolCalls).toBe(0);
    expect(seen.map((a) => a.tool)).toEqual(['remove_file']);
    // No chat was named: the paused turn was kept in a new chat of the project.
    const chatId = seen[0]?.chatId as string;
    expect(await stored(chatId)).toEqual([
      ['user', 'Tidy up'],
      ['assistant', 'add,remove_file'],
      ['tool', 'call_add'],
    ]);

    fake.script({ text: 'I left it there.' });
    const res = await fetch(`${s.url}/api/v1/approvals/${seen[0]?.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'deny', reason: 'keep the report', stream: true }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    const chunks = sseEvents(text);
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('')).toBe('I left it there.');
    expect(chunks.find((c) => c.toolResult)?.toolResult).toMatchObject({ id: 'call_rm', isError: true, content: 'The user denied this tool call: keep the report. It was not run.' });
    expect(lastSent().at(-1)).toEqual(expect.objectContaining({ role: 'tool', tool_call_id: 'call_rm', content: 'The user denied this tool call: keep the report. It was not run.' }));
    expect((await s.call('GET', `/api/v1/approvals/${seen[0]?.id}`)).body.approval).toMatchObject({ state: 'denied', reason: 'keep the report' });
  });

  it('waits for every call of the pause: the first decision answers what is still pending, the last continues', async () => {
    const chatId = await newChat();
    fake.script({
      toolCalls: [
        { id: 'call_a', name: 'remove_file', arguments: { path: '/a' } },
        { id: 'call_b', name: 'remove_file', arguments: { path: '/b' } },
      ],
    });
    const paused = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content: 'Remove both' }] } });
    const [a, b] = paused.body.approvals as { id: string }[];
    const first = await s.call('POST', `/api/v1/approvals/${a?.id}`, { body: { decision: 'approve' } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, approval: { id: a?.id, state: 'approved' }, pending: [b?.id] });
    fake.script({ text: 'Removed /a only.' });
    const last = await s.call('POST', `/api/v1/approvals/${b?.id}`, { body: { decision: 'deny' } });
    expect(last.body.choices[0].message.content).toBe('Removed /a only.');
    expect(lastSent().slice(-2)).toEqual([
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_a', content: JSON.stringify({ removed: '/a' }) }),
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_b', content: 'The user denied this tool call. It was not run.' }),
    ]);
  });

  it('refuses a decision that does not fit: an elicitation word for a tool call, content without accept, an unknown decision', async () => {
    pauseStep();
    const paused = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, messages: [{ role: 'user', content: 'Tidy up' }] } });
    const id = paused.body.approvals[0].id as string;
    expect((await s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'accept' } })).status).toBe(400);
    expect((await s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'deny', content: { a: 1 } } })).status).toBe(400);
    const unknown = await s.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'maybe' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('decision');
    expect((await s.call('POST', '/api/v1/approvals/apv_missing', { body: { decision: 'approve' } })).status).toBe(404);
    expect((await s.call('GET', `/api/v1/approvals/${id}`)).body.approval.state).toBe('pending');
  });

  it("shows a tool's requiresApproval and changes it", async () => {
    const tool = (await s.call('GET', `/api/tools?projectId=${projectId}`)).body.tools.find((t: { name: string }) => t.name === 'remove_file');
    expect(tool.requiresApproval).toBe(true);
    const off = await s.call('PUT', `/api/tools/${tool.id}`, { body: { toolId: tool.id, tool: { requiresApproval: false } } });
    expect(off.status).toBe(200);
    expect((await s.call('GET', `/api/tools/${tool.id}`)).body.tool.requiresApproval).toBe(false);
    expect((await s.call('PUT', `/api/tools/${tool.id}`, { body: { toolId: tool.id, tool: { requiresApproval: true } } })).status).toBe(200);
  });
});

describe('an approval nobody decides', () => {
  let short: TestServer;
  beforeAll(async () => {
    short = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' }, approvals: { ttlMs: 1000 } });
  }, 60_000);
  afterAll(async () => {
    await short?.stop();
  });

  it('expires: denied with the expiry as its reason, decided no more, and the next message goes on from the denial', async () => {
    const project = (await short.call('POST', '/api/projects/create', { body: { name: 'Files', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
    expect((await short.call('POST', '/api/tools/create', { body: { projectId: project, ...REMOVE } })).status).toBe(201);
    const chatId = (await short.call('POST', '/api/chats', { body: { projectId: project } })).body.chat.id as string;
    fake.script({ toolCalls: [{ id: 'call_x', name: 'remove_file', arguments: { path: '/x' } }] });
    const paused = await short.call('POST', '/api/v1/chat/completions', { body: { model: project, chatId, messages: [{ role: 'user', content: 'Remove x' }] } });
    const id = paused.body.approvals[0].id as string;
    await new Promise((r) => setTimeout(r, 1200));
    const read = await short.call('GET', `/api/v1/approvals/${id}`);
    expect(read.body.approval).toMatchObject({ state: 'denied', reason: 'Not decided within 1 s: the approval expired' });
    expect((await short.call('GET', `/api/v1/approvals?chatId=${chatId}&state=pending`)).body.approvals).toEqual([]);
    const late = await short.call('POST', `/api/v1/approvals/${id}`, { body: { decision: 'approve' } });
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('denied');
    fake.script({ text: 'It stays, then. Hello!' });
    const next = await short.call('POST', '/api/v1/chat/completions', { body: { model: project, chatId, messages: [{ role: 'user', content: 'Hello' }] } });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(lastSent().slice(-3)).toEqual([
      expect.objectContaining({ role: 'assistant' }),
      expect.objectContaining({ role: 'tool', tool_call_id: 'call_x', content: 'The user denied this tool call: Not decided within 1 s: the approval expired. It was not run.' }),
      expect.objectContaining({ role: 'user', content: 'Hello' }),
    ]);
    const messages = (await short.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; toolCallId?: string }[];
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
  });
});
