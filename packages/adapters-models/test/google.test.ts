import { createGoogle } from '@ai-sdk/google';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { googleErrorHints } from '../src/google/errors.js';
import { listGoogleModels } from '../src/google/models.js';
import { withPromptBlockAsError } from '../src/google/prompt-block.js';
import { drain, type FakeGoogleServer, startFakeGoogleServer } from './fakes/google-server.js';
import { apiKeyInvalid, type GoogleApiError, modelNotFound, quotaExhausted, scriptedError, tooLong, unregisteredCaller } from './fakes/google-wire.js';

let fake: FakeGoogleServer;
beforeAll(async () => {
  fake = await startFakeGoogleServer({ apiKey: 'AIza-test', models: ['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3-pro-preview'], inputTokenLimit: 300 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

describe('the Gemini parts of googleChatModel', () => {
  it('reads the kind of a failure and its retry hint from Google’s error bodies', () => {
    const hints = (error: GoogleApiError) => googleErrorHints(error.code, { error });
    expect(hints(apiKeyInvalid())).toEqual({ kind: 'auth' });
    expect(hints(unregisteredCaller())).toEqual({ kind: 'auth' });
    expect(hints(quotaExhausted('34.4s'))).toEqual({ kind: 'rate_limited', retryAfterSeconds: 35 });
    expect(hints({ code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' })).toEqual({ kind: 'rate_limited' });
    expect(hints(tooLong(1_200_293, 1_048_576))).toEqual({ kind: 'context_length' });
    expect(hints(modelNotFound('gemini-9', 'generateContent'))).toEqual({ kind: 'model_not_found' });
    // Other 400s and 404s, and 5xx, have no kind.
    expect(hints(scriptedError(400))).toEqual({});
    expect(hints(scriptedError(404))).toEqual({});
    expect(hints(scriptedError(503))).toEqual({});
    // The raw body when the SDK had not parsed it.
    expect(googleErrorHints(400, undefined, JSON.stringify({ error: apiKeyInvalid() }))).toEqual({ kind: 'auth' });
    expect(googleErrorHints(502, undefined, '<html>Bad gateway</html>')).toEqual({});
  });

  it('lists the models that serve generateContent, page by page, with the key in x-goog-api-key', async () => {
    const models = await listGoogleModels(globalThis.fetch, fake.url, 'AIza-test');
    expect(models).toEqual(['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3-pro-preview']);
    expect(fake.requests.map((r) => [r.path, r.headers['x-goog-api-key']])).toEqual([['/v1beta/models?pageSize=1000', 'AIza-test']]);
    // Pages: a server that answers two to a page is read to its end.
    const paging = (async (url: string | URL | Request, init?: RequestInit) => globalThis.fetch(String(url).replace('pageSize=1000', 'pageSize=2'), init)) as typeof fetch;
    expect(await listGoogleModels(paging, fake.url, 'AIza-test')).toEqual(['gemini-2.5-flash', 'gemini-2.5-pro', 'gemini-3-pro-preview']);
    // A refusal is the SDK's APICallError with the status and the body, for the one mapping of failures.
    const refused = await listGoogleModels(globalThis.fetch, fake.url, 'AIza-wrong').catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'AI_APICallError', statusCode: 400, data: { error: { status: 'INVALID_ARGUMENT' } } });
    expect(googleErrorHints(400, (refused as { data: unknown }).data)).toEqual({ kind: 'auth' });
  });

  it('turns a blocked prompt into an error part, and leaves an answer cut for safety a content-filter finish', async () => {
    const google = createGoogle({ apiKey: 'AIza-test', baseURL: fake.url });
    const model = withPromptBlockAsError(google('gemini-2.5-flash'), (reason) => new Error(`blocked: ${reason}`));
    const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'x' }] }];
    fake.script({ blockReason: 'SAFETY' }, { text: 'Partial answer', finishReason: 'SAFETY' });
    const blocked = await drain((await model.doStream({ prompt })).stream);
    expect(blocked.filter((p) => p.type === 'finish')).toEqual([]);
    expect(blocked.at(-1)).toEqual({ type: 'error', error: new Error('blocked: SAFETY') });
    const cut = await drain((await model.doStream({ prompt })).stream);
    expect(cut.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'content-filter', raw: 'SAFETY' } });
    expect(
      cut
        .filter((p) => p.type === 'text-delta')
        .map((p) => (p as { delta: string }).delta)
        .join(''),
    ).toBe('Partial answer');
  });
});
