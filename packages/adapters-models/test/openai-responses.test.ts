import { type ChatRequest, collectChat } from '@agent-platform/core';
import { describeChatModel } from '@agent-platform/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openaiResponsesChatModel } from '../src/openai-responses/index.js';
import { failure } from './fakes/chat-events.js';
import { expectAbortClosesUpstream, expectOnlyThroughFetch } from './fakes/provider-checks.js';
import { type FakeResponsesServer, startFakeResponsesServer } from './fakes/responses-server.js';

const KEY = 'sk-responses-0123456789';
let fake: FakeResponsesServer;
beforeAll(async () => {
  fake = await startFakeResponsesServer({ apiKey: KEY, models: ['gpt-4o-mini', 'o4-mini'] });
});
afterAll(async () => {
  await fake.close();
});

const model = (extra: Partial<Parameters<typeof openaiResponsesChatModel>[0]> = {}) => openaiResponsesChatModel({ apiKey: KEY, baseURL: fake.url, maxRetries: 0, ...extra });

describeChatModel('openai responses (loopback server speaking /v1/responses)', {
  create: () => model(),
  model: 'o4-mini',
  scripted: { next: (reply) => fake.script(reply) },
  reasoning: { providerOptions: { reasoningEffort: 'low', reasoningSummary: 'auto' } },
});

const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

describe('openaiResponsesChatModel', () => {
  beforeEach(() => fake.reset());

  it('posts the conversation to /v1/responses as input items, streaming, with store false unless asked', async () => {
    const result = await collectChat(
      model().stream({
        model: 'gpt-4o-mini',
        temperature: 0.2,
        maxTokens: 100,
        tools: [{ name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } }],
        toolChoice: { name: 'lookup' },
        parallelToolCalls: false,
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Define cat' },
              { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            ],
          },
          { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"word":"cat"}' }] },
          { role: 'tool', toolCallId: 'call_1', content: 'a small feline' },
        ],
      }),
    );
    expect(result.content).toBe('The tool returned: a small feline');
    const sent = fake.lastRequest();
    expect(`${sent?.method} ${sent?.path} ${sent?.status}`).toBe('POST /v1/responses 200');
    expect(sent?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent?.body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      store: false,
      temperature: 0.2,
      max_output_tokens: 100,
      parallel_tool_calls: false,
      tool_choice: { type: 'function', name: 'lookup' },
      tools: [{ type: 'function', name: 'lookup', description: 'Looks a word up' }],
      input: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Define cat' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"word":"cat"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a small feline' },
      ],
    });
    await collectChat(model({ store: true }).stream(ask('x')));
    expect(fake.lastRequest()?.body.store).toBe(true);
    await collectChat(model().stream(ask('x', { providerOptions: { store: true } })));
    expect(fake.lastRequest()?.body.store).toBe(true);
  });

  it('streams reasoning summaries apart from the text, parallel function calls whole, and usage with cached and reasoning tokens', async () => {
    fake.script({
      reasoning: 'Weather first, then time.',
      toolCalls: [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
      usage: { promptTokens: 50, completionTokens: 20, totalTokens: 70, cachedPromptTokens: 32, reasoningTokens: 8 },
    });
    const tools = ['get_weather', 'get_time'].map((name) => ({ name, description: name, parameters: { type: 'object', properties: {} } }));
    const result = await collectChat(model().stream(ask('Weather and time?', { model: 'o4-mini', tools, providerOptions: { reasoningEffort: 'low', reasoningSummary: 'auto' } })));
    expect(result.reasoning).toBe('Weather first, then time.');
    expect(result.content).toBe('');
    expect(result.toolCalls.map((call) => [call.name, call.arguments])).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{"zone":"Europe/Paris"}'],
    ]);
    expect(result.toolCalls.every((call) => call.id.startsWith('call_'))).toBe(true);
    expect(result.finishReason).toBe('tool_calls');
    expect(result.usage).toEqual({ promptTokens: 50, completionTokens: 20, totalTokens: 70, cachedPromptTokens: 32, reasoningTokens: 8 });
    expect(fake.lastRequest()?.body).toMatchObject({ reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'] });
  });

  it('maps response.incomplete to length or content_filter, and a json_schema response format to text.format', async () => {
    fake.script({ text: 'Cut', finishReason: 'length' }, { text: 'Filtered', finishReason: 'content_filter' });
    expect((await collectChat(model().stream(ask('x', { maxTokens: 5 })))).finishReason).toBe('length');
    // The API takes no max_output_tokens below 16: a smaller maxTokens is raised to it.
    expect(fake.lastRequest()?.body.max_output_tokens).toBe(16);
    expect((await collectChat(model().stream(ask('x')))).finishReason).toBe('content_filter');
    await collectChat(
      model().stream(
        ask('x', {
          responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }, strict: true },
        }),
      ),
    );
    expect(fake.lastRequest()?.body.text).toMatchObject({ format: { type: 'json_schema', name: 'answer', strict: true } });
  });

  it('classifies the failures: auth, rate_limited with retry-after, model_not_found, response.failed and error events', async () => {
    const where = `Model provider openai (${fake.url})`;
    const wrong = await failure(model({ apiKey: 'sk-wrong-secret-0000' }).stream(ask('x')));
    expect(wrong).toMatchObject({ code: 'upstream_error', details: { status: 401, kind: 'auth' }, message: `${where} refused the credentials (HTTP 401) (invalid_api_key)` });
    expect(wrong.message).not.toContain('sk-wrong-secret-0000');
    fake.script({ status: 429, retryAfterSeconds: 5 });
    expect(await failure(model().stream(ask('x')))).toMatchObject({ retryable: true, details: { status: 429, kind: 'rate_limited', retryAfterSeconds: 5 } });
    expect(await failure(model().stream(ask('x', { model: 'gpt-9' })))).toMatchObject({
      details: { status: 404, kind: 'model_not_found' },
      message: `${where} does not know the model gpt-9 (HTTP 404) (model_not_found)`,
    });
    fake.script({ failed: { code: 'server_error', message: 'The model failed.' } });
    const failed = await failure(model().stream(ask('x')));
    expect(failed).toMatchObject({ code: 'upstream_error', retryable: true, details: { status: 500 } });
    expect(failed.message).not.toContain('The model failed.');
    fake.script({ errorEvent: { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.', nested: true } });
    expect((await failure(model().stream(ask('x')))).details).toMatchObject({ kind: 'context_length' });
  });

  it('goes only through the fetch it is given: a refused address rejects with the policy’s error and the server gets nothing', async () => {
    await expectOnlyThroughFetch((fetch) => model({ fetch }), fake, ask('hi'));
  });

  it('stops the upstream call when aborted mid-stream: the server sees the connection close', async () => {
    fake.script({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 30 });
    await expectAbortClosesUpstream(model(), fake, ask('x'));
  });

  it('lists the models of GET /v1/models', async () => {
    expect(await model().listModels?.()).toEqual(['gpt-4o-mini', 'o4-mini']);
    await expect(model({ apiKey: 'sk-wrong-secret-0000' }).listModels?.()).rejects.toMatchObject({ details: { status: 401, kind: 'auth' } });
  });
});
