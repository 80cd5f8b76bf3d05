import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeResponsesServer, startFakeResponsesServer } from './fakes/responses-server.js';

/**
 * The fake Responses API against its documented format, read by the client the adapter uses
 * (`@ai-sdk/openai`'s `.responses(model)`): the event order, the items, usage details and the
 * ways a response fails; and the checks it makes of a request.
 */
let fake: FakeResponsesServer;
beforeAll(async () => {
  fake = await startFakeResponsesServer();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const model = (id = 'gpt-4o-mini', apiKey = 'sk-responses'): LanguageModelV3 => createOpenAI({ baseURL: fake.url, apiKey }).responses(id);
const user = (text: string): LanguageModelV3CallOptions['prompt'] => [{ role: 'user', content: [{ type: 'text', text }] }];

async function run(m: LanguageModelV3, options: Partial<LanguageModelV3CallOptions> = {}): Promise<LanguageModelV3StreamPart[]> {
  const { stream } = await m.doStream({ prompt: user('Hello'), providerOptions: { openai: { store: false } }, ...options });
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(part);
  return parts;
}
const joined = (parts: LanguageModelV3StreamPart[], type: 'text-delta' | 'reasoning-delta') => parts.flatMap((p) => (p.type === type ? [p.delta] : [])).join('');
const finishOf = (parts: LanguageModelV3StreamPart[]) => parts.find((p) => p.type === 'finish') as Extract<LanguageModelV3StreamPart, { type: 'finish' }>;
const eventTypes = (raw: string) => [...raw.matchAll(/^event: (.+)$/gm)].map((m) => m[1]);

describe('fake OpenAI Responses API', () => {
  it('streams the semantic events in the documented order, read as text by the client, with store false on the wire', async () => {
    fake.script({ text: 'Hi there friend', reasoning: 'Think first' });
    const parts = await run(model('o4-mini'), { providerOptions: { openai: { store: false, reasoningSummary: 'auto' } } });
    expect(joined(parts, 'text-delta')).toBe('Hi there friend');
    expect(joined(parts, 'reasoning-delta')).toBe('Think first');
    const sent = fake.lastRequest();
    expect(`${sent?.method} ${sent?.path}`).toBe('POST /v1/responses');
    expect(sent?.headers.authorization).toBe('Bearer sk-responses');
    expect(sent?.body).toMatchObject({ model: 'o4-mini', stream: true, store: false, input: [{ role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }] });
    // The order as documented, read back from the raw stream.
    const raw = await (
      await fetch(`${fake.url}/responses`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-responses', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'o4-mini', input: 'x', stream: true }),
      })
    ).text();
    // Consecutive deltas counted once.
    expect(eventTypes(raw).filter((type, i, all) => type !== all[i - 1])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const sequence = [...raw.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
    expect(sequence).toEqual(sequence.map((_, i) => i));
  });

  it('streams parallel function calls with argument deltas, and usage with cached and reasoning tokens', async () => {
    fake.script({
      toolCalls: [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
      usage: { promptTokens: 50, completionTokens: 20, totalTokens: 70, cachedPromptTokens: 40, reasoningTokens: 8 },
    });
    const tools = ['get_weather', 'get_time'].map((name) => ({ type: 'function' as const, name, inputSchema: { type: 'object', properties: {} } }));
    const parts = await run(model(), { tools });
    expect(parts.filter((p) => p.type === 'tool-call').map((p) => (p.type === 'tool-call' ? [p.toolName, p.input] : []))).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{"zone":"Europe/Paris"}'],
    ]);
    expect(parts.filter((p) => p.type === 'tool-input-delta').length).toBeGreaterThan(2);
    expect(fake.lastRequest()?.body.tools).toMatchObject([
      { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } },
      { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} } },
    ]);
    const finish = finishOf(parts);
    expect(finish.finishReason.unified).toBe('tool-calls');
    expect(finish.usage).toMatchObject({ inputTokens: { total: 50, cacheRead: 40 }, outputTokens: { total: 20, reasoning: 8 } });
  });

  it('ends with response.incomplete for a length or content-filter finish', async () => {
    fake.script({ text: 'Cut short', finishReason: 'length' }, { text: 'Filtered', finishReason: 'content_filter' });
    expect(finishOf(await run(model())).finishReason).toMatchObject({ unified: 'length', raw: 'max_output_tokens' });
    expect(finishOf(await run(model())).finishReason).toMatchObject({ unified: 'content-filter', raw: 'content_filter' });
  });

  it('fails as the API does: HTTP errors with retry-after, response.failed, error events flat and nested', async () => {
    fake.script({ status: 429, retryAfterSeconds: 3 });
    const limited = (await run(model()).catch((e: unknown) => e)) as { statusCode: number; responseHeaders: Record<string, string> };
    expect(limited.statusCode).toBe(429);
    expect(limited.responseHeaders).toMatchObject({ 'retry-after': '3', 'retry-after-ms': '3000' });
    // A failure before any output: the client rejects with a status it derives from the error's code.
    const cases = [
      [{ failed: { code: 'server_error', message: 'boom' } }, 500],
      [{ errorEvent: { code: 'insufficient_quota', message: 'quota' } }, 429],
      [{ errorEvent: { code: 'context_length_exceeded', message: 'too long', nested: true } }, 400],
    ] as const;
    for (const [reply, status] of cases) {
      fake.script(reply);
      const error = (await run(model()).catch((e: unknown) => e)) as { statusCode: number; data: unknown };
      expect([error.statusCode, error.data]).toMatchObject([status, expect.objectContaining({})]);
    }
  });

  it('checks requests as the API does', async () => {
    const post = async (body: Record<string, unknown>) => {
      const res = await fetch(`${fake.url}/responses`, { method: 'POST', headers: { authorization: 'Bearer sk-responses', 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return [res.status, ((await res.json()) as { error?: { message: string } }).error?.message];
    };
    expect(await post({ model: 'gpt-4o-mini', input: 'x', messages: [] })).toEqual([400, "Unknown parameter: 'messages'."]);
    expect(await post({ input: 'x' })).toEqual([400, "Missing required parameter: 'model'."]);
    expect(await post({ model: 'gpt-4o-mini', input: 'x', tools: [{ type: 'function', function: { name: 'f' } }] })).toEqual([400, "Missing required parameter: 'tools[0].name'."]);
    expect(await post({ model: 'gpt-4o-mini', input: [{ type: 'function_call_output', call_id: 'call_1', output: 'x' }] })).toEqual([
      400,
      'No tool call found for function call output with call_id call_1.',
    ]);
    expect(await post({ model: 'gpt-4o-mini', input: 'x', reasoning: { effort: 'low' } })).toEqual([400, "Unsupported parameter: 'reasoning.effort' is not supported with this model."]);
    expect(await post({ model: 'gpt-4o-mini', input: 'x', max_output_tokens: 5 })).toEqual([
      400,
      "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 5 instead.",
    ]);
    expect((await post({ model: 'gpt-4o-mini', store: false, input: [{ type: 'item_reference', id: 'msg_1' }] }))[0]).toBe(404);
    expect(await post({ model: 'gpt-4o-mini', input: [{ role: 'assistant', content: [{ type: 'input_text', text: 'x' }] }] })).toEqual([
      400,
      "Invalid value: 'input_text'. Supported values are: 'output_text', 'refusal'.",
    ]);
    const wrong = (await run(model('gpt-4o-mini', 'sk-wrong')).catch((e: unknown) => e)) as { statusCode: number };
    expect(wrong.statusCode).toBe(401);
  });
});
