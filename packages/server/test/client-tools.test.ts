import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, type RecordedChatRequest, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { addToolSource } from './add-tool.js';
import { startTestServer, type TestServer } from './helpers.js';

// Client tools on /v1/chat/completions, through the official openai client against the built
// server, with the loopback OpenAI fake (which validates requests as OpenAI does) as the model.

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type Sent = { role: string; content?: unknown; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string };

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;

/** The agent's own tool: every project has `add`. */
const { source: agentTools, calls: added } = addToolSource();

/** A function the client runs itself. */
const weather: OpenAI.Chat.Completions.ChatCompletionFunctionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const question: Message = { role: 'user', content: 'What is the weather in Oslo?' };

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', OLLAMA_HOST: fake.origin, AGENT_PLATFORM_MODEL_TIMEOUT_MS: '5000' },
    toolSources: [agentTools],
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Weather desk', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  added.length = 0;
});

const sentTo = (request: RecordedChatRequest | undefined) => request?.body as { tools?: { function: { name: string } }[]; tool_choice?: unknown; messages: Sent[] };
const stored = async (chatId: string) =>
  ((await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as { role: string; content: string | null; toolCalls?: { id: string; name: string }[]; toolCallId?: string }[]).map((m) => [
    m.role,
    m.toolCalls?.map((c) => c.name) ?? m.toolCallId ?? m.content,
  ]);

/** A streamed completion through the client; `body` may carry our members (`chatId`). */
const streamed = async (body: Record<string, unknown>) =>
  (await client.chat.completions.create({ ...body, stream: true } as never)) as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;

/** Reads a streamed answer as the openai client gives it: text, the client's tool calls (assembled by index), finish. */
async function readStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  let finish: string | null = null;
  const calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[] = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    text += choice?.delta.content ?? '';
    for (const part of choice?.delta.tool_calls ?? []) {
      calls[part.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } };
      const call = calls[part.index] as (typeof calls)[number];
      call.id ||= part.id ?? '';
      call.function.name += part.function?.name ?? '';
      call.function.arguments += part.function?.arguments ?? '';
    }
    finish = choice?.finish_reason ?? finish;
  }
  return { text, finish, calls };
}

describe('client tools on /v1/chat/completions', () => {
  it("offers them beside the agent's tools, answers the call with finish_reason tool_calls, and continues with the tool message (no chatId)", async () => {
    fake.script({ text: 'Let me check.', toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const first = await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather] });
    expect(sentTo(fake.lastRequest())?.tools?.map((t) => t.function.name)).toEqual(['add', 'get_weather']);
    expect(fake.lastRequest()?.status).toBe(200);
    const choice = first.choices[0] as OpenAI.Chat.Completions.ChatCompletion.Choice;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message).toEqual({ role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] });

    // The client runs its function and sends the whole conversation back, as OpenAI's API needs.
    const second = await client.chat.completions.create({
      model: projectId,
      tools: [weather],
      messages: [question, choice.message, { role: 'tool', tool_call_id: 'call_w1', content: 'Rain, 7 °C' }],
    });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(second.choices[0]?.message.content).toBe('The tool get_weather returned: Rain, 7 °C');
    expect(sentTo(fake.lastRequest())?.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', tool_call_id: 'call_w1', content: 'Rain, 7 °C' },
    ]);
    expect(added).toEqual([]);
  });

  it('streams the call as delta.tool_calls and continues streamed (no chatId)', async () => {
    fake.script({ toolCalls: [{ id: 'call_w2', name: 'get_weather', arguments: { city: 'Bergen' } }] });
    const first = await readStream(await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather], stream: true }));
    expect(first).toEqual({ text: '', finish: 'tool_calls', calls: [{ id: 'call_w2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bergen"}' } }] });
    const second = await readStream(
      await client.chat.completions.create({
        model: projectId,
        tools: [weather],
        stream: true,
        messages: [question, { role: 'assistant', content: null, tool_calls: first.calls }, { role: 'tool', tool_call_id: 'call_w2', content: 'Sun' }],
      }),
    );
    expect(second).toEqual({ text: 'The tool get_weather returned: Sun', finish: 'stop', calls: [] });
  });

  it("runs the agent's tools of a step that calls both first; with chatId the chat holds the calls and results in order, once", async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    fake.script({
      toolCalls: [
        { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
        { id: 'call_w3', name: 'get_weather', arguments: { city: 'Tromsø' } },
      ],
    });
    const first = await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather], chatId: chat.id } as never);
    const message = (first as OpenAI.Chat.Completions.ChatCompletion).choices[0]?.message as OpenAI.Chat.Completions.ChatCompletionMessage;
    // The agent ran its own call; the client gets only its own.
    expect(added).toEqual([{ a: 2, b: 3 }]);
    expect(message.tool_calls).toEqual([{ id: 'call_w3', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tromsø"}' } }]);
    expect(await stored(chat.id)).toEqual([
      ['user', 'What is the weather in Oslo?'],
      ['assistant', ['add', 'get_weather']],
      ['tool', 'call_add'],
    ]);

    // The client resends the conversation with its result: nothing is stored twice, and the model
    // sees the agent's result beside the client's.
    const second = await client.chat.completions.create({
      model: projectId,
      tools: [weather],
      chatId: chat.id,
      messages: [{ role: 'system', content: 'Answer in one line.' }, question, message, { role: 'tool', tool_call_id: 'call_w3', content: 'Snow' }],
    } as never);
    expect((second as OpenAI.Chat.Completions.ChatCompletion).choices[0]?.message.content).toBe('The tool get_weather returned: Snow');
    expect(fake.lastRequest()?.status).toBe(200);
    expect(sentTo(fake.lastRequest())?.messages.map((m) => [m.role, m.tool_calls?.map((c) => c.id) ?? m.tool_call_id ?? m.content])).toEqual([
      ['system', 'Answer in one line.'],
      ['user', 'What is the weather in Oslo?'],
      ['assistant', ['call_add', 'call_w3']],
      ['tool', 'call_add'],
      ['tool', 'call_w3'],
    ]);
    expect(await stored(chat.id)).toEqual([
      ['user', 'What is the weather in Oslo?'],
      ['assistant', ['add', 'get_weather']],
      ['tool', 'call_add'],
      ['tool', 'call_w3'],
      ['assistant', 'The tool get_weather returned: Snow'],
    ]);
  });

  it('continues a chat streamed from the tool message alone, and through a recorded stream', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    fake.script({ toolCalls: [{ id: 'call_w4', name: 'get_weather', arguments: { city: 'Bodø' } }] });
    const first = await readStream(await streamed({ model: projectId, messages: [question], tools: [weather], chatId: chat.id }));
    expect(first.calls.map((c) => c.id)).toEqual(['call_w4']);
    const second = await readStream(await streamed({ model: projectId, tools: [weather], chatId: chat.id, messages: [{ role: 'tool', tool_call_id: 'call_w4', content: 'Fog' }] }));
    expect(second).toMatchObject({ text: 'The tool get_weather returned: Fog', finish: 'stop' });
    expect(await stored(chat.id)).toEqual([
      ['user', 'What is the weather in Oslo?'],
      ['assistant', ['get_weather']],
      ['tool', 'call_w4'],
      ['assistant', 'The tool get_weather returned: Fog'],
    ]);

    // A recorded completion (streamId) answered as JSON folds the recorded chunks: the calls are there.
    const streamId = (await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } })).body.stream.id;
    fake.script({ toolCalls: [{ id: 'call_w5', name: 'get_weather', arguments: { city: 'Alta' } }] });
    const recorded = await s.call('POST', '/api/v1/chat/completions', { body: { model: projectId, chatId: chat.id, streamId, tools: [weather], messages: [question] } });
    expect(recorded.body.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_w5', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Alta"}' } }] },
      finish_reason: 'tool_calls',
    });
  });

  it('honours tool_choice: none offers no tool, required and a named function reach the model', async () => {
    await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather], tool_choice: 'none' });
    expect(sentTo(fake.lastRequest())).not.toHaveProperty('tools');
    fake.script({ toolCalls: [{ id: 'call_w6', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const named = await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    expect(sentTo(fake.lastRequest())?.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(named.choices[0]?.finish_reason).toBe('tool_calls');
    fake.script({ toolCalls: [{ id: 'call_w7', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather], tool_choice: 'required', parallel_tool_calls: false });
    expect(sentTo(fake.lastRequest())).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
  });

  it('refuses with 400, before any model call: a name of the agent, a choice of no tool, settings the provider ignores, and results that are missing', async () => {
    const refused = async (body: Record<string, unknown>, message: string) => {
      const error = await client.chat.completions.create({ model: projectId, messages: [question], ...body } as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(body)).toMatchObject({ status: 400 });
      expect((error as Error).message).toContain(message);
    };
    await refused({ tools: [{ ...weather, function: { ...weather.function, name: 'add' } }] }, `tools.0.function.name: "add" is the name of one of the agent's tools`);
    await refused({ tools: [weather, weather] }, 'tools.1.function.name: duplicate name "get_weather"');
    await refused({ tools: [weather], tool_choice: { type: 'function', function: { name: 'add' } } }, `tool_choice.function.name: "add" is not one of the request's tools`);
    await refused({ tools: [{ ...weather, function: { ...weather.function, name: 'get weather' } }] }, 'tools.0.function.name: must be 1-64 letters, digits, _ or -');
    await refused({ tools: [{ ...weather, function: { ...weather.function, parameters: { type: 'string' } } }] }, 'tools.0.function.parameters: must describe an object');
    await refused(
      { messages: [question, { role: 'assistant', content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] }] },
      'tool call c9 (get_weather) has no result',
    );
    await refused({ messages: [question, { role: 'tool', tool_call_id: 'c9', content: 'x' }] }, 'messages.1.tool_call_id: "c9" answers no tool call');
    // A chat waiting for its client's results does not take a new question instead.
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    fake.script({ toolCalls: [{ id: 'call_w8', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    await client.chat.completions.create({ model: projectId, messages: [question], tools: [weather], chatId: chat.id } as never);
    await refused({ chatId: chat.id, messages: [{ role: 'user', content: 'Never mind' }] }, 'messages.0: tool call call_w8 (get_weather) has no result');
    // Ollama's endpoint ignores tool_choice and parallel_tool_calls: refused, not dropped.
    const ollama = (await s.call('POST', '/api/projects/create', { body: { name: 'Local', model: 'llama3.2', provider: 'ollama' } })).body.project.id;
    const before = fake.requests.length;
    await refused({ model: ollama, tools: [weather], tool_choice: 'required' }, 'tool_choice: provider ollama cannot be made to call a tool');
    await refused({ model: ollama, tools: [weather], parallel_tool_calls: false }, 'parallel_tool_calls: provider ollama cannot be limited');
    await refused({ model: ollama, tools: [{ ...weather, function: { ...weather.function, strict: true } }] }, 'tools.0.function.strict: provider ollama does not support strict');
    await refused({ model: 'gpt-4o-mini', tool_choice: 'required' }, 'tool_choice: "required" needs a tool to call');
    expect(fake.requests.length).toBe(before);
    // Ollama takes client tools with tool_choice auto.
    fake.script({ toolCalls: [{ id: 'call_w9', name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const local = await client.chat.completions.create({ model: ollama, messages: [question], tools: [weather], tool_choice: 'auto' });
    expect(local.choices[0]?.message.tool_calls?.[0]?.id).toBe('call_w9');
    expect(sentTo(fake.lastRequest())).not.toHaveProperty('tool_choice');
  });
});
