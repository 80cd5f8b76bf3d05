import { createGoogleGenerativeAI } from '@ai-sdk/google';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { drain, type FakeGoogleServer, startFakeGoogleServer } from './google-server.js';

let fake: FakeGoogleServer;
beforeAll(async () => {
  fake = await startFakeGoogleServer({ apiKey: 'AIza-test', models: ['gemini-2.5-flash', 'gemini-3-pro-preview'], inputTokenLimit: 200 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const user = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });
const post = (model: string, method: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': 'AIza-test' }, query = '') =>
  fetch(`${fake.url}/models/${model}:${method}${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
type ErrorBody = { error: { code: number; message: string; status: string; details?: Record<string, unknown>[] } };

/** The `data:` records of an SSE body, parsed; records end with CRLF CRLF as Google's do. */
const records = (sse: string) => {
  expect(sse.endsWith('\r\n\r\n')).toBe(true);
  return sse
    .split('\r\n\r\n')
    .filter((r) => r !== '')
    .map((r) => {
      expect(r.startsWith('data: ')).toBe(true);
      return JSON.parse(r.slice('data: '.length)) as Record<string, unknown>;
    });
};

describe('the loopback Gemini server', () => {
  it('checks the key in x-goog-api-key or ?key=: none is 403 PERMISSION_DENIED, a wrong one 400 API_KEY_INVALID', async () => {
    const none = await post('gemini-2.5-flash', 'generateContent', user('hi'), {});
    expect(none.status).toBe(403);
    expect(((await none.json()) as ErrorBody).error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED', message: expect.stringMatching(/unregistered callers/) });
    const wrong = await post('gemini-2.5-flash', 'generateContent', user('hi'), { 'x-goog-api-key': 'AIza-wrong' });
    expect(wrong.status).toBe(400);
    const body = ((await wrong.json()) as ErrorBody).error;
    expect(body).toMatchObject({ status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });
    expect(body.details?.[0]).toMatchObject({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' });
    const query = await post('gemini-2.5-flash', 'generateContent', user('hi'), {}, '?key=AIza-test');
    expect(query.status).toBe(200);
    expect(fake.lastRequest()?.apiKey).toBe('AIza-test');
  });

  it('answers generateContent with one GenerateContentResponse', async () => {
    const res = await post('gemini-2.5-flash', 'generateContent', user('hello there'));
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      candidates: [{ content: { role: 'model', parts: [{ text: 'You said: hello there' }] }, finishReason: 'STOP', index: 0, safetyRatings: expect.any(Array) }],
      usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 5, totalTokenCount: 7 },
      modelVersion: 'gemini-2.5-flash',
      responseId: expect.any(String),
    });
  });

  it('streams SSE records with ?alt=sse (thoughts when asked for, text pieces, parallel calls in one chunk, the finish on the last) and a JSON array without it', async () => {
    fake.script({
      reasoning: 'Let me think.',
      text: 'Two calls.',
      toolCalls: [
        { name: 'a', arguments: { x: 1 } },
        { name: 'b', arguments: '{"y":2}' },
      ],
    });
    const thinking = { generationConfig: { thinkingConfig: { includeThoughts: true } } };
    const res = await post('gemini-2.5-flash', 'streamGenerateContent', { ...user('go'), ...thinking }, undefined, '?alt=sse');
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const chunks = records(await res.text());
    const parts = chunks.map((c) => (c.candidates as { content: { parts: unknown[] } }[])[0]?.content.parts);
    expect(parts).toEqual([
      [{ text: 'Let ', thought: true }],
      [{ text: 'me ', thought: true }],
      [{ text: 'think.', thought: true }],
      [{ text: 'Two ' }],
      [{ text: 'calls.' }],
      [{ functionCall: { name: 'a', args: { x: 1 } } }, { functionCall: { name: 'b', args: { y: 2 } } }],
    ]);
    expect(chunks.slice(0, -1).every((c) => (c.candidates as Record<string, unknown>[])[0]?.finishReason === undefined)).toBe(true);
    expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { thoughtsTokenCount: 4 } });
    // Without includeThoughts the thoughts are counted, not sent; without alt=sse the chunks come as one JSON array.
    fake.script({ reasoning: 'Let me think.', text: 'Two calls.' });
    const array = (await (await post('gemini-2.5-flash', 'streamGenerateContent', user('go'))).json()) as Record<string, unknown>[];
    expect(array.map((c) => (c.candidates as { content: { parts: unknown[] } }[])[0]?.content.parts)).toEqual([[{ text: 'Two ' }], [{ text: 'calls.' }]]);
    expect(array.at(-1)).toMatchObject({ usageMetadata: { thoughtsTokenCount: 4 } });
  });

  it('blocks a prompt with promptFeedback and no candidates, and an answer with finishReason SAFETY', async () => {
    fake.script({ blockReason: 'SAFETY' }, { text: 'Partial', finishReason: 'content_filter' });
    const blocked = records(await (await post('gemini-2.5-flash', 'streamGenerateContent', user('x'), undefined, '?alt=sse')).text());
    expect(blocked).toHaveLength(1);
    expect(blocked[0]).toMatchObject({ promptFeedback: { blockReason: 'SAFETY', safetyRatings: expect.arrayContaining([expect.objectContaining({ blocked: true })]) } });
    expect(blocked[0]).not.toHaveProperty('candidates');
    const answer = records(await (await post('gemini-2.5-flash', 'streamGenerateContent', user('x'), undefined, '?alt=sse')).text());
    expect(answer.at(-1)).toMatchObject({ candidates: [{ finishReason: 'SAFETY', safetyRatings: expect.arrayContaining([expect.objectContaining({ blocked: true })]) }] });
  });

  it('refuses what the API refuses, with its status and message', async () => {
    const cases: [unknown, number, RegExp][] = [
      ['{not json', 400, /Invalid JSON payload received/],
      [{ contents: [] }, 400, /contents is not specified/],
      [{ ...user('x'), temperatur: 1 }, 400, /Unknown name "temperatur"/],
      [{ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 400, /valid role: user, model/],
      [{ contents: [{ role: 'user', parts: [] }] }, 400, /parts must not be empty/],
      [{ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: 'not base64!' } }] }] }, 400, /Base64 decoding failed/],
      [{ ...user('x'), generationConfig: { responseJsonSchema: { type: 'object' } } }, 400, /response_mime_type must be set/],
      [{ ...user('x'), generationConfig: { thinkingConfig: { budget: 1 } } }, 400, /Unknown name "budget"/],
      [{ ...user('x'), safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_SOME' }] }, 400, /safety_settings\[0\]\.threshold/],
      [{ ...user('x'), tools: [{ functionDeclarations: [{ name: 'a' }] }], toolConfig: { functionCallingConfig: { mode: 'AUTO', allowedFunctionNames: ['a'] } } }, 400, /allowed_function_names/],
      [{ ...user('x'), tools: [{ functionDeclarations: [{ name: '1bad' }] }] }, 400, /Invalid function name/],
      [
        {
          contents: [
            { role: 'user', parts: [{ text: 'x' }] },
            { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }] },
            { role: 'user', parts: [{ functionResponse: { name: 'a', response: {} } }] },
          ],
        },
        400,
        /number of function response parts is equal to the number of function call parts/,
      ],
      [{ contents: [{ role: 'user', parts: [{ text: 'word '.repeat(201) }] }] }, 400, /^The input token count \(201\) exceeds the maximum number of tokens allowed \(200\)\.$/],
    ];
    for (const [body, status, message] of cases) {
      const res = await post('gemini-2.5-flash', 'generateContent', body);
      const error = ((await res.json()) as ErrorBody).error;
      expect([res.status, error.status, error.message]).toEqual([status, 'INVALID_ARGUMENT', expect.stringMatching(message)]);
    }
    const unsigned = {
      contents: [
        { role: 'user', parts: [{ text: 'x' }] },
        { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'a', response: {} } }] },
      ],
    };
    expect((await post('gemini-2.5-flash', 'generateContent', unsigned)).status).toBe(200);
    const gemini3 = await post('gemini-3-pro-preview', 'generateContent', unsigned);
    expect(((await gemini3.json()) as ErrorBody).error.message).toMatch(/missing a thought_signature/);
    const missing = await post('gemini-1.0-pro', 'streamGenerateContent', user('x'), undefined, '?alt=sse');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as ErrorBody).error).toMatchObject({ status: 'NOT_FOUND', message: expect.stringMatching(/^models\/gemini-1\.0-pro is not found for API version v1beta/) });
    expect((await fetch(`${fake.url}/chat/completions`, { method: 'POST' })).status).toBe(404);
  });

  it('signs the first function call of a Gemini 3 answer, and checks the signatures of the current turn only: the one it gave or a skip value', async () => {
    fake.script({
      toolCalls: [
        { name: 'a', arguments: { x: 1 } },
        { name: 'b', arguments: {} },
      ],
    });
    const answer = (await (await post('gemini-3-pro-preview', 'generateContent', user('go'))).json()) as { candidates: { content: { parts: Record<string, unknown>[] } }[] };
    const [first, second] = answer.candidates[0]?.content.parts ?? [];
    expect(first).toEqual({ functionCall: { name: 'a', args: { x: 1 } }, thoughtSignature: expect.any(String) });
    expect(second).not.toHaveProperty('thoughtSignature');
    const turn = (signature: unknown, earlier: Record<string, unknown>[] = []) => ({
      contents: [
        ...earlier,
        { role: 'user', parts: [{ text: 'go' }] },
        { role: 'model', parts: [{ ...first, thoughtSignature: signature }, second] },
        { role: 'user', parts: [{ functionResponse: { name: 'a', response: {} } }, { functionResponse: { name: 'b', response: {} } }] },
      ],
    });
    const status = async (body: unknown) => {
      const res = await post('gemini-3-pro-preview', 'generateContent', body);
      return res.status === 200 ? 200 : ((await res.json()) as ErrorBody).error.message;
    };
    expect(await status(turn(first?.thoughtSignature))).toBe(200);
    expect(await status(turn('skip_thought_signature_validator'))).toBe(200);
    expect(await status(turn(undefined))).toMatch(/missing a thought_signature/);
    expect(await status(turn('c2lnbmVkIGVsc2V3aGVyZQ=='))).toMatch(/^Corrupted thought signature/);
    // A signature given for another call does not pass either.
    const other = { ...turn(first?.thoughtSignature) };
    (other.contents[1] as { parts: Record<string, unknown>[] }).parts[0] = { functionCall: { name: 'a', args: { x: 2 } }, thoughtSignature: first?.thoughtSignature };
    expect(await status(other)).toMatch(/^Corrupted thought signature/);
    // An earlier turn's unsigned call is not checked (only the current turn is).
    const earlier = [
      { role: 'user', parts: [{ text: 'before' }] },
      { role: 'model', parts: [{ functionCall: { name: 'a', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'a', response: {} } }] },
      { role: 'model', parts: [{ text: 'done' }] },
    ];
    expect(await status(turn(first?.thoughtSignature, earlier))).toBe(200);
  });

  it('answers scripted failures with Google’s statuses, a 429 with a RetryInfo retryDelay, and an error record mid-stream', async () => {
    fake.script({ status: 429, retryDelay: '34.4s' }, { status: 503 }, { text: 'one two three four', streamError: 'boom' });
    const limited = await post('gemini-2.5-flash', 'generateContent', user('x'));
    const error = ((await limited.json()) as ErrorBody).error;
    expect([limited.status, error.status]).toEqual([429, 'RESOURCE_EXHAUSTED']);
    expect(error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '34.4s' });
    const busy = await post('gemini-2.5-flash', 'generateContent', user('x'));
    expect([busy.status, ((await busy.json()) as ErrorBody).error.status]).toEqual([503, 'UNAVAILABLE']);
    const broken = records(await (await post('gemini-2.5-flash', 'streamGenerateContent', user('x'), undefined, '?alt=sse')).text());
    expect(broken.at(-1)).toEqual({ error: { code: 500, message: 'boom', status: 'INTERNAL' } });
  });

  it('lists models in pages with their supported generation methods', async () => {
    const first = await fetch(`${fake.url}/models?pageSize=2`, { headers: { 'x-goog-api-key': 'AIza-test' } });
    const page = (await first.json()) as { models: { name: string; supportedGenerationMethods: string[] }[]; nextPageToken?: string };
    expect(page.models.map((m) => m.name)).toEqual(['models/gemini-2.5-flash', 'models/gemini-3-pro-preview']);
    expect(page.models[0]?.supportedGenerationMethods).toContain('generateContent');
    const second = (await (await fetch(`${fake.url}/models?pageSize=2&pageToken=${page.nextPageToken}&key=AIza-test`)).json()) as typeof page;
    expect(second.models.map((m) => [m.name, m.supportedGenerationMethods.includes('generateContent')])).toEqual([['models/gemini-embedding-001', false]]);
    expect(second.nextPageToken).toBeUndefined();
    expect((await fetch(`${fake.url}/models`)).status).toBe(403);
  });

  it('is read by @ai-sdk/google as Gemini: text, reasoning, parallel tool calls, usage, a prompt block as content-filter', async () => {
    const google = createGoogleGenerativeAI({ apiKey: 'AIza-test', baseURL: fake.url });
    fake.script({
      reasoning: 'Weather and time.',
      toolCalls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_time', arguments: { zone: 'Europe/Paris' } },
      ],
      usage: { promptTokens: 12, completionTokens: 3, cachedPromptTokens: 4, reasoningTokens: 5 },
    });
    const tools = ['get_weather', 'get_time'].map((name) => ({ type: 'function' as const, name, inputSchema: { type: 'object' as const, properties: {} } }));
    const { stream } = await google('gemini-2.5-flash').doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Weather and time in Paris?' }] }],
      tools,
      providerOptions: { google: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 }, safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] } },
    });
    const parts = await drain(stream);
    expect(
      parts
        .filter((p) => p.type === 'reasoning-delta')
        .map((p) => (p as { delta: string }).delta)
        .join(''),
    ).toBe('Weather and time.');
    expect(parts.flatMap((p) => (p.type === 'tool-call' ? [[p.toolName, p.input]] : []))).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{"zone":"Europe/Paris"}'],
    ]);
    const finish = parts.find((p) => p.type === 'finish') as Extract<LanguageModelV3StreamPart, { type: 'finish' }>;
    expect(finish.finishReason.unified).toBe('tool-calls');
    expect(finish.usage).toMatchObject({ inputTokens: { total: 12, cacheRead: 4 }, outputTokens: { text: 3, reasoning: 5 } });
    expect(fake.lastRequest()?.body).toMatchObject({
      generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 1024 } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
      tools: [{ functionDeclarations: [{ name: 'get_weather' }, { name: 'get_time' }] }],
    });

    fake.script({ blockReason: 'PROHIBITED_CONTENT' });
    const blocked = await drain((await google('gemini-2.5-flash').doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }] })).stream);
    expect(blocked.find((p) => p.type === 'finish')).toMatchObject({ finishReason: { unified: 'content-filter', raw: 'PROHIBITED_CONTENT' } });
  });
});
