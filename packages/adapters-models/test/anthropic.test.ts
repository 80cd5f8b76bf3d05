import { type AgentTool, type ChatEvent, type ChatModel, type ChatRequest, collectChat, createGuardedFetch, createOutboundPolicy } from '@agent-platform/core';
import { type AgentEvent, runAgentTurn } from '@agent-platform/core/internal';
import { describeChatModel } from '@agent-platform/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anthropicChatModel } from '../src/anthropic/index.js';
import { type FakeAnthropicServer, startFakeAnthropicServer } from './fakes/anthropic-server.js';
import { drain, failure } from './fakes/chat-events.js';

const KEY = 'sk-ant-test-0123456789';
const MODEL = 'claude-sonnet-4-5';
let fake: FakeAnthropicServer;
beforeAll(async () => {
  fake = await startFakeAnthropicServer({ apiKey: KEY, models: [MODEL, 'claude-haiku-4-5'], contextChars: 20_000 });
});
afterAll(async () => {
  await fake.close();
});

describeChatModel('anthropic (loopback server speaking the Messages API)', {
  create: () => anthropicChatModel({ apiKey: KEY, baseURL: fake.url, maxRetries: 0 }),
  model: MODEL,
  scripted: { next: (reply) => fake.script(reply) },
  reasoning: { providerOptions: { thinking: { type: 'enabled', budgetTokens: 1024 } } },
});

const model = (extra: Partial<Parameters<typeof anthropicChatModel>[0]> = {}) => anthropicChatModel({ apiKey: KEY, baseURL: fake.url, maxRetries: 0, ...extra });
const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: MODEL, messages: [{ role: 'user', content }], ...extra });
const WEATHER = { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('anthropicChatModel', () => {
  beforeEach(() => fake.reset());

  it('sends the key, the version header and the conversation in the Messages format (system apart, images, tool_use/tool_result, tool_choice)', async () => {
    await collectChat(
      model().stream({
        model: MODEL,
        temperature: 0.2,
        maxTokens: 300,
        stop: ['END'],
        tools: [WEATHER],
        toolChoice: { name: 'get_weather' },
        parallelToolCalls: false,
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Where is this?' },
              { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            ],
          },
          { role: 'assistant', content: 'Let me look.', toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'tool', toolCallId: 'toolu_1', content: 'sunny' },
        ],
      }),
    );
    const sent = fake.lastRequest();
    expect(sent?.status).toBe(200);
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['x-api-key']).toBe(KEY);
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent?.body).toMatchObject({
      model: MODEL,
      max_tokens: 300,
      temperature: 0.2,
      stop_sequences: ['END'],
      stream: true,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
      ],
      tools: [{ name: 'get_weather', description: 'Weather of a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    });
  });

  it('assembles parallel tool calls streamed as input_json_delta fragments', async () => {
    const paris = JSON.stringify({ city: 'Paris', note: 'a "quoted", long text' });
    const rome = JSON.stringify({ city: 'Rome' });
    fake.script({
      text: 'Checking both.',
      toolCalls: [
        { name: 'get_weather', arguments: paris, id: 'toolu_A' },
        { name: 'get_weather', arguments: rome, id: 'toolu_B' },
      ],
    });
    const events = await drain(model().stream(ask('Weather in Paris and Rome?', { tools: [WEATHER] })));
    expect(events.filter((e) => e.type !== 'text')).toEqual([
      { type: 'tool_call', call: { id: 'toolu_A', name: 'get_weather', arguments: paris } },
      { type: 'tool_call', call: { id: 'toolu_B', name: 'get_weather', arguments: rome } },
      { type: 'finish', reason: 'tool_calls', usage: expect.objectContaining({ promptTokens: expect.any(Number) }) },
    ]);
  });

  it('sends extended thinking as thinking.budget_tokens and streams the thinking as reasoning, apart from the text', async () => {
    fake.script({ reasoning: 'Two and two make four.', text: 'Four.' });
    const result = await collectChat(model().stream(ask('2+2?', { maxTokens: 4096, providerOptions: { thinking: { type: 'enabled', budgetTokens: 2048 } } })));
    expect(fake.lastRequest()?.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(result).toMatchObject({ content: 'Four.', reasoning: 'Two and two make four.', finishReason: 'stop' });
  });

  it('carries the signed thinking block of a tool round back with the tool results (extended thinking across tool rounds)', async () => {
    const thinking = { thinking: { type: 'enabled', budgetTokens: 1024 } };
    const call = { id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' };
    fake.script({ reasoning: 'I need the weather first.', toolCalls: [call] });
    const events = await drain(model().stream(ask('Weather in Paris?', { maxTokens: 4096, providerOptions: thinking, tools: [WEATHER] })));
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: 'finish', reason: 'tool_calls', reasoning: [{ text: 'I need the weather first.', metadata: { anthropic: { signature: expect.any(String) } } }] });
    const reasoning = finish?.type === 'finish' ? finish.reasoning : undefined;

    // The next step, with the assistant's reasoning as it came: the thinking block goes first, signed.
    const next = (blocks: typeof reasoning): ChatRequest => ({
      model: MODEL,
      maxTokens: 4096,
      providerOptions: thinking,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, toolCalls: [call], ...(blocks ? { reasoning: blocks } : {}) },
        { role: 'tool', toolCallId: 'toolu_1', content: 'sunny' },
      ],
    });
    fake.script({ reasoning: 'It is sunny.', text: 'Sunny in Paris.' });
    expect(await collectChat(model().stream(next(reasoning)))).toMatchObject({ content: 'Sunny in Paris.', reasoning: 'It is sunny.', finishReason: 'stop' });
    const sent = fake.lastRequest()?.body.messages as { content: Record<string, unknown>[] }[] | undefined;
    const signature = (reasoning?.[0]?.metadata?.anthropic as { signature?: string } | undefined)?.signature;
    expect(sent?.[1]?.content[0]).toEqual({ type: 'thinking', thinking: 'I need the weather first.', signature });

    // Without the block, or with its text changed, the API refuses the step.
    expect(await failure(model().stream(next(undefined)))).toMatchObject({ code: 'upstream_error', details: { status: 400 } });
    const altered = reasoning?.map((block) => ({ ...block, text: 'Something else.' }));
    expect(await failure(model().stream(next(altered)))).toMatchObject({ code: 'upstream_error', details: { status: 400 } });
  });

  it('with thinking on, never forces a tool (the API refuses tool_choice any or tool then): the AI SDK asks with auto', async () => {
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const body = { model: MODEL, max_tokens: 4096, thinking, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] };
    for (const tool_choice of [{ type: 'any' }, { type: 'tool', name: 'get_weather' }]) {
      const res = await fetch(`${fake.url}/messages`, {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, tool_choice }),
      });
      expect([res.status, ((await res.json()) as { error: { message: string } }).error.message]).toEqual([400, 'Thinking may not be enabled when tool_choice forces tool use.']);
    }
    fake.script({ reasoning: 'Hm.', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }] });
    const answer = await collectChat(
      model().stream(ask('Weather?', { maxTokens: 4096, tools: [WEATHER], toolChoice: 'required', providerOptions: { thinking: { type: 'enabled', budgetTokens: 1024 } } })),
    );
    expect(answer.finishReason).toBe('tool_calls');
    expect(fake.lastRequest()?.body.tool_choice).toEqual({ type: 'auto' });
  });

  it('runs an agent turn of two tool rounds with extended thinking on (the loop sends each step its reasoning back)', async () => {
    const thinking = { thinking: { type: 'enabled', budgetTokens: 1024 } };
    const claude = model();
    // The project's provider options on every call of the turn.
    const withThinking: ChatModel = { ...claude, stream: (request) => claude.stream({ ...request, providerOptions: thinking }) };
    fake.script(
      { reasoning: 'Paris first.', toolCalls: [{ id: 'toolu_a', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
      { reasoning: 'Now Rome.', toolCalls: [{ id: 'toolu_b', name: 'get_weather', arguments: '{"city":"Rome"}' }] },
      { reasoning: 'Both known.', text: 'Paris: sunny. Rome: rain.' },
    );
    const weather: AgentTool = { definition: WEATHER, run: async (input) => ((input as { city: string }).city === 'Paris' ? 'sunny' : 'rain') };
    const events: AgentEvent[] = [];
    for await (const event of runAgentTurn({
      model: withThinking,
      modelName: MODEL,
      history: [],
      input: [{ role: 'user', content: 'Weather in Paris, then Rome?' }],
      tools: [weather],
      maxTokens: 4096,
    })) {
      events.push(event);
    }
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
    expect(
      events
        .filter((e) => e.type === 'text')
        .map((e) => (e.type === 'text' ? e.delta : ''))
        .join(''),
    ).toBe('Paris: sunny. Rome: rain.');
    expect(
      events
        .filter((e) => e.type === 'reasoning')
        .map((e) => (e.type === 'reasoning' ? e.delta : ''))
        .join(''),
    ).toBe('Paris first.Now Rome.Both known.');
    // Each request after a tool round sent every earlier step's thinking block first in its assistant message.
    const requests = fake.requests.slice(-3);
    expect(requests.map((r) => r.status)).toEqual([200, 200, 200]);
    const thinkingOf = (r: (typeof requests)[number]) =>
      (r.body.messages as { role: string; content: Record<string, unknown>[] }[]).filter((m) => m.role === 'assistant').map((m) => m.content[0]?.thinking);
    expect(requests.map(thinkingOf)).toEqual([[], ['Paris first.'], ['Paris first.', 'Now Rome.']]);
  });

  it('asks for prompt caching with cacheControl and reports the cache tokens in usage', async () => {
    fake.script({ text: 'Cached.', usage: { promptTokens: 1200, completionTokens: 3 }, cacheRead: 1000, cacheWrite: 150 });
    const result = await collectChat(model().stream(ask('hi', { providerOptions: { cacheControl: { type: 'ephemeral' } } })));
    expect(fake.lastRequest()?.body).toMatchObject({ cache_control: { type: 'ephemeral' } });
    expect(result.usage).toEqual({ promptTokens: 1200, completionTokens: 3, totalTokens: 1203, cachedPromptTokens: 1000, cacheWritePromptTokens: 150 });
  });

  it('asks for structured output natively (output_config.format), and for json_object with a forced json tool', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    fake.script({ text: '{"city":"Paris"}' });
    const native = await collectChat(model().stream(ask('Capital of France?', { responseFormat: { type: 'json_schema', name: 'capital', schema } })));
    expect(fake.lastRequest()?.body).toMatchObject({ output_config: { format: { type: 'json_schema', schema } } });
    expect(native).toMatchObject({ content: '{"city":"Paris"}', finishReason: 'stop', toolCalls: [] });
    fake.script({ text: '{"answer":42}' });
    const object = await collectChat(model().stream(ask('Answer in JSON.', { responseFormat: { type: 'json_object' } })));
    expect(fake.lastRequest()?.body).toMatchObject({ tool_choice: { type: 'any', disable_parallel_tool_use: true }, tools: [{ name: 'json', input_schema: { type: 'object' } }] });
    expect(object).toMatchObject({ content: '{"answer":42}', finishReason: 'stop', toolCalls: [] });
  });

  it('maps a refusal to content_filter', async () => {
    fake.script({ text: 'I can’t help with that.', finishReason: 'refusal' });
    expect((await collectChat(model().stream(ask('x')))).finishReason).toBe('content_filter');
  });

  it('maps the API’s error answers: a wrong key, a rate limit with retry-after, a prompt too long, an unknown model', async () => {
    const wrong = await failure(model({ apiKey: 'sk-ant-wrong-secret' }).stream(ask('x')));
    expect(wrong).toMatchObject({ code: 'upstream_error', retryable: false, details: { provider: 'anthropic', upstream: fake.url, status: 401, kind: 'auth' } });
    expect(wrong.message).toBe(`Model provider anthropic (${fake.url}) refused the credentials (HTTP 401) (authentication_error)`);

    fake.script({ status: 429, retryAfter: '30', errorMessage: 'Number of request tokens has exceeded your per-minute rate limit' });
    const limited = await failure(model().stream(ask('x')));
    expect(limited).toMatchObject({ code: 'upstream_error', retryable: true, details: { status: 429, kind: 'rate_limited', retryAfterSeconds: 30 } });
    expect(limited.message).not.toContain('per-minute');

    const long = await failure(model().stream(ask('word '.repeat(5000))));
    expect(long).toMatchObject({ details: { status: 400, kind: 'context_length' }, message: expect.stringContaining(`the prompt is too long for the model ${MODEL}`) });

    const unknown = await failure(model().stream(ask('x', { model: 'claude-nonexistent-9' })));
    expect(unknown).toMatchObject({
      details: { status: 404, kind: 'model_not_found' },
      message: `Model provider anthropic (${fake.url}) does not know the model claude-nonexistent-9 (HTTP 404) (not_found_error)`,
    });
    expect(JSON.stringify(fake.requests.map((r) => r.status))).toBe('[401,429,400,404]');
  });

  it('retries 429 and 529 before the first event (honouring retry-after), and fails on an error event mid-stream', async () => {
    fake.script({ status: 529, retryAfter: '0' }, { status: 429, retryAfter: '0' }, { text: 'At last.' });
    expect((await collectChat(model({ maxRetries: 2 }).stream(ask('x')))).content).toBe('At last.');
    expect(fake.requests.map((r) => r.status)).toEqual([529, 429, 200]);
    fake.reset();
    fake.script({ text: 'one two three four', streamError: { afterEvents: 4, type: 'overloaded_error', message: 'Overloaded' } });
    const mid = await failure(model({ maxRetries: 2 }).stream(ask('x')));
    expect(mid).toMatchObject({ code: 'upstream_error', retryable: true, message: `Model provider anthropic (${fake.url}) reported an error mid-stream (overloaded_error)` });
    expect(fake.requests).toHaveLength(1);
  });

  it('goes only through the fetch it is given: a refused address rejects with the policy’s error and the server gets nothing', async () => {
    const guarded = createGuardedFetch(createOutboundPolicy());
    try {
      const error = await failure(model({ fetch: guarded as unknown as typeof fetch }).stream(ask('x')));
      expect(error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Refused to connect to 127\.0\.0\.1/) });
      await expect(model({ fetch: guarded as unknown as typeof fetch }).listModels?.()).rejects.toMatchObject({ code: 'invalid_request' });
      expect(fake.requests).toHaveLength(0);
      // Allowed, the same fetch reaches it.
      const allowed = guarded.withPolicy(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }));
      expect((await collectChat(model({ fetch: allowed as unknown as typeof fetch }).stream(ask('hi')))).content).toBe('You said: hi');
    } finally {
      await guarded.close();
    }
  });

  it('stops the upstream call when aborted mid-stream or when it stalls: the server sees the connection close', async () => {
    fake.script({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 30 });
    const controller = new AbortController();
    const seen: ChatEvent[] = [];
    const aborted = await failure(
      (async function* () {
        for await (const event of model().stream(ask('x', { signal: controller.signal }))) {
          seen.push(event);
          if (seen.length === 2) controller.abort();
          yield event;
        }
      })(),
    );
    expect(aborted.code).toBe('aborted');
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
    fake.script({ hang: true });
    const timeout = await failure(model({ timeoutMs: 200 }).stream(ask('x')));
    expect(timeout).toMatchObject({ code: 'timeout', message: `Model provider anthropic (${fake.url}) did not answer within 200 ms` });
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('cuts an answer past answerLimit, naming the setting', async () => {
    fake.script({ text: 'x'.repeat(3000) });
    const error = await failure(model({ answerLimit: { bytes: 1000, setting: '--max-model-answer' } }).stream(ask('x')));
    expect(error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('--max-model-answer') });
  });

  it('lists the models of GET /v1/models page by page; a wrong key is refused', async () => {
    expect(await model().listModels?.()).toEqual([MODEL, 'claude-haiku-4-5']);
    const many = await startFakeAnthropicServer({ apiKey: KEY, models: Array.from({ length: 1500 }, (_, i) => `claude-${i}`) });
    try {
      const names = await anthropicChatModel({ apiKey: KEY, baseURL: many.url }).listModels?.();
      expect(names).toHaveLength(1500);
      expect(names?.at(-1)).toBe('claude-1499');
    } finally {
      await many.close();
    }
    await expect(model({ apiKey: 'sk-ant-wrong-secret' }).listModels?.()).rejects.toMatchObject({ code: 'upstream_error', details: { status: 401, kind: 'auth' } });
    await expect(model().listModels?.({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'aborted' });
  });
});
