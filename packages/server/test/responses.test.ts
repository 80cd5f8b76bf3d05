import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { addToolSource } from './add-tool.js';
import { startTestServer, type TestServer } from './helpers.js';
import { responseEvents } from './responses-helpers.js';

// The Open Responses API through the official openai client (responses.create, stream,
// retrieve, inputItems.list, delete) and raw HTTP, against the built server with the loopback
// OpenAI fake as the model.

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;
const { source: agentTools, calls: added } = addToolSource();

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' },
    toolSources: [agentTools],
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Desk', model: 'gpt-4o-mini', provider: 'openai', instructions: 'Be brief.' } })).body.project.id;
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  added.length = 0;
});

/** Every member the specification's response resource requires. */
const REQUIRED = [
  'id',
  'object',
  'created_at',
  'completed_at',
  'status',
  'incomplete_details',
  'model',
  'previous_response_id',
  'instructions',
  'output',
  'error',
  'tools',
  'tool_choice',
  'truncation',
  'parallel_tool_calls',
  'text',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'temperature',
  'reasoning',
  'usage',
  'max_output_tokens',
  'max_tool_calls',
  'store',
  'background',
  'service_tier',
  'metadata',
  'safety_identifier',
  'prompt_cache_key',
];

const sent = (i = 0) => fake.requests[i]?.body as { messages: { role: string; content: unknown; tool_calls?: unknown[] }[]; tools?: { function: { name: string } }[]; max_tokens?: number };

describe('POST /api/v1/responses', () => {
  it('answers a project as model with the agent: a completed response with every required member, kept in a chat', async () => {
    fake.script({ text: 'Hello there.', usage: { promptTokens: 12, completionTokens: 3 } });
    const r = await client.responses.create({ model: projectId, input: 'Hi', instructions: 'Answer in English.', metadata: { ticket: '42' }, max_output_tokens: 64, temperature: 0.5 });
    for (const key of REQUIRED) expect(r, key).toHaveProperty(key);
    expect(r).toMatchObject({
      object: 'response',
      status: 'completed',
      model: projectId,
      instructions: 'Answer in English.',
      metadata: { ticket: '42' },
      max_output_tokens: 64,
      temperature: 0.5,
      store: true,
      background: false,
      error: null,
      usage: { input_tokens: 12, output_tokens: 3, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
    });
    expect(r.id).toMatch(/^resp_/);
    expect(r.completed_at).toBeGreaterThanOrEqual(r.created_at);
    expect(r.output).toEqual([
      { type: 'message', id: expect.stringMatching(/^msg_/), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there.', annotations: [], logprobs: [] }] },
    ]);
    expect(r.output_text).toBe('Hello there.');
    // The agent's instructions first, then the request's, then the input.
    expect(sent().messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'Be brief.'],
      ['system', 'Answer in English.'],
      ['user', 'Hi'],
    ]);
    expect(sent().max_tokens).toBe(64);
    // The turn is in a chat of the project, readable on the chat routes.
    const chatId = (r as unknown as { chatId: string }).chatId;
    const messages = (await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string }[];
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Hi'],
      ['assistant', 'Hello there.'],
    ]);
    expect(await client.responses.retrieve(r.id)).toMatchObject({ id: r.id, status: 'completed', output: r.output, chatId });
  });

  it('continues from previous_response_id through the chat, and a chat continues on the completions route', async () => {
    const first = await client.responses.create({ model: projectId, input: 'My name is Ada.' });
    const second = await client.responses.create({ model: projectId, previous_response_id: first.id, input: 'What is my name?' });
    expect(second.previous_response_id).toBe(first.id);
    expect(sent(1).messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'Be brief.'],
      ['user', 'My name is Ada.'],
      ['assistant', 'You said: My name is Ada.'],
      ['user', 'What is my name?'],
    ]);
    const chatId = (second as unknown as { chatId: string }).chatId;
    expect(chatId).toBe((first as unknown as { chatId: string }).chatId);
    await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'And now?' }], chatId } as never);
    expect(sent(2).messages.map((m) => m.content)).toEqual(['Be brief.', 'My name is Ada.', 'You said: My name is Ada.', 'What is my name?', 'You said: What is my name?', 'And now?']);
    // A response continues a chat started on the completions route (chatId).
    const third = await client.responses.create({ model: projectId, input: 'Last one', chatId } as never);
    expect(sent(3).messages).toHaveLength(8);
    expect((third as unknown as { chatId: string }).chatId).toBe(chatId);
  });

  it("chains a plain model's responses through their stored input and output", async () => {
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content: [{ type: 'input_text', text: 'Remember 7.' }] }] });
    expect(first).toMatchObject({ model: 'gpt-4o-mini', chatId: null });
    await client.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'What number?', instructions: 'Be exact.' });
    expect(sent(1).messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'Be exact.'],
      ['user', 'Remember 7.'],
      ['assistant', 'You said: Remember 7.'],
      ['user', 'What number?'],
    ]);
  });

  it("runs the agent's own tools as output items beside the client's function calls, and continues with function_call_output", async () => {
    fake.script(
      {
        toolCalls: [
          { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
          { id: 'call_w', name: 'get_weather', arguments: { city: 'Oslo' } },
        ],
      },
      { text: 'Sunny, and 5.' },
    );
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: null }];
    const r = await client.responses.create({ model: projectId, input: 'Weather in Oslo, and 2+3?', tools });
    expect(added).toEqual([{ a: 2, b: 3 }]);
    expect(r.status).toBe('completed');
    expect(r.output).toEqual([
      { type: 'agent_platform:tool_call', id: expect.stringMatching(/^tc_/), call_id: 'call_add', name: 'add', arguments: '{"a":2,"b":3}', output: '5', error: null, status: 'completed' },
      { type: 'function_call', id: expect.stringMatching(/^fc_/), call_id: 'call_w', name: 'get_weather', arguments: '{"city":"Oslo"}', status: 'completed' },
    ]);
    expect(r.tools).toEqual([{ type: 'function', name: 'get_weather', description: null, parameters: tools[0]?.parameters, strict: null }]);
    expect(sent().tools?.map((t) => t.function.name)).toEqual(['add', 'get_weather']);
    const next = await client.responses.create({ model: projectId, previous_response_id: r.id, input: [{ type: 'function_call_output', call_id: 'call_w', output: 'Sunny' }], tools });
    expect(next.output_text).toBe('Sunny, and 5.');
    expect(
      sent(1)
        .messages.slice(-3)
        .map((m) => m.role),
    ).toEqual(['assistant', 'tool', 'tool']);
  });

  it('checks text.format json_schema: a compliant answer is completed, another fails with 502 and is kept failed', async () => {
    const format = { type: 'json_schema' as const, name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false }, strict: true };
    fake.script({ text: '{"name":"Oslo"}' });
    const ok = await client.responses.create({ model: projectId, input: 'A city', text: { format } });
    expect(JSON.parse(ok.output_text)).toEqual({ name: 'Oslo' });
    expect(ok.text?.format).toEqual({ ...format, description: null });
    expect((sent().messages[0]?.content as string) ?? '').not.toContain('"name"');
    fake.script({ text: 'not json' });
    const failed = await client.responses.create({ model: projectId, input: 'A city', text: { format } }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  });

  it("refuses bad input with a 400 naming the field in the specification's error shape, storing nothing", async () => {
    const before = (await s.call('GET', '/api/chats?limit=100')).body.chats?.length ?? 0;
    const bad = [
      [{ model: projectId, input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input.0.content.0.file_id'],
      [{ model: projectId, input: 'x', tools: [{ type: 'web_search' }] }, 'tools.0.type'],
      [{ model: projectId, input: 'x', temperature: 3 }, 'temperature'],
      [{ model: projectId, input: 'x', bogus: 1 }, null],
      [{ model: projectId, input: 'x', tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice.name'],
    ] as const;
    for (const [body, param] of bad) {
      const res = await s.call('POST', '/api/v1/responses', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request' });
      if (param) expect(res.body.error.param, JSON.stringify(res.body)).toBe(param);
    }
    expect(fake.requests).toHaveLength(0);
    expect((await s.call('GET', '/api/chats?limit=100')).body.chats?.length ?? 0).toBe(before);
    const missing = await s.call('POST', '/api/v1/responses', { body: { model: projectId, input: 'x', previous_response_id: 'resp_nothere' } });
    expect(missing.status).toBe(404);
    expect(missing.body.error.param).toBe('previous_response_id');
  });

  it('forwards tool_choice and top_p, and keeps nothing with store: false', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: null }];
    fake.script({ toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: {} }] });
    const r = await client.responses.create({ model: projectId, input: 'x', tools, tool_choice: { type: 'function', name: 'get_weather' }, top_p: 0.5, store: false });
    expect(r).toMatchObject({ store: false, chatId: null, tool_choice: { type: 'function', name: 'get_weather' }, top_p: 0.5 });
    const body = fake.requests[0]?.body as { tool_choice?: unknown; top_p?: number };
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body.top_p).toBe(0.5);
    await expect(client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
    const next = await s.call('POST', '/api/v1/responses', { body: { model: projectId, input: 'x', previous_response_id: r.id } });
    expect(next.status).toBe(404);
  });

  it("answers another user's response id with 404 on every route", async () => {
    const r = await client.responses.create({ model: projectId, input: 'Mine' });
    const other = new OpenAI({ apiKey: s.keyB, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
    for (const call of [() => other.responses.retrieve(r.id), () => other.responses.delete(r.id), () => other.responses.cancel(r.id), () => other.responses.inputItems.list(r.id)]) {
      await expect(call()).rejects.toMatchObject({ status: 404 });
    }
    const continued = await s.call('POST', '/api/v1/responses', { key: s.keyB, body: { input: 'x', previous_response_id: r.id } });
    expect(continued.status).toBe(404);
    expect(await client.responses.retrieve(r.id)).toMatchObject({ id: r.id });
  });

  it('lists input items a page at a time, newest first by default, and deletes a response', async () => {
    const input = [1, 2, 3, 4, 5].map((n) => ({ role: 'user' as const, content: `m${n}` }));
    const r = await client.responses.create({ model: 'gpt-4o-mini', input });
    const page = await client.responses.inputItems.list(r.id, { limit: 2 });
    expect(page.data.map((i) => (i as { content: { text: string }[] }).content[0]?.text)).toEqual(['m5', 'm4']);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(r.id, { limit: 2, order: 'asc' })) all.push((item as { content: { text: string }[] }).content[0]?.text ?? '');
    expect(all).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(await client.responses.delete(r.id)).toEqual({ id: r.id, object: 'response', deleted: true });
    await expect(client.responses.retrieve(r.id)).rejects.toMatchObject({ status: 404 });
  });

  it('streams the semantic events in order with sequence numbers, which responses.stream assembles', async () => {
    fake.script({ text: 'One two three.' });
    const stream = client.responses.stream({ model: projectId, input: 'Count' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('One two three.');
    expect(final).toMatchObject({ status: 'completed', output_text: 'One two three.' });
    expect(await client.responses.retrieve(final.id)).toMatchObject({ status: 'completed', output_text: 'One two three.' });

    fake.script({
      toolCalls: [
        { id: 'call_add', name: 'add', arguments: { a: 1, b: 1 } },
        { id: 'call_w', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      ],
    });
    const events = await responseEvents(s, { model: projectId, input: 'Go', stream: true, tools: [{ type: 'function', name: 'get_weather' }] });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0]).toMatchObject({ response: { status: 'in_progress', output: [] } });
    expect(events[8]).toMatchObject({
      response: {
        status: 'completed',
        output: [
          { type: 'agent_platform:tool_call', output: '2' },
          { type: 'function_call', name: 'get_weather' },
        ],
      },
    });
  });
});
