import { type ChatRequest, collectChat } from '@agent-platform/core';
import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { aiSdkChatModel, modelFetch } from '../src/ai-sdk/index.js';
import { drain, failure } from './fakes/chat-events.js';

/** One scripted answer of the fake language model: its parts, or a failure of `doStream`, or a hang. */
type Answer = readonly LanguageModelV3StreamPart[] | { readonly fail: unknown } | 'hang';

/** A `LanguageModelV3` that answers from a script and records its call options. */
function scriptedLanguageModel(answers: Answer[]): { model: LanguageModelV3; calls: LanguageModelV3CallOptions[] } {
  const calls: LanguageModelV3CallOptions[] = [];
  const model: LanguageModelV3 = {
    specificationVersion: 'v3',
    provider: 'fake.chat',
    modelId: 'fake-1',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    async doStream(options) {
      calls.push(options);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('no scripted answer left');
      if (answer === 'hang') {
        return new Promise((_, reject) => options.abortSignal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
      }
      if ('fail' in answer) throw answer.fail;
      const parts = [...answer];
      return {
        stream: new ReadableStream({
          pull: (controller) => {
            const part = parts.shift();
            if (part) controller.enqueue(part);
            else controller.close();
          },
        }),
      };
    },
  };
  return { model, calls };
}

const usage = (input: number, output: number, extra: { cacheRead?: number; cacheWrite?: number; reasoning?: number } = {}) => ({
  inputTokens: { total: input, noCache: undefined, cacheRead: extra.cacheRead, cacheWrite: extra.cacheWrite },
  outputTokens: { total: output, text: undefined, reasoning: extra.reasoning },
});
const finish = (unified: 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'other', u = usage(3, 2)): LanguageModelV3StreamPart => ({
  type: 'finish',
  finishReason: { unified, raw: undefined },
  usage: u,
});
const text = (...deltas: string[]): LanguageModelV3StreamPart[] => deltas.map((delta) => ({ type: 'text-delta', id: 't', delta }));
const httpError = (statusCode: number, body: unknown, headers: Record<string, string> = {}) =>
  new APICallError({ message: JSON.stringify(body), url: 'http://fake/v1/messages', requestBodyValues: {}, statusCode, responseHeaders: headers, responseBody: JSON.stringify(body) });

const WHERE = 'Model provider fake (http://fake/v1)';
const make = (answers: Answer[], extra: Partial<Parameters<typeof aiSdkChatModel>[0]> = {}) => {
  const fake = scriptedLanguageModel(answers);
  const model = aiSdkChatModel({ provider: 'fake', where: WHERE, upstream: 'http://fake/v1', model: () => fake.model, maxRetries: 0, secrets: ['sk-fake-secret'], ...extra });
  return { model, calls: fake.calls };
};
const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'fake-1', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('aiSdkChatModel', () => {
  it('maps the request onto the call options: prompt, tools, tool choice, settings, response format, provider options', async () => {
    const { model, calls } = make([[...text('ok'), finish('stop')]], { parallelToolCalls: (parallel) => ({ disableParallelToolUse: !parallel }), capabilities: { strictTools: true } });
    await collectChat(
      model.stream({
        model: 'fake-1',
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            ],
          },
          { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"word":"cat"}' }] },
          { role: 'tool', toolCallId: 'call_1', content: 'a small feline' },
        ],
        tools: [{ name: 'lookup', description: 'Looks a word up', parameters: { type: 'object' }, strict: true }],
        toolChoice: { name: 'lookup' },
        parallelToolCalls: false,
        temperature: 0.5,
        maxTokens: 100,
        topP: 0.9,
        seed: 7,
        stop: ['END'],
        responseFormat: { type: 'json_schema', name: 'thing', schema: { type: 'object' } },
        providerOptions: { thinking: { type: 'enabled', budgetTokens: 1024 } },
      }),
    );
    const { abortSignal, ...sent } = calls[0] as LanguageModelV3CallOptions;
    expect(abortSignal).toBeInstanceOf(AbortSignal);
    expect(sent).toEqual({
      prompt: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup', input: { word: 'cat' } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'lookup', output: { type: 'text', value: 'a small feline' } }] },
      ],
      tools: [{ type: 'function', name: 'lookup', description: 'Looks a word up', inputSchema: { type: 'object' }, strict: true }],
      toolChoice: { type: 'tool', toolName: 'lookup' },
      temperature: 0.5,
      maxOutputTokens: 100,
      topP: 0.9,
      seed: 7,
      stopSequences: ['END'],
      responseFormat: { type: 'json', schema: { type: 'object' }, name: 'thing' },
      providerOptions: { fake: { thinking: { type: 'enabled', budgetTokens: 1024 }, disableParallelToolUse: true } },
    });
  });

  it('turns the stream parts into events: text, reasoning apart, whole tool calls, one finish with usage incl. cache and reasoning tokens', async () => {
    const { model } = make([
      [
        { type: 'stream-start', warnings: [] },
        { type: 'reasoning-delta', id: 'r', delta: 'Think.' },
        ...text('Let me ', '', 'check.'),
        { type: 'tool-input-start', id: 'c1', toolName: 'a' },
        { type: 'tool-input-delta', id: 'c1', delta: '{"x":' },
        { type: 'tool-input-delta', id: 'c1', delta: '1}' },
        { type: 'tool-input-end', id: 'c1' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: '{"x":1}' },
        // Fragments without a whole call: assembled at the finish.
        { type: 'tool-input-start', id: 'c2', toolName: 'b' },
        { type: 'tool-input-delta', id: 'c2', delta: '{"y":2}' },
        finish('tool-calls', usage(30, 12, { cacheRead: 20, cacheWrite: 5, reasoning: 4 })),
      ],
    ]);
    expect(await drain(model.stream(ask()))).toEqual([
      { type: 'reasoning', delta: 'Think.' },
      { type: 'text', delta: 'Let me ' },
      { type: 'text', delta: 'check.' },
      { type: 'tool_call', call: { id: 'c1', name: 'a', arguments: '{"x":1}' } },
      { type: 'tool_call', call: { id: 'c2', name: 'b', arguments: '{"y":2}' } },
      { type: 'finish', reason: 'tool_calls', usage: { promptTokens: 30, completionTokens: 12, totalTokens: 42, cachedPromptTokens: 20, cacheWritePromptTokens: 5, reasoningTokens: 4 } },
    ]);
  });

  it('gives the reasoning blocks whole with their provider metadata at the finish, and sends an assistant message’s back as reasoning parts where asked (sendReasoning)', async () => {
    const signed = { anthropic: { signature: 'sig-1' } };
    const { model, calls } = make(
      [
        [
          { type: 'reasoning-start', id: '0' },
          { type: 'reasoning-delta', id: '0', delta: 'First ' },
          { type: 'reasoning-delta', id: '0', delta: 'thought.' },
          { type: 'reasoning-delta', id: '0', delta: '', providerMetadata: signed },
          { type: 'reasoning-end', id: '0' },
          { type: 'reasoning-start', id: '1', providerMetadata: { anthropic: { redactedData: 'opaque' } } },
          { type: 'reasoning-end', id: '1' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: '{}' },
          finish('tool-calls'),
        ],
        [...text('done'), finish('stop')],
      ],
      { sendReasoning: true },
    );
    const events = await drain(model.stream(ask()));
    const blocks = [
      { text: 'First thought.', metadata: signed },
      { text: '', metadata: { anthropic: { redactedData: 'opaque' } } },
    ];
    expect(events.at(-1)).toMatchObject({ type: 'finish', reason: 'tool_calls', reasoning: blocks });
    // No empty reasoning event for the signature or the redacted block.
    expect(events.filter((e) => e.type === 'reasoning')).toEqual([
      { type: 'reasoning', delta: 'First ' },
      { type: 'reasoning', delta: 'thought.' },
    ]);

    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', name: 'a', arguments: '{}' }], reasoning: blocks },
      { role: 'tool', toolCallId: 'c1', content: 'ok' },
    ];
    await drain(model.stream(ask({ messages })));
    expect(calls[1]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'First thought.', providerOptions: signed },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: {} },
      ],
    });
    // By default (a provider that may refuse them) they are neither given nor sent.
    const plain = make([[{ type: 'reasoning-delta', id: '0', delta: 'Hmm.', providerMetadata: signed }, ...text('done'), finish('stop')]]);
    expect((await drain(plain.model.stream(ask({ messages })))).at(-1)).not.toHaveProperty('reasoning');
    expect(plain.calls[0]?.prompt[1]).toEqual({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'a', input: {} }] });
  });

  it('maps the finish reasons, and fails a stream that ends without a finish', async () => {
    for (const [unified, ours] of [
      ['stop', 'stop'],
      ['other', 'stop'],
      ['length', 'length'],
      ['content-filter', 'content_filter'],
      ['tool-calls', 'tool_calls'],
    ] as const) {
      const { model } = make([[...text('x'), finish(unified)]]);
      expect((await collectChat(model.stream(ask()))).finishReason).toBe(ours);
    }
    for (const parts of [text('half')]) {
      const { model } = make([parts]);
      expect(await failure(model.stream(ask()))).toMatchObject({ code: 'upstream_error', message: `${WHERE} ended the stream before the answer was finished` });
    }
  });

  it('maps error answers to upstream_errors with their kind, never the secret or the provider’s text', async () => {
    const cases = [
      [
        httpError(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key sk-fake-secret' } }),
        { status: 401, kind: 'auth' },
        `${WHERE} refused the credentials (HTTP 401) (authentication_error)`,
      ],
      [
        httpError(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '17' }),
        { status: 429, kind: 'rate_limited', retryAfterSeconds: 17 },
        `${WHERE} is rate limiting requests (HTTP 429) (rate_limit_error); retry after 17 s`,
      ],
      [
        httpError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' } }),
        { status: 400, kind: 'context_length' },
        `${WHERE} refused the request: the prompt is too long for the model fake-1 (HTTP 400) (invalid_request_error)`,
      ],
      [
        httpError(404, { type: 'error', error: { type: 'not_found_error', message: 'model: fake-1' } }),
        { status: 404, kind: 'model_not_found' },
        `${WHERE} does not know the model fake-1 (HTTP 404) (not_found_error)`,
      ],
      [httpError(500, { type: 'error', error: { type: 'api_error', message: 'boom' } }), { status: 500 }, `${WHERE} answered HTTP 500 (api_error)`],
    ] as const;
    for (const [error, details, message] of cases) {
      const { model } = make([{ fail: error }]);
      const mapped = await failure(model.stream(ask()));
      expect(mapped).toMatchObject({ code: 'upstream_error', message, details: { provider: 'fake', upstream: 'http://fake/v1', ...details } });
      expect(JSON.stringify([mapped.message, mapped.details])).not.toMatch(/sk-fake-secret|slow down|boom/);
    }
  });

  it('retries a failure before the first event (retry-after honoured), never one after it', async () => {
    const busy = httpError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { 'retry-after': '0' });
    const again = make([{ fail: busy }, [...text('fine'), finish('stop')]], { maxRetries: 1 });
    expect((await collectChat(again.model.stream(ask()))).content).toBe('fine');
    expect(again.calls).toHaveLength(2);
    // A retry-after beyond the cap is the caller's to honour: no retry.
    const later = make([{ fail: httpError(429, {}, { 'retry-after': '3600' }) }], { maxRetries: 2 });
    expect(await failure(later.model.stream(ask()))).toMatchObject({ details: { status: 429, retryAfterSeconds: 3600 } });
    expect(later.calls).toHaveLength(1);
    // Mid-stream, after text: the error as it is, no second call.
    const mid = make(
      [
        [...text('half'), { type: 'error', error: busy }],
        [...text('fine'), finish('stop')],
      ],
      { maxRetries: 1 },
    );
    expect(await failure(mid.model.stream(ask()))).toMatchObject({ code: 'upstream_error', retryable: true, details: { status: 529 } });
    expect(mid.calls).toHaveLength(1);
  });

  it('maps a connection failure to unavailable, a silent upstream to timeout, an abort to aborted', async () => {
    const refused = new APICallError({ message: 'Cannot connect to API', url: 'http://fake', requestBodyValues: {}, cause: new Error('connect ECONNREFUSED 127.0.0.1:9'), isRetryable: true });
    expect(await failure(make([{ fail: refused }]).model.stream(ask()))).toMatchObject({ code: 'unavailable', message: `${WHERE} is unreachable: connect ECONNREFUSED 127.0.0.1:9` });
    const slow = make(['hang'], { timeoutMs: 100 });
    expect(await failure(slow.model.stream(ask()))).toMatchObject({ code: 'timeout', message: `${WHERE} did not answer within 100 ms` });
    expect(slow.calls[0]?.abortSignal?.aborted).toBe(true);
    const controller = new AbortController();
    const hanging = make(['hang']);
    setTimeout(() => controller.abort(), 50);
    expect(await failure(hanging.model.stream(ask({ signal: controller.signal })))).toMatchObject({ code: 'aborted' });
    expect(hanging.calls[0]?.abortSignal?.aborted).toBe(true);
  });
});

describe('modelFetch', () => {
  /** A fetch answering a POST with a stream whose chunks the test pushes, and what the reader got so far. */
  const streaming = (contentType: string) => {
    let push: (bytes: Uint8Array) => void = () => undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (bytes) => controller.enqueue(bytes);
      },
    });
    const fetch = (async () => new Response(body, { headers: { 'content-type': contentType } })) as unknown as typeof globalThis.fetch;
    return { fetch, push: (bytes: Uint8Array) => push(bytes) };
  };
  const LIMIT = { bytes: 16, setting: '--max-model-answer' };
  const binary = (n: number) => new Uint8Array(n).fill(0x41);

  it('with eventBytes false, hands on binary chunks as they come and counts no lines in them; by default a run of bytes without a line end is one event past the limit', async () => {
    const isBinary = (response: Response) => response.headers.get('content-type') === 'application/vnd.amazon.eventstream';
    const upstream = streaming('application/vnd.amazon.eventstream');
    const off = modelFetch({ fetch: upstream.fetch, answerLimit: LIMIT, where: WHERE, streamed: isBinary, eventBytes: false });
    const reader = (await off('http://fake/v1/stream', { method: 'POST' })).body!.getReader();
    // No 0x0a byte in it: still handed on at once, and 40 bytes pass a 16-byte event limit.
    upstream.push(binary(40));
    expect((await reader.read()).value?.byteLength).toBe(40);
    upstream.push(binary(40));
    expect((await reader.read()).value?.byteLength).toBe(40);
    await reader.cancel();

    const counted = streaming('application/vnd.amazon.eventstream');
    const on = modelFetch({ fetch: counted.fetch, answerLimit: LIMIT, where: WHERE, streamed: isBinary });
    const held = (await on('http://fake/v1/stream', { method: 'POST' })).body!.getReader();
    counted.push(binary(40));
    await expect(held.read()).rejects.toMatchObject({
      code: 'upstream_error',
      message: `${WHERE} sent an event larger than 16 bytes, the limit set by --max-model-answer: it was cut off there and not used`,
    });
  });
});
