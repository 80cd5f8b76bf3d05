import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChatEvent, type ChatRequest, collectChat, isPlatformError } from '@agent-platform/core';
import { describeChatModel } from '@agent-platform/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openaiChatModel } from '../src/openai.js';
import { type FakeChatServer, startFakeChatServer } from './openai-chat-server.js';

let fake: FakeChatServer;
beforeAll(async () => {
  fake = await startFakeChatServer({ apiKey: 'sk-test' });
});
afterAll(async () => {
  await fake.close();
});

describeChatModel('openai (loopback server speaking /v1/chat/completions)', {
  create: () => openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 }),
  model: 'gpt-4o-mini',
  scripted: { next: (reply) => fake.script(reply) },
});

// An OpenAI-compatible reasoning server (DeepSeek, vLLM): it streams its reasoning unasked, as `reasoning_content`.
describeChatModel('openai-compatible reasoning server (loopback, reasoning_content deltas)', {
  create: () => openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0, capabilities: { reasoning: true } }),
  model: 'deepseek-reasoner',
  scripted: { next: (reply) => fake.script(reply) },
  reasoning: { providerOptions: {} },
});

const drain = async (events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> => {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
};
const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const failure = async (events: AsyncIterable<ChatEvent>): Promise<Error & { code?: string; retryable?: boolean; details?: Record<string, unknown> }> => {
  try {
    await drain(events);
  } catch (error) {
    expect(isPlatformError(error)).toBe(true);
    return error as Error & { code?: string };
  }
  throw new Error('expected the stream to fail');
};

/** A server that answers every request with this SSE body (one event per item, `data: ` added), for wire shapes the fake does not make. */
async function sseServer(events: readonly (string | Record<string, unknown>)[], seen?: IncomingMessage[]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    seen?.push(req);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of events) res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-raw',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason }],
  ...extra,
});

describe('openaiChatModel', () => {
  const model = () => openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
  beforeEach(() => {
    fake.reset();
  });

  it('sends the conversation, tools and settings in OpenAI’s format, streaming with usage', async () => {
    const m = model();
    expect(m.provider).toBe('openai');
    const result = await collectChat(
      m.stream({
        model: 'gpt-4o-mini',
        temperature: 0.2,
        maxTokens: 300,
        tools: [{ name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } }],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Define cat' },
          { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"word":"cat"}' }] },
          { role: 'tool', toolCallId: 'call_1', content: 'a small feline' },
          { role: 'assistant', content: 'A cat is a small feline.' },
          { role: 'user', content: 'And a dog?' },
        ],
      }),
    );
    expect(result.content).toBe('You said: And a dog?');
    const sent = fake.lastRequest();
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.authorization).toBe('Bearer sk-test');
    expect(sent?.status).toBe(200);
    expect(sent?.body).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Define cat' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"word":"cat"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'a small feline' },
        { role: 'assistant', content: 'A cat is a small feline.' },
        { role: 'user', content: 'And a dog?' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } } } }],
      temperature: 0.2,
      max_tokens: 300,
    });
    // No settings given: none sent (the server's defaults apply); no empty tools list.
    await collectChat(m.stream(ask('hi', { tools: [] })));
    expect(fake.lastRequest()?.body).toEqual({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
  });

  it('sends max_completion_tokens when asked to (OpenAI reasoning models reject max_tokens)', async () => {
    const error = await failure(model().stream(ask('hi', { model: 'o3-mini', maxTokens: 50 })));
    expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 400 } });
    expect(error.message).toMatch(/HTTP 400 \(unsupported_parameter\)$/);
    const reasoning = openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, maxTokensField: 'max_completion_tokens' });
    expect((await collectChat(reasoning.stream(ask('hi', { model: 'o3-mini', maxTokens: 50 })))).content).toBe('You said: hi');
    expect(fake.lastRequest()?.body).toMatchObject({ max_completion_tokens: 50 });
    expect(fake.lastRequest()?.body).not.toHaveProperty('max_tokens');
  });

  it('sends tool_choice, parallel_tool_calls, strict and the sampling settings as OpenAI names them, and says it honours them', async () => {
    const m = model();
    expect(m.capabilities).toEqual({ toolChoice: true, parallelToolCalls: true, strictTools: true, images: true, structuredOutputs: true });
    const tools = [{ name: 'lookup', description: 'Looks a word up', parameters: { type: 'object', properties: { word: { type: 'string' } } }, strict: true }];
    fake.script({ toolCalls: [{ name: 'lookup', arguments: { word: 'cat' } }] });
    const result = await collectChat(
      m.stream(ask('Define cat', { tools, toolChoice: { name: 'lookup' }, parallelToolCalls: false, topP: 0.5, frequencyPenalty: 0.25, presencePenalty: -0.5, seed: 42, stop: ['END', '###'] })),
    );
    expect(result.toolCalls).toMatchObject([{ name: 'lookup', arguments: '{"word":"cat"}' }]);
    expect(fake.lastRequest()?.status).toBe(200);
    expect(fake.lastRequest()?.body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'lookup', strict: true } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      parallel_tool_calls: false,
      top_p: 0.5,
      frequency_penalty: 0.25,
      presence_penalty: -0.5,
      seed: 42,
      stop: ['END', '###'],
    });
    await collectChat(m.stream(ask('hi', { tools, toolChoice: 'required' })));
    expect(fake.lastRequest()?.body).toMatchObject({ tool_choice: 'required' });
    // Without tools there is nothing to choose among: OpenAI refuses tool_choice and parallel_tool_calls alone.
    await collectChat(m.stream(ask('hi', { toolChoice: 'required', parallelToolCalls: false })));
    expect(fake.lastRequest()?.status).toBe(200);
    expect(Object.keys(fake.lastRequest()?.body ?? {})).toEqual(['model', 'messages', 'stream', 'stream_options']);
    // A server that lacks them says so, through the option (Ollama's model sets it).
    expect(openaiChatModel({ baseURL: fake.url, capabilities: { toolChoice: true } }).capabilities).toEqual({ toolChoice: true });
  });

  it('assembles tool calls streamed in fragments (arguments split across chunks)', async () => {
    const args = { city: 'Zürich', days: 3, units: 'metric', note: 'a "quoted" text, with commas' };
    fake.script({
      toolCalls: [
        { name: 'forecast', arguments: args, id: 'call_A' },
        { name: 'alerts', arguments: '{"region":"CH"}' },
      ],
    });
    const events = await drain(
      model().stream(
        ask('weather?', {
          tools: [
            { name: 'forecast', description: '', parameters: {} },
            { name: 'alerts', description: '', parameters: {} },
          ],
        }),
      ),
    );
    const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
    expect(calls).toHaveLength(2);
    expect(calls[0]).toEqual({ id: 'call_A', name: 'forecast', arguments: JSON.stringify(args) });
    expect(calls[1]?.name).toBe('alerts');
    expect(calls[1]?.arguments).toBe('{"region":"CH"}');
    expect(calls[1]?.id).toMatch(/^call_/);
    expect(events.map((e) => e.type)).toEqual(['tool_call', 'tool_call', 'finish']);
    expect(events[2]).toMatchObject({ type: 'finish', reason: 'tool_calls' });
  });

  it('assembles interleaved fragments by index, gives ids to calls without one, and tolerates servers that omit index', async () => {
    const raw = await sseServer([
      chunk({ role: 'assistant', content: 'Let me check. ' }),
      chunk({ tool_calls: [{ index: 1, id: 'call_B', type: 'function', function: { name: 'second', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_A', type: 'function', function: { name: 'first', arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"b":2}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({ tool_calls: [{ index: 2, type: 'function', function: { name: 'third', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ]);
    try {
      const events = await drain(openaiChatModel({ baseURL: raw.url, maxRetries: 0 }).stream(ask('x')));
      expect(events[0]).toEqual({ type: 'text', delta: 'Let me check. ' });
      const calls = events.flatMap((e) => (e.type === 'tool_call' ? [e.call] : []));
      expect(calls.map((c) => [c.id.startsWith('call_') ? (c.name === 'third' ? 'generated' : c.id) : c.id, c.name, c.arguments])).toEqual([
        ['call_A', 'first', '{"a":1}'],
        ['call_B', 'second', '{"b":2}'],
        ['generated', 'third', '{}'],
      ]);
      expect(events[events.length - 1]).toEqual({ type: 'finish', reason: 'tool_calls' });
    } finally {
      await raw.close();
    }
    // Whole calls without `index` (some OpenAI-compatible servers), and a finish_reason of `stop` with tool calls.
    const noIndex = await sseServer([
      chunk({ role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'a', arguments: '{"x":1}' } }] }),
      chunk({ tool_calls: [{ id: 'call_2', type: 'function', function: { name: 'b', arguments: '{"y":2}' } }] }),
      chunk({}, 'stop'),
      '[DONE]',
    ]);
    try {
      const result = await collectChat(openaiChatModel({ baseURL: noIndex.url, maxRetries: 0 }).stream(ask('x')));
      expect(result.toolCalls).toEqual([
        { id: 'call_1', name: 'a', arguments: '{"x":1}' },
        { id: 'call_2', name: 'b', arguments: '{"y":2}' },
      ]);
      expect(result.finishReason).toBe('tool_calls');
    } finally {
      await noIndex.close();
    }
  });

  it('sends image parts as image_url data URLs and responseFormat as response_format', async () => {
    await collectChat(
      model().stream({
        model: 'gpt-4o-mini',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            ],
          },
        ],
        responseFormat: { type: 'json_schema', name: 'thing', description: 'What it is', schema: { type: 'object' }, strict: true },
      }),
    );
    expect(fake.lastRequest()?.status).toBe(200);
    expect(fake.lastRequest()?.body).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      response_format: { type: 'json_schema', json_schema: { name: 'thing', description: 'What it is', schema: { type: 'object' }, strict: true } },
    });
    await collectChat(model().stream(ask('json please', { responseFormat: { type: 'json_object' } })));
    expect(fake.lastRequest()?.body).toMatchObject({ response_format: { type: 'json_object' } });
  });

  it('maps finish reasons: stop, length, tool_calls, function_call → tool_calls, content_filter', async () => {
    const cases = [
      ['stop', 'stop'],
      ['length', 'length'],
      ['tool_calls', 'tool_calls'],
      ['function_call', 'tool_calls'],
      ['content_filter', 'content_filter'],
    ] as const;
    for (const [upstream, ours] of cases) {
      fake.script({ text: 'Some text', finishReason: upstream });
      const result = await collectChat(model().stream(ask('x')));
      expect([upstream, result.finishReason]).toEqual([upstream, ours]);
      expect(result.content).toBe('Some text');
    }
  });

  it('reads reasoning from reasoning_content (DeepSeek, vLLM) or reasoning (newer vLLM, Ollama) deltas as reasoning events, apart from the text', async () => {
    for (const reasoningField of ['reasoning_content', 'reasoning'] as const) {
      fake.script({ reasoning: 'Two and two make four.', reasoningField, text: 'Four.' });
      const events = await drain(model().stream(ask('2+2?')));
      expect(events.filter((e) => e.type === 'reasoning').map((e) => (e.type === 'reasoning' ? e.delta : ''))).toEqual(['Two ', 'and ', 'two ', 'make ', 'four.']);
      expect(
        await collectChat(
          (async function* () {
            yield* events;
          })(),
        ),
      ).toMatchObject({ content: 'Four.', reasoning: 'Two and two make four.' });
    }
    // A server sending both fields with the same text (vLLM while it renamed the field) is read once.
    const server = await sseServer([chunk({ reasoning_content: 'Hmm.', reasoning: 'Hmm.' }), chunk({ content: 'Yes.' }, 'stop'), '[DONE]']);
    try {
      expect(await collectChat(openaiChatModel({ baseURL: server.url, maxRetries: 0 }).stream(ask('x')))).toMatchObject({ content: 'Yes.', reasoning: 'Hmm.' });
    } finally {
      await server.close();
    }
  });

  it('reports usage from the last chunk, and none when the server gives none', async () => {
    fake.script({ text: 'Counted.', usage: { promptTokens: 7, completionTokens: 2, totalTokens: 9 } });
    const events = await drain(model().stream(ask('count')));
    expect(events[events.length - 1]).toEqual({ type: 'finish', reason: 'stop', usage: { promptTokens: 7, completionTokens: 2, totalTokens: 9 } });
    fake.script({ text: 'No usage.', usage: null });
    const without = await drain(model().stream(ask('count')));
    expect(without[without.length - 1]).toEqual({ type: 'finish', reason: 'stop' });
    // Default: counted by the server.
    const counted = await collectChat(model().stream(ask('one two three')));
    expect(counted.usage?.promptTokens).toBeGreaterThan(0);
    expect(counted.usage?.totalTokens).toBe((counted.usage?.promptTokens ?? 0) + (counted.usage?.completionTokens ?? 0));
  });

  it('maps an upstream 500 to a retryable upstream_error naming the server, the status and its error type, never its text', async () => {
    fake.script({ status: 500 });
    const error = await failure(model().stream(ask('x')));
    expect(error).toMatchObject({ code: 'upstream_error', retryable: true, details: { provider: 'openai', upstream: fake.url, status: 500 } });
    expect(error.message).toBe(`Model provider openai (${fake.url}) answered HTTP 500 (server_error)`);
    fake.script({ status: 503 }, { status: 429 }, { status: 400, errorMessage: 'bad input' });
    await expect(drain(model().stream(ask('x')))).rejects.toMatchObject({ code: 'upstream_error', retryable: true, details: { status: 503 } });
    await expect(drain(model().stream(ask('x')))).rejects.toMatchObject({ code: 'upstream_error', retryable: true, details: { status: 429 } });
    const bad = await failure(model().stream(ask('x')));
    expect(bad).toMatchObject({ code: 'upstream_error', retryable: false, message: expect.stringMatching(/HTTP 400 \(invalid_request_error\)$/) });
    expect(bad.message).not.toContain('bad input');
  });

  it('classifies a 429 as rate_limited with the wait its retry-after-ms or retry-after asks for', async () => {
    fake.script({ status: 429 });
    const limited = await failure(model().stream(ask('x')));
    expect(limited).toMatchObject({ code: 'upstream_error', retryable: true, details: { provider: 'openai', status: 429, kind: 'rate_limited', retryAfterSeconds: 1 } });
    expect(limited.message).toBe(`Model provider openai (${fake.url}) is rate limiting requests (HTTP 429) (rate_limit_exceeded); retry after 1 s`);
    fake.script({ status: 429, errorHeaders: { 'retry-after': '7' } });
    expect((await failure(model().stream(ask('x')))).details).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 7 });
    fake.script({ status: 429, errorHeaders: { 'retry-after': new Date(Date.now() + 30_000).toUTCString() } });
    const dated = (await failure(model().stream(ask('x')))).details?.retryAfterSeconds as number;
    expect(dated).toBeGreaterThanOrEqual(28);
    expect(dated).toBeLessThanOrEqual(31);
    fake.script({ status: 429, errorHeaders: {} });
    const bare = await failure(model().stream(ask('x')));
    expect(bare.details).toMatchObject({ kind: 'rate_limited' });
    expect(bare.details).not.toHaveProperty('retryAfterSeconds');
  });

  it('classifies refused credentials (401, 403) as auth, and other statuses as no kind', async () => {
    fake.script({ status: 403 });
    const forbidden = await failure(model().stream(ask('x')));
    expect(forbidden).toMatchObject({ details: { status: 403, kind: 'auth' }, message: `Model provider openai (${fake.url}) refused the credentials (HTTP 403) (invalid_request_error)` });
    const wrong = await failure(openaiChatModel({ apiKey: 'sk-wrong', baseURL: fake.url, maxRetries: 0 }).stream(ask('x')));
    expect(wrong.details).toMatchObject({ status: 401, kind: 'auth' });
    fake.script({ status: 500 }, { status: 400 });
    expect((await failure(model().stream(ask('x')))).details).not.toHaveProperty('kind');
    expect((await failure(model().stream(ask('x')))).details).not.toHaveProperty('kind');
  });

  it('classifies an unknown model (model_not_found) and a prompt too long (context_length_exceeded), naming the model', async () => {
    const strict = await startFakeChatServer({ apiKey: 'sk-test', models: ['gpt-4o-mini'], contextTokens: 30 });
    try {
      const m = openaiChatModel({ apiKey: 'sk-test', baseURL: strict.url, maxRetries: 0 });
      const unknown = await failure(m.stream(ask('x', { model: 'gpt-9' })));
      expect(unknown).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 404, kind: 'model_not_found' } });
      expect(unknown.message).toBe(`Model provider openai (${strict.url}) does not know the model gpt-9 (HTTP 404) (model_not_found)`);
      const long = await failure(m.stream(ask('word '.repeat(40))));
      expect(long).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 400, kind: 'context_length' } });
      expect(long.message).toBe(`Model provider openai (${strict.url}) refused the request: the prompt is too long for the model gpt-4o-mini (HTTP 400) (context_length_exceeded)`);
      // The prompt that fits is answered.
      expect((await collectChat(m.stream(ask('short')))).content).toBe('You said: short');
    } finally {
      await strict.close();
    }
  });

  it('lets the client retry a failure before the stream starts (maxRetries)', async () => {
    fake.script({ status: 503 });
    const result = await collectChat(openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 1 }).stream(ask('again')));
    expect(result.content).toBe('You said: again');
    expect(fake.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('maps a 401 to an upstream_error that says the credentials were refused, without the key', async () => {
    const wrong = openaiChatModel({ apiKey: 'sk-wrong-secret-key', baseURL: fake.url, maxRetries: 0 });
    const error = await failure(wrong.stream(ask('x')));
    expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 401 } });
    expect(error.message).toBe(`Model provider openai (${fake.url}) refused the credentials (HTTP 401) (invalid_api_key)`);
    expect(error.message).not.toContain('sk-wrong-secret-key');
    // Without a key no Authorization header is sent, and the message says so.
    const none = openaiChatModel({ baseURL: fake.url, maxRetries: 0 });
    const noKey = await failure(none.stream(ask('x')));
    expect(noKey.message).toMatch(/refused the credentials \(HTTP 401\).*\(no API key was configured\)$/);
    expect(noKey.message).not.toContain("You didn't provide");
    expect(fake.lastRequest()?.authorization).toBeUndefined();
  });

  it('lists the models of GET /models with its key; a wrong key is the 401 the server answered; an aborted signal aborts', async () => {
    expect(await model().listModels?.()).toEqual(['gpt-4o-mini', 'gpt-4o', 'llama3.2']);
    const wrong = openaiChatModel({ apiKey: 'sk-wrong-secret-key', baseURL: fake.url, maxRetries: 0 });
    const error = await wrong.listModels?.().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'upstream_error', details: { status: 401 }, message: expect.stringContaining('refused the credentials (HTTP 401) (invalid_api_key)') });
    expect((error as Error).message).not.toContain('Incorrect API key');
    expect((error as Error).message).not.toContain('sk-wrong-secret-key');
    await expect(model().listModels?.({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'aborted' });
    // A server whose answer is not a model list says so.
    const elsewhere = openaiChatModel({ apiKey: 'sk-test', baseURL: `${fake.url}/models/gpt-4o`, maxRetries: 0 });
    await expect(elsewhere.listModels?.()).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringContaining('with an unexpected shape') });
  });

  it('never shows the API key, even when the server echoes it', async () => {
    const key = 'sk-live-0123456789abcdef';
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `Rejected header: ${req.headers.authorization}`, type: 'invalid_request_error', param: null, code: null } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const error = await failure(
        openaiChatModel({ apiKey: key, baseURL: `http://user:pass@127.0.0.1:${port}/v1?tenant=1`, maxRetries: 0, fetch: (url, init) => fetch(String(url).replace('user:pass@', ''), init) }).stream(
          ask('x'),
        ),
      );
      // Neither the server's text (which echoes the key) nor the key: the status and the error type.
      expect(error.message).toBe(`Model provider openai (http://127.0.0.1:${port}/v1) answered HTTP 400 (invalid_request_error)`);
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toMatch(/0123456789abcdef|pass/);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reports a server that refuses connections as unavailable (503 at the edge)', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const error = await failure(openaiChatModel({ baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 }).stream(ask('x')));
    expect(error).toMatchObject({ code: 'unavailable', retryable: true });
    expect(error.message).toMatch(new RegExp(`^Model provider openai \\(http://127\\.0\\.0\\.1:${port}/v1\\) is unreachable: .*ECONNREFUSED`));
  });

  it('maps a server that does not answer to a timeout', async () => {
    fake.script({ hang: true });
    const started = Date.now();
    const error = await failure(openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, timeoutMs: 300, maxRetries: 0 }).stream(ask('x')));
    expect(error).toMatchObject({ code: 'timeout', retryable: true });
    expect(error.message).toBe(`Model provider openai (${fake.url}) did not answer within 300 ms`);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('maps a stream that stalls to a timeout, after the text that came', async () => {
    fake.script({ text: 'one two three four five', stallAfterChunks: 3 });
    const seen: ChatEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of openaiChatModel({ apiKey: 'sk-test', baseURL: fake.url, timeoutMs: 300, maxRetries: 0 }).stream(ask('x'))) seen.push(event);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'timeout', message: `Model provider openai (${fake.url}) stopped streaming: no data for 300 ms` });
    expect(seen).toEqual([
      { type: 'text', delta: 'one ' },
      { type: 'text', delta: 'two ' },
    ]);
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('maps a malformed event, an {error} event, a dropped connection and a stream without finish_reason to upstream_errors', async () => {
    fake.script({ text: 'a b c d', malformed: true });
    const malformed = await failure(model().stream(ask('x')));
    expect(malformed).toMatchObject({ code: 'upstream_error', message: expect.stringMatching(/^Model provider openai \(.*\) sent a malformed event stream/) });

    fake.script({ text: 'a b c d', streamError: 'The model crashed.' });
    const inStream = await failure(model().stream(ask('x')));
    expect(inStream).toMatchObject({ code: 'upstream_error', message: `Model provider openai (${fake.url}) reported an error mid-stream (server_error)` });

    fake.script({ text: 'a b c d', dropAfterChunks: 3 });
    const dropped = await failure(model().stream(ask('x')));
    expect(dropped).toMatchObject({ code: 'upstream_error', retryable: true, message: expect.stringMatching(/is unreachable: the connection broke mid-stream/) });

    const unfinished = await sseServer([chunk({ role: 'assistant', content: 'half an ans' })]);
    try {
      const error = await failure(openaiChatModel({ baseURL: unfinished.url, maxRetries: 0 }).stream(ask('x')));
      expect(error.message).toMatch(/ended the stream before the answer was finished/);
    } finally {
      await unfinished.close();
    }
  });

  it('stops reading when aborted mid-stream: the server sees the connection close', async () => {
    fake.script({ text: Array.from({ length: 50 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 30 });
    const controller = new AbortController();
    const seen: ChatEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of model().stream(ask('x', { signal: controller.signal }))) {
        seen.push(event);
        if (seen.length === 2) controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'aborted' });
    expect(seen).toHaveLength(2);
    const record = fake.lastRequest();
    expect(await record?.ended).toBe('client_closed');
  });

  it('closes the connection when the consumer leaves the stream early', async () => {
    fake.script({ text: Array.from({ length: 50 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 30 });
    for await (const event of model().stream(ask('x'))) {
      if (event.type === 'text') break;
    }
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('yields text as it arrives, without buffering', async () => {
    fake.script({ text: 'one two three four five', chunkDelayMs: 100 });
    const started = Date.now();
    const times: { type: string; at: number }[] = [];
    for await (const event of model().stream(ask('x'))) times.push({ type: event.type, at: Date.now() - started });
    const text = times.filter((t) => t.type === 'text');
    expect(text).toHaveLength(5);
    const first = text[0]?.at ?? 0;
    const last = text[4]?.at ?? 0;
    // Five chunks 100 ms apart: the first arrives long before the last.
    expect(last - first).toBeGreaterThanOrEqual(250);
    expect(first).toBeLessThan(last - 250);
  });

  it('validates its options', () => {
    expect(() => openaiChatModel({ timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => openaiChatModel({ maxRetries: -1 })).toThrow(/maxRetries/);
    expect(openaiChatModel({ provider: 'vllm' }).provider).toBe('vllm');
  });
});
