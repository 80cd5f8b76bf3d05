import { createGuardedFetch, createOutboundPolicy, isPlatformError } from '@agent-platform/core';
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { awsErrorType, bedrockErrorKind, bedrockHttpError } from '../src/bedrock/errors.js';
import { listBedrockModels } from '../src/bedrock/models.js';
import { type BedrockChatModelOptions, bedrockSetup } from '../src/bedrock/provider.js';
import { FAKE_BEDROCK_MODELS, type FakeBedrockServer, startFakeBedrockServer } from './fakes/bedrock-server.js';

const credentials = { accessKeyId: 'AKIAUSERKEY000000001', secretAccessKey: 'user/secret+KEY/0123456789abcdefghijklmn' };
const sessionToken = 'IQoJb3JpZ2luX2VjEFAKE//user-session==';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
let fake: FakeBedrockServer;
let temporary: FakeBedrockServer;
beforeAll(async () => {
  fake = await startFakeBedrockServer({ credentials });
  temporary = await startFakeBedrockServer({ credentials: { ...credentials, sessionToken }, region: 'eu-central-1' });
});
afterAll(async () => {
  await fake.close();
  await temporary.close();
});
beforeEach(() => {
  fake.reset();
  temporary.reset();
});

const options = (extra: Partial<BedrockChatModelOptions> = {}): BedrockChatModelOptions => ({ region: 'us-east-1', ...credentials, baseURL: fake.url, maxRetries: 0, ...extra });
const user = (text: string): LanguageModelV4Prompt => [{ role: 'user', content: [{ type: 'text', text }] }];

/** One ConverseStream call through the setup's provider (the AI SDK's model over our fetch), read to its end. */
async function streamParts(
  setup: ReturnType<typeof bedrockSetup>,
  prompt = user('Hello there'),
  providerOptions?: Record<string, Record<string, never> | Record<string, unknown>>,
): Promise<LanguageModelV4StreamPart[]> {
  const { stream } = await setup.provider.languageModel(MODEL).doStream({ prompt, ...(providerOptions ? { providerOptions: providerOptions as never } : {}) });
  const out: LanguageModelV4StreamPart[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    if (next.value.type === 'error') throw next.value.error;
    out.push(next.value);
  }
  return out;
}
const textOf = (parts: readonly LanguageModelV4StreamPart[]) => parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('');

describe('bedrockSetup: the AI SDK provider with every setting given', () => {
  const saved: Record<string, string | undefined> = {};
  const OPERATOR = {
    AWS_BEARER_TOKEN_BEDROCK: 'operator-bearer-token',
    AWS_ACCESS_KEY_ID: 'AKIAOPERATOR00000001',
    AWS_SECRET_ACCESS_KEY: 'operator-secret',
    AWS_SESSION_TOKEN: 'operator-session-token',
    AWS_REGION: 'eu-west-3',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9/operator',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: 'http://127.0.0.1:9/operator-runtime',
  };
  beforeEach(() => {
    for (const [name, value] of Object.entries(OPERATOR)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterEach(() => {
    for (const name of Object.keys(OPERATOR)) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it("signs with the user's keys for the user's region and endpoint, whatever the operator's AWS environment holds", async () => {
    expect(textOf(await streamParts(bedrockSetup(options())))).toBe('You said: Hello there');
    const sent = fake.lastRequest();
    expect(sent).toMatchObject({ status: 200, operation: 'converse-stream', modelId: MODEL });
    expect(sent?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAUSERKEY000000001\/\d{8}\/us-east-1\/bedrock\/aws4_request, /);
    expect(sent?.headers['x-amz-security-token']).toBeUndefined();
    expect(JSON.stringify(sent?.headers)).not.toMatch(/operator/);
    // Temporary credentials: the user's token, never the operator's.
    await streamParts(bedrockSetup(options({ region: 'eu-central-1', sessionToken, baseURL: temporary.url })));
    expect(temporary.lastRequest()).toMatchObject({ status: 200 });
    expect(temporary.lastRequest()?.headers['x-amz-security-token']).toBe(sessionToken);
  });

  it('goes to https://bedrock-runtime.<region>.amazonaws.com by default (amazonaws.com.cn in China), never to AWS_ENDPOINT_URL', async () => {
    const seen: string[] = [];
    const capture = (async (input: string | URL | Request) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return new Response('{"message":"stop here"}', { status: 403, headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'UnrecognizedClientException' } });
    }) as typeof fetch;
    for (const region of ['us-west-2', 'cn-north-1']) {
      const { baseURL: _omitted, ...rest } = options({ region, fetch: capture });
      await streamParts(bedrockSetup(rest)).catch(() => undefined);
    }
    expect(seen).toEqual([
      'https://bedrock-runtime.us-west-2.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream',
      'https://bedrock-runtime.cn-north-1.amazonaws.com.cn/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream',
    ]);
  });
});

describe('bedrockSetup: the wire', () => {
  it('passes guardrailConfig of the provider options to the wire; a guardrail that intervenes ends the answer as content-filter', async () => {
    const guardrailConfig = { guardrailIdentifier: 'gr-test', guardrailVersion: '1', trace: 'enabled' };
    const parts = await streamParts(bedrockSetup(options()), user('Tell me the forbidden thing'), { bedrock: { guardrailConfig } });
    expect(fake.lastRequest()?.body.guardrailConfig).toEqual(guardrailConfig);
    expect(textOf(parts)).toBe('Sorry, the model cannot answer this question.');
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: { unified: 'content-filter', raw: 'guardrail_intervened' } });
    // A guardrail the account does not have is the service's ValidationException.
    const unknown = await streamParts(bedrockSetup(options()), user('hi'), { bedrock: { guardrailConfig: { guardrailIdentifier: 'gr-none', guardrailVersion: '1' } } }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ statusCode: 400, message: 'The guardrail identifier or version provided in the request does not exist.' });
  });

  it('bounds each event stream message by answerLimit: a longer one is cut off before it is held', async () => {
    fake.script({ text: `${'x'.repeat(600)} and more words after it`, chunkDelayMs: 50 });
    const error = await streamParts(bedrockSetup(options({ answerLimit: { bytes: 400, setting: '--max-model-answer' } }))).catch((e: unknown) => e);
    expect(isPlatformError(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'upstream_error',
      message: `Model provider bedrock (${fake.url}) sent an event larger than 400 bytes, the limit set by --max-model-answer: it was cut off there and not used`,
    });
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
    // Messages under the bound pass as they came.
    fake.script({ text: 'short words only' });
    const short = await streamParts(bedrockSetup(options({ answerLimit: { bytes: 400, setting: '--max-model-answer' } })));
    expect(textOf(short)).toBe('short words only');
  });

  it('passes the outbound policy’s refusal through, and the fake gets no request', async () => {
    const guarded = createGuardedFetch(createOutboundPolicy()) as unknown as typeof fetch;
    const error = await streamParts(bedrockSetup(options({ fetch: guarded }))).catch((e: unknown) => e);
    expect(isPlatformError(error)).toBe(true);
    expect((error as Error).message).toMatch(/127\.0\.0\.1/);
    expect(fake.requests).toHaveLength(0);
    const listing = await listBedrockModels(bedrockSetup(options({ fetch: guarded })), options()).catch((e: unknown) => e);
    expect(listing).toMatchObject({ code: (error as { code: string }).code });
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses options that are missing, or a region that is not one (it becomes part of a host name)', () => {
    expect(() => bedrockSetup(options({ region: 'us-east-1.evil.example#' }))).toThrow(/region must be an AWS region/);
    expect(() => bedrockSetup(options({ accessKeyId: '' }))).toThrow(/accessKeyId is required/);
    expect(() => bedrockSetup(options({ secretAccessKey: '' }))).toThrow(/secretAccessKey is required/);
    expect(() => bedrockSetup(options({ sessionToken: '' }))).toThrow(/sessionToken/);
    expect(() => bedrockSetup(options({ baseURL: 'ftp://host' }))).toThrow(/not an http\(s\) URL/);
    expect(() => bedrockSetup(options({ timeoutMs: 0 }))).toThrow(/timeoutMs/);
    expect(bedrockSetup(options({ region: 'us-gov-west-1' })).where).toBe(`Model provider bedrock (${fake.url})`);
  });
});

describe('listBedrockModels: the control plane’s GET /foundation-models, signed', () => {
  it('lists the text models the account can call on demand, through the signed request the fake checks', async () => {
    expect(await listBedrockModels(bedrockSetup(options()), options())).toEqual(FAKE_BEDROCK_MODELS);
    expect(fake.lastRequest()).toMatchObject({ method: 'GET', operation: 'foundation-models', status: 200, path: '/foundation-models?byOutputModality=TEXT&byInferenceType=ON_DEMAND' });
    const temp = options({ region: 'eu-central-1', sessionToken, baseURL: temporary.url });
    expect(await listBedrockModels(bedrockSetup(temp), temp)).toEqual(FAKE_BEDROCK_MODELS);
  });

  it('says a wrong secret was refused (auth), never showing it; aborts when asked', async () => {
    const wrong = options({ secretAccessKey: 'wrong-secret-value' });
    const error = await listBedrockModels(bedrockSetup(wrong), wrong).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'upstream_error',
      retryable: false,
      message: `Model provider bedrock (${fake.url}) refused the credentials (HTTP 403) (InvalidSignatureException)`,
      details: { provider: 'bedrock', status: 403, kind: 'auth', type: 'InvalidSignatureException' },
    });
    expect(JSON.stringify(error)).not.toContain('wrong-secret-value');
    await expect(listBedrockModels(bedrockSetup(options()), options(), AbortSignal.abort())).rejects.toMatchObject({ code: 'aborted' });
  });
});

describe('Bedrock error answers', () => {
  it('reads the AWS error type from x-amzn-errortype, else the body, and only when it is a plain word', () => {
    expect(awsErrorType(new Headers({ 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' }), {})).toBe('ValidationException');
    expect(awsErrorType({ 'x-amzn-errortype': 'ThrottlingException' }, {})).toBe('ThrottlingException');
    expect(awsErrorType(undefined, { __type: 'com.amazon.coral.validate#ValidationException' })).toBe('ValidationException');
    expect(awsErrorType(undefined, { code: 'see http://evil.example for help' })).toBeUndefined();
  });

  it('knows each kind from the status, the type and the text', () => {
    expect(bedrockErrorKind(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.')).toBe('auth');
    expect(bedrockErrorKind(403, 'AccessDeniedException', "You don't have access to the model with the specified model ID.")).toBe('auth');
    expect(bedrockErrorKind(429, 'ThrottlingException', 'Too many requests, please wait before trying again.')).toBe('rate_limited');
    expect(bedrockErrorKind(400, 'ValidationException', 'Input is too long for requested model.')).toBe('context_length');
    expect(bedrockErrorKind(400, 'ValidationException', 'The provided model identifier is invalid.')).toBe('model_not_found');
    expect(bedrockErrorKind(404, 'ResourceNotFoundException', 'Could not resolve the foundation model from the provided model identifier.')).toBe('model_not_found');
    expect(bedrockErrorKind(400, 'ValidationException', 'Malformed input request, please reformat your input and try again.')).toBeUndefined();
    const unknown = bedrockHttpError('Model provider bedrock (x)', 'x', 400, 'ValidationException', 'The provided model identifier is invalid.', 'anthropic.claude-nope');
    expect(unknown).toMatchObject({
      message: 'Model provider bedrock (x) does not know the model anthropic.claude-nope (HTTP 400) (ValidationException)',
      retryable: false,
      details: { kind: 'model_not_found' },
    });
    expect(bedrockHttpError('w', 'x', 429, 'ThrottlingException', '')).toMatchObject({ retryable: true, details: { kind: 'rate_limited', status: 429 } });
  });
});
