import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';

// A step that calls both a function of the client's (`tools` of the request, run by the client)
// and a tool marked requiresApproval: the pause gives the client its tool_calls and the person
// the approval; the turn goes on once both the decisions and the client's results are in,
// whichever comes last. The built server with a real SQLite file and a sandboxed tool, the
// official openai client on the completions route, the loopback OpenAI fake as the model.

type Sent = { role: string; content?: unknown; tool_call_id?: string };
type Approval = { id: string; tool: string; callId: string; chatId: string };

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;

const WEATHER: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const question: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'user', content: 'Weather in Oslo, then remove the report' };

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Files', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const tool = await s.call('POST', '/api/tools/create', {
    body: {
      projectId,
      name: 'remove_file',
      description: 'Removes a file',
      language: 'javascript',
      code: 'function main(args) { return { removed: args.path } }',
      parameters: { type: 'object', properties: { path: { type: 'string' } } },
      requiresApproval: true,
    },
  });
  expect(tool.status, JSON.stringify(tool.body)).toBe(201);
}, 60_000);
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

const newChat = async () => (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat.id as string;
const roles = async (chatId: string) =>
  ((await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; toolCallId?: string; content: string | null }[]).map((m) =>
    m.role === 'tool' ? `tool ${m.toolCallId}` : m.role,
  );
const lastSent = () => ((fake.requests.at(-1) as { body: unknown }).body as { messages: Sent[] }).messages;

/** The paused step: the client's get_weather and the marked remove_file. */
async function pause(chatId: string) {
  fake.script({
    toolCalls: [
      { id: 'call_weather', name: 'get_weather', arguments: { city: 'Oslo' } },
      { id: 'call_rm', name: 'remove_file', arguments: { path: '/tmp/report.txt' } },
    ],
  });
  const paused = await client.chat.completions.create({ model: projectId, messages: [question], tools: [WEATHER], chatId } as never);
  const choice = paused.choices[0] as OpenAI.Chat.Completions.ChatCompletion.Choice;
  expect(choice.finish_reason).toBe('tool_calls');
  // The client gets its own call to run; the person the approval.
  expect(choice.message.tool_calls?.map((c) => (c as { id: string }).id)).toEqual(['call_weather']);
  const approvals = (paused as unknown as { approvals: Approval[] }).approvals;
  expect(approvals.map((a) => [a.tool, a.callId])).toEqual([['remove_file', 'call_rm']]);
  return { message: choice.message, approval: approvals[0] as Approval };
}

/** The client's request with its result, as an OpenAI client sends it (the whole conversation). */
const results = (chatId: string, message: OpenAI.Chat.Completions.ChatCompletionMessage) =>
  client.chat.completions.create({
    model: projectId,
    chatId,
    tools: [WEATHER],
    messages: [question, { role: 'assistant', content: message.content, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: 'call_weather', content: 'Sunny, 21 °C' }],
  } as never);

const bothResults = () => [
  expect.objectContaining({ role: 'tool', tool_call_id: 'call_weather', content: 'Sunny, 21 °C' }),
  expect.objectContaining({ role: 'tool', tool_call_id: 'call_rm', content: JSON.stringify({ removed: '/tmp/report.txt' }) }),
];

describe("a pause with the client's calls and a call to approve", () => {
  it('decided first: the decision says what the turn still waits for, and the client results continue it', async () => {
    const chatId = await newChat();
    const { message, approval } = await pause(chatId);
    const decided = await s.call('POST', `/api/v1/approvals/${approval.id}`, { body: { decision: 'approve' } });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    expect(decided.body).toMatchObject({
      approval: { id: approval.id, state: 'approved' },
      pending: [],
      tool_calls: [{ id: 'call_weather', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Oslo' }) } }],
    });
    // Nothing ran the model yet.
    expect(fake.requests).toHaveLength(1);

    fake.script({ text: 'Sunny in Oslo; the report is gone.' });
    const answer = await results(chatId, message);
    expect(answer.choices[0]?.message.content).toBe('Sunny in Oslo; the report is gone.');
    expect(lastSent().slice(-2)).toEqual(expect.arrayContaining(bothResults()));
    expect(await roles(chatId)).toEqual(['user', 'assistant', 'tool call_rm', 'tool call_weather', 'assistant']);
  });

  it('results first: kept, the pause answered again (the approval, no tool_calls), and the decision continues the turn', async () => {
    const chatId = await newChat();
    const { message, approval } = await pause(chatId);
    const waiting = await results(chatId, message);
    const choice = waiting.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.tool_calls).toBeUndefined();
    expect((waiting as unknown as { approvals: Approval[] }).approvals.map((a) => a.id)).toEqual([approval.id]);
    expect(fake.requests).toHaveLength(1);
    expect(await roles(chatId)).toEqual(['user', 'assistant', 'tool call_weather']);
    // Sent again, the same results are no longer new: the chat still waits for the decision only.
    const again = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'tool', tool_call_id: 'call_weather', content: 'Rainy' }] } });
    expect(again.status).toBe(400);
    expect(again.body.message).toContain('call_weather');
    // A new question still waits for the decision.
    expect((await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId, messages: [{ role: 'user', content: 'and?' }] } })).status).toBe(409);

    fake.script({ text: 'Sunny in Oslo; the report is gone.' });
    const continued = await s.call('POST', `/api/v1/approvals/${approval.id}`, { body: { decision: 'approve' } });
    expect(continued.status, JSON.stringify(continued.body)).toBe(200);
    expect(continued.body.choices[0].message.content).toBe('Sunny in Oslo; the report is gone.');
    expect(lastSent().slice(-2)).toEqual(expect.arrayContaining(bothResults()));
    expect(await roles(chatId)).toEqual(['user', 'assistant', 'tool call_weather', 'tool call_rm', 'assistant']);
  });

  it('results first, streamed: the approval chunk and finish_reason tool_calls, then a streamed continuation', async () => {
    const chatId = await newChat();
    const { message, approval } = await pause(chatId);
    const stream = await client.chat.completions.create({
      model: projectId,
      chatId,
      tools: [WEATHER],
      stream: true,
      messages: [question, { role: 'assistant', content: message.content, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: 'call_weather', content: 'Sunny, 21 °C' }],
    } as never);
    const seen: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk & { approval?: Approval }>) {
      if (chunk.approval) seen.push(chunk.approval.id);
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(seen).toEqual([approval.id]);
    expect(finish).toBe('tool_calls');

    fake.script({ text: 'I kept the report. Sunny in Oslo.' });
    const continued = await s.call('POST', `/api/v1/approvals/${approval.id}`, { body: { decision: 'deny', reason: 'keep it' } });
    expect(continued.body.choices[0].message.content).toBe('I kept the report. Sunny in Oslo.');
    expect(lastSent().slice(-2)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ role: 'tool', tool_call_id: 'call_weather' }),
        expect.objectContaining({ role: 'tool', tool_call_id: 'call_rm', content: 'The user denied this tool call: keep it. It was not run.' }),
      ]),
    );
  });
});

describe('the same on the responses route', () => {
  it('a function_call_output while the approval waits is kept, and the response asks for the approval again; the answer continues the turn', async () => {
    fake.script({
      toolCalls: [
        { id: 'call_weather', name: 'get_weather', arguments: { city: 'Oslo' } },
        { id: 'call_rm', name: 'remove_file', arguments: { path: '/tmp/report.txt' } },
      ],
    });
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: null }];
    const first = await client.responses.create({ model: projectId, input: 'Weather in Oslo, then remove the report', tools });
    expect(first.output.map((o) => o.type)).toEqual(expect.arrayContaining(['function_call', 'mcp_approval_request']));
    const request = first.output.find((o) => o.type === 'mcp_approval_request') as OpenAI.Responses.ResponseOutputItem.McpApprovalRequest;
    const second = await client.responses.create({
      model: projectId,
      previous_response_id: first.id,
      tools,
      input: [{ type: 'function_call_output', call_id: 'call_weather', output: 'Sunny, 21 °C' }],
    });
    expect(second.output.map((o) => o.type)).toEqual(['mcp_approval_request']);
    expect(second.output[0]).toMatchObject({ id: request.id });
    expect(fake.requests).toHaveLength(1);
    fake.script({ text: 'Sunny in Oslo; the report is gone.' });
    const third = await client.responses.create({
      model: projectId,
      previous_response_id: second.id,
      tools,
      input: [{ type: 'mcp_approval_response', approval_request_id: request.id, approve: true }],
    } as never);
    expect(third.output_text).toBe('Sunny in Oslo; the report is gone.');
    expect(lastSent().slice(-2)).toEqual(expect.arrayContaining(bothResults()));
  });
});
