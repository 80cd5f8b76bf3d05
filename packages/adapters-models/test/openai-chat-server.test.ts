import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from './openai-chat-server.js';

let fake: FakeChatServer;
beforeAll(async () => {
  fake = await startFakeChatServer({ apiKey: 'sk-test' });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const post = (body: unknown, key = 'sk-test') =>
  fetch(`${fake.url}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const user = (content: string) => [{ role: 'user', content }];
type ErrorBody = { error: { message: string; type: string; param: string | null; code: string | null } };

/** The `data:` payloads of an SSE body. */
const dataOf = (sse: string) =>
  sse
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice('data: '.length);
    });

describe('the loopback chat server', () => {
  it('answers JSON in OpenAI’s documented shape, which the official client reads', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'You said: hello there' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) },
    });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(Number.isInteger(completion.created)).toBe(true);

    fake.script({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] });
    const withTools = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'weather in Oslo?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
    });
    expect(withTools.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
    });
    expect(withTools.choices[0]?.message.tool_calls?.[0]?.id).toMatch(/^call_/);
  });

  it('streams chunks: a role chunk, words, tool-call fragments, a finish chunk, a usage chunk with no choices, then [DONE]', async () => {
    fake.script({ text: 'Hello big world', toolCalls: [{ name: 'lookup', arguments: '{"q":"long enough text"}', id: 'call_X' }] });
    const res = await post({ model: 'gpt-4o-mini', messages: user('x'), stream: true, stream_options: { include_usage: true }, tools: [{ type: 'function', function: { name: 'lookup' } }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const data = dataOf(await res.text());
    expect(data[data.length - 1]).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as Record<string, any>);
    for (const c of chunks) {
      expect(c).toMatchObject({ object: 'chat.completion.chunk', model: 'gpt-4o-mini' });
      expect(c.id).toBe(chunks[0]?.id);
      expect(c).toHaveProperty('usage');
    }
    const deltas = chunks.flatMap((c) => (c.choices as any[]).map((choice) => choice.delta));
    expect(deltas[0]).toMatchObject({ role: 'assistant' });
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Hello big world');
    expect(deltas.filter((d) => typeof d.content === 'string' && d.content !== '')).toHaveLength(3);
    const fragments = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(fragments[0]).toEqual({ index: 0, id: 'call_X', type: 'function', function: { name: 'lookup', arguments: '' } });
    expect(fragments.length).toBeGreaterThan(2);
    expect(fragments.slice(1).every((f: any) => f.id === undefined && f.function.name === undefined)).toBe(true);
    expect(fragments.map((f: any) => f.function.arguments).join('')).toBe('{"q":"long enough text"}');
    const finishes = chunks.flatMap((c) => (c.choices as any[]).filter((choice) => choice.finish_reason !== null));
    expect(finishes).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]);
    const last = chunks[chunks.length - 1];
    expect(last?.choices).toEqual([]);
    expect(last?.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('sends no usage chunk (and no usage fields) without include_usage', async () => {
    const res = await post({ model: 'gpt-4o-mini', messages: user('x'), stream: true });
    const chunks = dataOf(await res.text())
      .slice(0, -1)
      .map((d) => JSON.parse(d) as Record<string, unknown>);
    expect(chunks.every((c) => Array.isArray(c.choices) && c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('records every request, and echoes the last user message or the last tool result by default', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
    const answer = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'ctx' },
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    expect(answer.choices[0]?.message.content).toBe('The tool get_weather returned: sunny');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.body.messages).toHaveLength(4);
    await post({ messages: user('x') });
    expect(fake.requests).toHaveLength(2);
    expect(fake.lastRequest()?.status).toBe(400);
  });

  it('uses the reply option when nothing is scripted', async () => {
    const custom = await startFakeChatServer({ reply: (body) => ({ text: `model=${String(body.model)}` }) });
    try {
      const client = new OpenAI({ apiKey: 'any', baseURL: custom.url, maxRetries: 0 });
      const answer = await client.chat.completions.create({ model: 'm1', messages: [{ role: 'user', content: 'x' }] });
      expect(answer.choices[0]?.message.content).toBe('model=m1');
    } finally {
      await custom.close();
    }
  });

  it('rejects what OpenAI rejects, with OpenAI’s error body', async () => {
    const cases: [unknown, number, RegExp, string | null][] = [
      ['{not json', 400, /could not parse the JSON body/, null],
      [{ messages: user('x') }, 400, /you must provide a model parameter/, null],
      [{ model: 'm' }, 400, /Missing required parameter: 'messages'/, 'messages'],
      [{ model: 'm', messages: [] }, 400, /empty array/, 'messages'],
      [{ model: 'm', messages: [{ role: 'robot', content: 'x' }] }, 400, /Invalid value: 'robot'/, 'messages[0].role'],
      [{ model: 'm', messages: [{ role: 'user' }] }, 400, /Missing required parameter: 'messages\[0\].content'/, 'messages[0].content'],
      [{ model: 'm', messages: [{ role: 'tool', tool_call_id: 'c1', content: 'x' }] }, 400, /must be a response to a preceeding message with 'tool_calls'/, 'messages.[0].role'],
      [
        { model: 'm', messages: [...user('x'), { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, ...user('y')] },
        400,
        /did not have response messages: c1/,
        'messages.[1].role',
      ],
      [
        { model: 'm', messages: [{ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: {} } }] }] },
        400,
        /expected a string, but got an object/,
        'messages[0].tool_calls[0].function.arguments',
      ],
      [{ model: 'm', messages: user('x'), tools: [] }, 400, /empty array/, 'tools'],
      [{ model: 'm', messages: user('x'), tools: [{ type: 'function', function: { name: 'bad name' } }] }, 400, /does not match pattern/, 'tools[0].function.name'],
      [{ model: 'm', messages: user('x'), tool_choice: 'auto' }, 400, /only allowed when 'tools' are specified/, 'tool_choice'],
      [{ model: 'm', messages: user('x'), temperature: 3 }, 400, /Expected a value <= 2/, 'temperature'],
      [{ model: 'm', messages: user('x'), max_tokens: 0 }, 400, /Expected a value >= 1/, 'max_tokens'],
      [{ model: 'm', messages: user('x'), stream_options: { include_usage: true } }, 400, /only allowed when 'stream' is enabled/, 'stream_options'],
      [{ model: 'm', messages: user('x'), colour: 'red' }, 400, /Unrecognized request argument supplied: colour/, null],
    ];
    for (const [body, status, message, param] of cases) {
      const res = await post(body);
      const error = ((await res.json()) as ErrorBody).error;
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), status]);
      expect(error.message).toMatch(message);
      expect(error.type).toBe('invalid_request_error');
      expect(error.param).toBe(param);
      expect(error).toHaveProperty('code');
    }
  });

  it('checks the bearer key when it has one', async () => {
    const none = await fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(none.status).toBe(401);
    expect(((await none.json()) as ErrorBody).error.message).toMatch(/^You didn't provide an API key/);
    const wrong = await post({ model: 'm', messages: user('x') }, 'sk-nope-1234');
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as ErrorBody).error).toMatchObject({ code: 'invalid_api_key', message: expect.stringMatching(/^Incorrect API key provided: sk-\*\*\*\*1234/) });
    expect((await fetch(`${fake.url}/models`)).status).toBe(401);
  });

  it('lists models, answers unknown routes with 404 and unknown models with model_not_found when it has a list', async () => {
    const list = await fetch(`${fake.url}/models`, { headers: { authorization: 'Bearer sk-test' } });
    expect(await list.json()).toMatchObject({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: expect.any(String) }, { id: 'gpt-4o' }, { id: 'llama3.2' }] });
    const unknownRoute = await fetch(`${fake.url}/completions`, { method: 'POST', headers: { authorization: 'Bearer sk-test' } });
    expect(unknownRoute.status).toBe(404);
    expect(((await unknownRoute.json()) as ErrorBody).error.message).toBe('Invalid URL (POST /v1/completions)');
    const strict = await startFakeChatServer({ models: ['llama3.2:3b'] });
    try {
      const res = await fetch(`${strict.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: user('x') }) });
      expect(res.status).toBe(404);
      expect(((await res.json()) as ErrorBody).error.code).toBe('model_not_found');
      const one = await fetch(`${strict.url}/models/llama3.2:3b`);
      expect(await one.json()).toMatchObject({ id: 'llama3.2:3b', object: 'model' });
    } finally {
      await strict.close();
    }
  });

  it('answers scripted errors with their status and OpenAI’s error body, and delays when asked', async () => {
    fake.script({ status: 429 }, { status: 503, errorMessage: 'overloaded now' }, { text: 'late', delayMs: 150 });
    const limited = await post({ model: 'm', messages: user('x') });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after-ms')).toBe('10');
    expect(((await limited.json()) as ErrorBody).error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    const down = await post({ model: 'm', messages: user('x') });
    expect(((await down.json()) as ErrorBody).error).toMatchObject({ message: 'overloaded now', type: 'server_error' });
    const started = Date.now();
    const late = await post({ model: 'm', messages: user('x') });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(((await late.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content).toBe('late');
    expect(fake.pending).toBe(0);
  });
});
