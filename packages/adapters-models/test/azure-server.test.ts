import { createAzure } from '@ai-sdk/azure';
import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAzureServer, startFakeAzureServer } from './fakes/azure-server.js';

/**
 * The fake Azure OpenAI resource against its documented format, read by the client the adapter
 * uses (`@ai-sdk/azure`'s chat model with deployment-based URLs): the URL forms, the checks the
 * service makes and the answers it gives.
 */
let fake: FakeAzureServer;
beforeAll(async () => {
  fake = await startFakeAzureServer({ contextTokens: 200 });
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => fake.reset());

const chat = (deployment: string, options: { apiVersion?: string; apiKey?: string; useDeploymentBasedUrls?: boolean } = {}): LanguageModelV3 =>
  createAzure({
    baseURL: `${fake.endpoint}/openai`,
    apiKey: options.apiKey ?? 'azure-test-key',
    apiVersion: options.apiVersion ?? '2024-10-21',
    useDeploymentBasedUrls: options.useDeploymentBasedUrls ?? true,
  }).chat(deployment);

async function run(model: LanguageModelV3, text = 'Hello there', extra: Record<string, unknown> = {}): Promise<LanguageModelV3StreamPart[]> {
  const { stream } = await model.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text }] }], ...extra });
  const parts: LanguageModelV3StreamPart[] = [];
  for await (const part of stream as unknown as AsyncIterable<LanguageModelV3StreamPart>) parts.push(part);
  return parts;
}
const texts = (parts: LanguageModelV3StreamPart[]) => parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');
const finishOf = (parts: LanguageModelV3StreamPart[]) => parts.find((p) => p.type === 'finish') as Extract<LanguageModelV3StreamPart, { type: 'finish' }>;
const rejection = async (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('expected a rejection'),
    (error: unknown) => error as { statusCode?: number; data?: unknown; responseHeaders?: Record<string, string>; responseBody?: string },
  );

describe('fake Azure OpenAI resource', () => {
  it('takes the deployment URL with api-version and the api-key header, and streams Azure’s chunks that the client reads', async () => {
    const parts = await run(chat('gpt-4o-mini'));
    expect(texts(parts)).toBe('You said: Hello there');
    const sent = fake.lastRequest();
    expect(`${sent?.method} ${sent?.path}?${sent?.query}`).toBe('POST /openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21');
    expect(sent?.headers['api-key']).toBe('azure-test-key');
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toMatchObject({ model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true } });
    // The deployment's model version, not the deployment's name, is what Azure answers with.
    expect(parts.find((p) => p.type === 'response-metadata')).toMatchObject({ modelId: 'gpt-4o-mini-2024-07-18' });
    expect(finishOf(parts).finishReason.unified).toBe('stop');
  });

  it('without deployment-based URLs the client treats a base URL off *.openai.azure.com as OpenAI-compatible: no deployment, no api-version, 404', async () => {
    await rejection(run(chat('gpt-4o-mini', { useDeploymentBasedUrls: false })));
    expect(`${fake.lastRequest()?.path}?${fake.lastRequest()?.query}`).toBe('/openai/chat/completions?');
    expect(fake.lastRequest()?.status).toBe(404);
  });

  it('refuses a missing or unknown api-version, a wrong key and an unknown deployment as Azure does', async () => {
    const missing = await fetch(`${fake.endpoint}/openai/deployments/gpt-4o-mini/chat/completions`, { method: 'POST', headers: { 'api-key': 'azure-test-key' }, body: '{}' });
    expect([missing.status, await missing.json()]).toEqual([404, { error: { code: '404', message: 'Resource not found' } }]);
    const old = await rejection(run(chat('gpt-4o-mini', { apiVersion: '2021-01-01' })));
    expect([old.statusCode, old.data]).toEqual([400, { error: { code: 'BadRequest', message: 'API version not supported' } }]);
    const key = await rejection(run(chat('gpt-4o-mini', { apiKey: 'wrong' })));
    expect(key.statusCode).toBe(401);
    expect(key.data).toMatchObject({ error: { code: '401', message: expect.stringMatching(/^Access denied due to invalid subscription key/) } });
    const deployment = await rejection(run(chat('gpt-5-nowhere')));
    expect([deployment.statusCode, (deployment.data as { error: { code: string } }).error.code]).toEqual([404, 'DeploymentNotFound']);
    // Before 2024-09-01 Azure did not know stream_options, which the client always sends when streaming.
    const early = await rejection(run(chat('gpt-4o-mini', { apiVersion: '2024-06-01' })));
    expect(early.data).toMatchObject({ error: { message: 'Unrecognized request argument supplied: stream_options' } });
  });

  it('refuses a filtered prompt with the innererror content_filter_result, and ends a filtered answer with finish_reason content_filter', async () => {
    fake.script({ promptFilter: 'violence' });
    const refused = await rejection(run(chat('gpt-4o-mini')));
    expect(refused.statusCode).toBe(400);
    // The client's `data` keeps OpenAI's error fields only; the body has Azure's innererror.
    expect(refused.data).toMatchObject({ error: { code: 'content_filter', param: 'prompt' } });
    expect(JSON.parse(refused.responseBody ?? '')).toMatchObject({
      error: {
        code: 'content_filter',
        param: 'prompt',
        status: 400,
        innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { violence: { filtered: true, severity: 'high' }, hate: { filtered: false } } },
      },
    });
    fake.script({ text: 'Partial answer', finishReason: 'content_filter' });
    const cut = await run(chat('gpt-4o-mini'));
    expect(texts(cut)).toBe('Partial answer');
    expect(finishOf(cut).finishReason).toMatchObject({ unified: 'content-filter', raw: 'content_filter' });
  });

  it('streams parallel tool calls in fragments and usage with cached and reasoning tokens', async () => {
    fake.script({
      toolCalls: [
        { name: 'get_weather', arguments: '{"city":"Paris"}' },
        { name: 'get_time', arguments: '{"zone":"Europe/Paris"}' },
      ],
      usage: { promptTokens: 40, completionTokens: 12, totalTokens: 52, cachedPromptTokens: 32, reasoningTokens: 4 },
    });
    const parts = await run(chat('gpt-4o'), 'Weather and time?', {
      tools: [
        { type: 'function', name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
        { type: 'function', name: 'get_time', inputSchema: { type: 'object', properties: { zone: { type: 'string' } } } },
      ],
    });
    expect(parts.filter((p) => p.type === 'tool-call').map((p) => (p.type === 'tool-call' ? [p.toolName, p.input] : []))).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{"zone":"Europe/Paris"}'],
    ]);
    expect(parts.filter((p) => p.type === 'tool-input-delta').length).toBeGreaterThan(2);
    const finish = finishOf(parts);
    expect(finish.finishReason.unified).toBe('tool-calls');
    expect(finish.usage).toMatchObject({ inputTokens: { total: 40, cacheRead: 32 }, outputTokens: { total: 12, reasoning: 4 } });
  });

  it('answers 429 with retry-after and retry-after-ms, a prompt over the window with context_length_exceeded, and lists the base models', async () => {
    fake.script({ status: 429, retryAfter: { seconds: 6 } });
    const limited = await rejection(run(chat('gpt-4o-mini')));
    expect(limited.statusCode).toBe(429);
    expect(limited.responseHeaders).toMatchObject({ 'retry-after': '6', 'retry-after-ms': '6000' });
    expect(limited.data).toMatchObject({ error: { code: '429', message: expect.stringContaining('Please retry after 6 seconds') } });
    const long = await rejection(run(chat('gpt-4o-mini'), 'word '.repeat(300)));
    expect([long.statusCode, (long.data as { error: { code: string } }).error.code]).toEqual([400, 'context_length_exceeded']);
    const models = await fetch(`${fake.endpoint}/openai/models?api-version=2024-10-21`, { headers: { 'api-key': 'azure-test-key' } });
    expect(((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(['gpt-4o-mini-2024-07-18', 'gpt-4o-2024-08-06']);
  });
});
