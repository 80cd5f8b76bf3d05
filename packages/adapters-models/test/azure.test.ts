import { type ChatRequest, collectChat } from '@agent-platform/core';
import { describeChatModel } from '@agent-platform/core/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AZURE_API_VERSION, azureChatModel } from '../src/azure/index.js';
import { type FakeAzureServer, startFakeAzureServer } from './fakes/azure-server.js';
import { failure } from './fakes/chat-events.js';
import { expectAbortClosesUpstream, expectOnlyThroughFetch } from './fakes/provider-checks.js';

const KEY = 'azure-key-0123456789abcdef';
let fake: FakeAzureServer;
beforeAll(async () => {
  fake = await startFakeAzureServer({ apiKey: KEY, deployments: { 'contoso-gpt4o': 'gpt-4o-2024-08-06', 'gpt-4o-mini': 'gpt-4o-mini-2024-07-18' }, contextTokens: 300 });
});
afterAll(async () => {
  await fake.close();
});

const model = (extra: Partial<Parameters<typeof azureChatModel>[0]> = {}) =>
  azureChatModel({ endpoint: fake.endpoint, apiKey: KEY, deployments: { 'gpt-4o': 'contoso-gpt4o' }, maxRetries: 0, ...extra });

describeChatModel('azure (loopback Azure OpenAI resource)', {
  create: () => model(),
  model: 'gpt-4o',
  scripted: { next: (reply) => fake.script(reply) },
});

const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'gpt-4o', messages: [{ role: 'user', content }], ...extra });

describe('azureChatModel', () => {
  beforeEach(() => fake.reset());

  it('calls the deployment of the model with api-version and the api-key header; a model not listed is its own deployment', async () => {
    expect(model().provider).toBe('azure');
    expect((await collectChat(model().stream(ask('hi', { temperature: 0.3, maxTokens: 50 })))).content).toBe('You said: hi');
    const sent = fake.lastRequest();
    expect(`${sent?.method} ${sent?.path}?${sent?.query}`).toBe(`POST /openai/deployments/contoso-gpt4o/chat/completions?api-version=${AZURE_API_VERSION}`);
    expect(AZURE_API_VERSION).toBe('2024-10-21');
    expect(sent?.headers['api-key']).toBe(KEY);
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toMatchObject({ stream: true, temperature: 0.3, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    await collectChat(model().stream(ask('hi', { model: 'gpt-4o-mini' })));
    expect(fake.lastRequest()?.path).toBe('/openai/deployments/gpt-4o-mini/chat/completions');
    // The endpoint written with /openai or a trailing slash, or a gateway's base URL instead.
    for (const endpoint of [`${fake.endpoint}/`, `${fake.endpoint}/openai`]) await collectChat(model({ endpoint }).stream(ask('x')));
    await collectChat(azureChatModel({ baseURL: `${fake.endpoint}/openai`, apiKey: KEY, apiVersion: '2025-04-01-preview' }).stream(ask('x', { model: 'gpt-4o-mini' })));
    expect(fake.requests.slice(-3).map((r) => `${r.path}?${r.query}`)).toEqual([
      `/openai/deployments/contoso-gpt4o/chat/completions?api-version=${AZURE_API_VERSION}`,
      `/openai/deployments/contoso-gpt4o/chat/completions?api-version=${AZURE_API_VERSION}`,
      '/openai/deployments/gpt-4o-mini/chat/completions?api-version=2025-04-01-preview',
    ]);
    expect(() => azureChatModel({ apiKey: KEY })).toThrow(/endpoint/);
  });

  it('sends images, a json_schema response format, tool settings and provider options as Azure takes them', async () => {
    await collectChat(
      model().stream({
        model: 'gpt-4o',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
            ],
          },
        ],
        tools: [{ name: 'lookup', description: 'Looks up', parameters: { type: 'object', properties: {} } }],
        toolChoice: 'required',
        parallelToolCalls: false,
        responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false }, strict: true },
        providerOptions: { user: 'user-42' },
      }),
    );
    const sent = fake.lastRequest();
    expect(sent?.status).toBe(200);
    expect(sent?.body).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true } },
      user: 'user-42',
    });
  });

  it('reports usage with cached and reasoning tokens, and a filtered answer as content_filter', async () => {
    fake.script({ text: 'Counted.', usage: { promptTokens: 30, completionTokens: 10, totalTokens: 40, cachedPromptTokens: 20, reasoningTokens: 4 } });
    expect((await collectChat(model().stream(ask('x')))).usage).toEqual({ promptTokens: 30, completionTokens: 10, totalTokens: 40, cachedPromptTokens: 20, reasoningTokens: 4 });
    fake.script({ text: 'Part of it', finishReason: 'content_filter' });
    const cut = await collectChat(model().stream(ask('x')));
    expect([cut.content, cut.finishReason]).toEqual(['Part of it', 'content_filter']);
  });

  it('classifies Azure’s errors: auth, rate_limited with retry-after, context_length, an unknown deployment, a filtered prompt', async () => {
    const where = `Model provider azure (${fake.endpoint}/openai)`;
    const wrong = await failure(model({ apiKey: 'azure-wrong-secret-key' }).stream(ask('x')));
    expect(wrong).toMatchObject({ code: 'upstream_error', retryable: false, details: { provider: 'azure', upstream: `${fake.endpoint}/openai`, status: 401, kind: 'auth' } });
    expect(wrong.message).toBe(`${where} refused the credentials (HTTP 401)`);
    expect(wrong.message).not.toContain('azure-wrong-secret-key');
    fake.script({ status: 429, retryAfter: { seconds: 7 } });
    expect(await failure(model().stream(ask('x')))).toMatchObject({ retryable: true, details: { status: 429, kind: 'rate_limited', retryAfterSeconds: 7 } });
    fake.script({ status: 429, retryAfter: { seconds: 90, msHeader: false } });
    expect((await failure(model().stream(ask('x')))).details).toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 90 });
    const long = await failure(model().stream(ask('word '.repeat(400))));
    expect(long).toMatchObject({
      details: { status: 400, kind: 'context_length' },
      message: `${where} refused the request: the prompt is too long for the model gpt-4o (HTTP 400) (context_length_exceeded)`,
    });
    const unknown = await failure(model().stream(ask('x', { model: 'gpt-5' })));
    expect(unknown).toMatchObject({ details: { status: 404, kind: 'model_not_found' }, message: `${where} does not know the model gpt-5 (HTTP 404) (DeploymentNotFound)` });
    fake.script({ promptFilter: 'violence' });
    const filtered = await failure(model().stream(ask('x')));
    expect(filtered).toMatchObject({
      retryable: false,
      details: { status: 400, kind: 'content_filter' },
      message: `${where} refused the prompt: its content filter blocked it (HTTP 400) (content_filter)`,
    });
    const version = await failure(model({ apiVersion: '2020-01-01' }).stream(ask('x')));
    expect(version).toMatchObject({ details: { status: 400 }, message: `${where} answered HTTP 400 (BadRequest)` });
  });

  it('retries a 429 after its retry-after before the stream starts (maxRetries)', async () => {
    fake.script({ status: 429, retryAfter: { seconds: 0 } });
    expect((await collectChat(model({ maxRetries: 1 }).stream(ask('again')))).content).toBe('You said: again');
    expect(fake.requests.map((r) => r.status)).toEqual([429, 200]);
  });

  it('goes only through the fetch it is given: a refused address rejects with the policy’s error and the resource gets nothing', async () => {
    await expectOnlyThroughFetch((fetch) => model({ fetch }), fake, ask('hi'));
  });

  it('stops the upstream call when aborted mid-stream or when it does not answer: the resource sees the connection close', async () => {
    fake.script({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 30 });
    await expectAbortClosesUpstream(model(), fake, ask('x'));
    fake.script({ hang: true });
    expect(await failure(model({ timeoutMs: 200 }).stream(ask('x')))).toMatchObject({ code: 'timeout', message: `Model provider azure (${fake.endpoint}/openai) did not answer within 200 ms` });
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('lists the configured deployments’ models after checking the key with GET /openai/models; without deployments, the resource’s chat models', async () => {
    expect(await model().listModels?.()).toEqual(['gpt-4o']);
    expect(`${fake.lastRequest()?.method} ${fake.lastRequest()?.path}?${fake.lastRequest()?.query}`).toBe(`GET /openai/models?api-version=${AZURE_API_VERSION}`);
    expect(await model({ deployments: {} }).listModels?.()).toEqual(['gpt-4o-2024-08-06', 'gpt-4o-mini-2024-07-18']);
    await expect(model({ apiKey: 'azure-wrong-secret-key' }).listModels?.()).rejects.toMatchObject({ code: 'upstream_error', details: { status: 401, kind: 'auth' } });
    await expect(model().listModels?.({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'aborted' });
  });
});
