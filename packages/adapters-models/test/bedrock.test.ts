import { type ChatEvent, type ChatRequest, collectChat } from '@agent-platform/core';
import { describeChatModel, type ScriptedChatReply } from '@agent-platform/core/testing';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bedrockChatModel } from '../src/bedrock/index.js';
import { type BedrockChatModelOptions, bedrockSetup } from '../src/bedrock/provider.js';
import { type BedrockScriptedReply, FAKE_BEDROCK_MODELS, type FakeBedrockServer, startFakeBedrockServer } from './fakes/bedrock-server.js';
import { drain, failure } from './fakes/chat-events.js';
import { expectAbortClosesUpstream, expectOnlyThroughFetch } from './fakes/provider-checks.js';

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

/** The suite's scripted reply as the fake takes it (usage with Bedrock's cache counts). */
const toBedrock = ({ usage, ...reply }: ScriptedChatReply): BedrockScriptedReply => ({
  ...reply,
  ...(usage
    ? {
        usage: {
          promptTokens: usage.promptTokens,
          completionTokens: usage.completionTokens,
          totalTokens: usage.totalTokens,
          ...(usage.cachedPromptTokens !== undefined ? { cacheReadInputTokens: usage.cachedPromptTokens } : {}),
          ...(usage.cacheWritePromptTokens !== undefined ? { cacheWriteInputTokens: usage.cacheWritePromptTokens } : {}),
        },
      }
    : {}),
});

const options = (extra: Partial<BedrockChatModelOptions> = {}): BedrockChatModelOptions => ({ region: 'us-east-1', ...credentials, baseURL: fake.url, maxRetries: 0, ...extra });
const model = (extra: Partial<BedrockChatModelOptions> = {}) => bedrockChatModel(options(extra));
const ask = (content: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: MODEL, messages: [{ role: 'user', content }], ...extra });
const WEATHER = { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

describeChatModel('bedrock (loopback server speaking ConverseStream, SigV4 checked)', {
  create: () => model(),
  model: MODEL,
  scripted: { next: (reply) => fake.script(toBedrock(reply)) },
  reasoning: { providerOptions: { reasoningConfig: { type: 'enabled', budgetTokens: 1024 } } },
});

describe('bedrockChatModel', () => {
  beforeEach(() => {
    fake.reset();
    temporary.reset();
  });

  it('sends the conversation in the Converse format: system apart, image blocks, toolUse/toolResult, toolChoice, inferenceConfig', async () => {
    fake.script({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Lyon' } }] });
    const result = await collectChat(
      model().stream({
        model: MODEL,
        temperature: 0.2,
        maxTokens: 300,
        stop: ['END'],
        tools: [WEATHER],
        toolChoice: { name: 'get_weather' },
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather where this is?' },
              { type: 'image', mediaType: 'image/png', data: PIXEL_PNG },
            ],
          },
          { role: 'assistant', content: null, toolCalls: [{ id: 'tooluse_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'tool', toolCallId: 'tooluse_1', content: 'sunny' },
        ],
      }),
    );
    expect(result).toMatchObject({ finishReason: 'tool_calls', toolCalls: [{ name: 'get_weather', arguments: '{"city":"Lyon"}' }] });
    const body = fake.lastRequest()?.body;
    expect(body?.system).toEqual([{ text: 'Be brief.' }]);
    expect(body?.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather where this is?' }, { image: { format: 'png', source: { bytes: PIXEL_PNG } } }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'sunny' }] } }] },
    ]);
    expect(body?.toolConfig).toMatchObject({ tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: WEATHER.parameters } } }], toolChoice: { tool: { name: 'get_weather' } } });
    expect(body?.inferenceConfig).toEqual({ maxTokens: 300, temperature: 0.2, stopSequences: ['END'] });
    // A model without vision refuses the image as the service does.
    const refused = await failure(model().stream({ model: 'meta.llama3-1-8b-instruct-v1:0', messages: [{ role: 'user', content: [{ type: 'image', mediaType: 'image/png', data: PIXEL_PNG }] }] }));
    expect(refused).toMatchObject({ code: 'upstream_error', message: `Model provider bedrock (${fake.url}) answered HTTP 400 (ValidationException)`, details: { status: 400 } });
  });

  it('signs with a session token for temporary credentials, and never shows the secret or the token', async () => {
    const temp = bedrockChatModel(options({ region: 'eu-central-1', sessionToken, baseURL: temporary.url }));
    expect((await collectChat(temp.stream(ask('Hello')))).content).toBe('You said: Hello');
    const sent = temporary.lastRequest();
    expect(sent?.headers['x-amz-security-token']).toBe(sessionToken);
    expect(sent?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAUSERKEY000000001\/\d{8}\/eu-central-1\/bedrock\/aws4_request, SignedHeaders=[^,]*x-amz-security-token/);
    // Without the token, the service does not know the key.
    const without = await failure(bedrockChatModel(options({ region: 'eu-central-1', baseURL: temporary.url })).stream(ask('Hello')));
    expect(without).toMatchObject({ code: 'upstream_error', retryable: false, details: { provider: 'bedrock', status: 403, kind: 'auth' } });
    const wrong = await failure(bedrockChatModel(options({ region: 'eu-central-1', sessionToken, baseURL: temporary.url, secretAccessKey: 'wrong/secret+value' })).stream(ask('Hello')));
    expect(wrong.message).toBe(`Model provider bedrock (${temporary.url}) refused the credentials (HTTP 403) (InvalidSignatureException)`);
    for (const error of [without, wrong]) expect(JSON.stringify({ message: error.message, details: error.details })).not.toMatch(/wrong\/secret|user\/secret|user-session/);
  });

  it('streams reasoning apart from the text with reasoningConfig (Claude’s thinking on the wire), and reports cache usage', async () => {
    fake.script({ reasoning: 'Two and two make four.', text: 'Four.', usage: { promptTokens: 20, completionTokens: 9, cacheReadInputTokens: 100, cacheWriteInputTokens: 30 } });
    const events = await drain(model().stream(ask('2+2?', { maxTokens: 100, providerOptions: { reasoningConfig: { type: 'enabled', budgetTokens: 1024 } } })));
    expect(events.flatMap((e) => (e.type === 'reasoning' ? [e.delta] : [])).join('')).toBe('Two and two make four.');
    expect(events.flatMap((e) => (e.type === 'text' ? [e.delta] : [])).join('')).toBe('Four.');
    expect(fake.lastRequest()?.body).toMatchObject({ additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } }, inferenceConfig: { maxTokens: 1124 } });
    expect(events.at(-1)).toEqual({
      type: 'finish',
      reason: 'stop',
      usage: { promptTokens: 150, completionTokens: 9, totalTokens: 159, cachedPromptTokens: 100, cacheWritePromptTokens: 30 },
      reasoning: [{ text: 'Two and two make four.', metadata: { bedrock: { signature: expect.any(String) } } }],
    });
  });

  it('carries the signed reasoning block of a tool round back with the tool results (sendReasoning), as Claude on Bedrock requires', async () => {
    const thinking = { reasoningConfig: { type: 'enabled', budgetTokens: 1024 } };
    const call = { id: 'tooluse_1', name: 'get_weather', arguments: '{"city":"Paris"}' };
    fake.script({ reasoning: 'I need the weather first.', toolCalls: [call] });
    const events = await drain(model().stream(ask('Weather in Paris?', { maxTokens: 100, providerOptions: thinking, tools: [WEATHER] })));
    const finish = events.at(-1);
    expect(finish).toMatchObject({ type: 'finish', reason: 'tool_calls', reasoning: [{ text: 'I need the weather first.', metadata: { bedrock: { signature: expect.any(String) } } }] });
    const reasoning = finish?.type === 'finish' ? finish.reasoning : undefined;
    const next = (blocks: typeof reasoning): ChatRequest => ({
      ...ask('Weather in Paris?', { maxTokens: 100, providerOptions: thinking, tools: [WEATHER] }),
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: null, toolCalls: [call], ...(blocks ? { reasoning: blocks } : {}) },
        { role: 'tool', toolCallId: 'tooluse_1', content: 'sunny' },
      ],
    });
    fake.script({ reasoning: 'It is sunny.', text: 'Sunny in Paris.' });
    expect(await collectChat(model().stream(next(reasoning)))).toMatchObject({ content: 'Sunny in Paris.', finishReason: 'stop' });
    const signature = (reasoning?.[0]?.metadata?.bedrock as { signature?: string } | undefined)?.signature;
    const sent = fake.lastRequest()?.body.messages as { content: Record<string, unknown>[] }[] | undefined;
    expect(sent?.[1]?.content[0]).toEqual({ reasoningContent: { reasoningText: { text: 'I need the weather first.', signature } } });
    // Without the block, or with its text changed, Bedrock refuses the step (a ValidationException, 400).
    expect(await failure(model().stream(next(undefined)))).toMatchObject({ code: 'upstream_error', details: { status: 400 } });
    expect(await failure(model().stream(next(reasoning?.map((block) => ({ ...block, text: 'Something else.' })))))).toMatchObject({ code: 'upstream_error', details: { status: 400 } });
  });

  it('answers responseFormat through the forced json tool the fake checks: the schema as its input schema, json_object as { type: object }', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    fake.script({ text: '{"city":"Paris"}' });
    const answer = await collectChat(model().stream(ask('Capital of France?', { responseFormat: { type: 'json_schema', name: 'capital', schema } })));
    expect(answer).toMatchObject({ content: '{"city":"Paris"}', finishReason: 'stop', toolCalls: [] });
    expect(fake.lastRequest()?.body.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'json', description: 'Respond with a JSON object.', inputSchema: { json: schema } } }],
      toolChoice: { any: {} },
    });
    fake.script({ text: '{"answer":42}' });
    const object = await collectChat(model().stream(ask('Answer 42 as JSON.', { responseFormat: { type: 'json_object' } })));
    expect(JSON.parse(object.content)).toEqual({ answer: 42 });
    const sent = fake.lastRequest()?.body;
    expect(sent?.toolConfig).toMatchObject({ tools: [{ toolSpec: { name: 'json', inputSchema: { json: { type: 'object' } } } }], toolChoice: { any: {} } });
    expect(sent).not.toHaveProperty('structuredOutputMode');
    expect(sent?.additionalModelRequestFields).toBeUndefined();
  });

  it('answers a structured output beside other tools through the json tool, and a named tool choice through that tool, as Converse does', async () => {
    // The AI SDK forces its json tool with toolChoice any beside the caller's tools: a forced reply goes to json, not the first tool.
    fake.script({ text: '{"answer":42}' });
    const answer = await collectChat(model().stream(ask('Answer 42 as JSON.', { tools: [WEATHER], responseFormat: { type: 'json_object' } })));
    expect(fake.lastRequest()?.body.toolConfig).toMatchObject({ tools: [{ toolSpec: { name: 'get_weather' } }, { toolSpec: { name: 'json' } }], toolChoice: { any: {} } });
    expect(answer).toMatchObject({ content: '{"answer":42}', toolCalls: [] });
    // A named tool (toolChoice tool) gets the call, whichever place it has.
    const CLOCK = { name: 'get_time', description: 'Time of a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } };
    fake.script({ text: '{"city":"Oslo"}' });
    const named = await collectChat(model().stream(ask('Time in Oslo?', { tools: [WEATHER, CLOCK], toolChoice: { name: 'get_time' } })));
    expect(fake.lastRequest()?.body.toolConfig).toMatchObject({ toolChoice: { tool: { name: 'get_time' } } });
    expect(named.toolCalls).toEqual([expect.objectContaining({ name: 'get_time', arguments: '{"city":"Oslo"}' })]);
  });

  it('passes the allowed provider options to the wire; a guardrail that intervenes ends the answer as content_filter', async () => {
    const guardrailConfig = { guardrailIdentifier: 'gr-test', guardrailVersion: '1', trace: 'enabled' as const };
    const blocked = await collectChat(
      model().stream(ask('Tell me the forbidden thing', { providerOptions: { guardrailConfig, performanceConfig: { latency: 'optimized' }, serviceTier: 'priority' } })),
    );
    expect(blocked).toMatchObject({ content: 'Sorry, the model cannot answer this question.', finishReason: 'content_filter' });
    expect(fake.lastRequest()?.body).toMatchObject({ guardrailConfig, performanceConfig: { latency: 'optimized' }, serviceTier: { type: 'priority' } });
    await collectChat(model().stream(ask('Hi', { providerOptions: { additionalModelRequestFields: { top_k: 40 } } })));
    expect(fake.lastRequest()?.body.additionalModelRequestFields).toEqual({ top_k: 40 });
  });

  it('refuses any other provider option (invalid_request naming it), before a request is made', async () => {
    const messages = await failure(model().stream(ask('Hi', { providerOptions: { messages: [{ role: 'user', content: [{ text: 'injected' }] }] } })));
    expect(messages).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^bedrock: providerOptions\.messages is not an allowed provider option \(Bedrock takes guardrailConfig, reasoningConfig, /),
    });
    expect((messages as { issues?: unknown }).issues).toEqual([expect.objectContaining({ path: ['providerOptions'], code: 'unrecognized_keys' })]);
    const nested = await failure(model().stream(ask('Hi', { providerOptions: { guardrailConfig: { guardrailIdentifier: 'gr-test', guardrailVersion: '1', extra: true } } })));
    expect(nested.message).toBe('bedrock: providerOptions.guardrailConfig.extra is not an allowed provider option (not a field of providerOptions.guardrailConfig)');
    const wrongType = await failure(model().stream(ask('Hi', { providerOptions: { serviceTier: 'fastest' } })));
    expect(wrongType).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^bedrock: providerOptions\.serviceTier: /) });
    for (const key of ['system', 'toolConfig', 'structuredOutputMode', 'anthropicBeta']) {
      expect(await failure(model().stream(ask('Hi', { providerOptions: { [key]: {} } })))).toMatchObject({ code: 'invalid_request' });
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('maps each error answer through the adapter: auth, rate_limited (also a quota), context_length, model_not_found, a mid-stream exception', async () => {
    const where = `Model provider bedrock (${fake.url})`;
    fake.script({ status: 429 });
    expect(await failure(model().stream(ask('Hi')))).toMatchObject({
      code: 'upstream_error',
      retryable: true,
      message: `${where} is rate limiting requests (HTTP 429) (ThrottlingException)`,
      details: { provider: 'bedrock', upstream: fake.url, status: 429, kind: 'rate_limited' },
    });
    fake.script({ status: 400, errorType: 'ServiceQuotaExceededException', errorMessage: 'Your request exceeds the service quota for your account.' });
    expect(await failure(model().stream(ask('Hi')))).toMatchObject({ retryable: false, details: { status: 400, kind: 'rate_limited' } });
    expect(await failure(model().stream(ask('x '.repeat(20_000))))).toMatchObject({
      message: `${where} refused the request: the prompt is too long for the model ${MODEL} (HTTP 400) (ValidationException)`,
      details: { kind: 'context_length' },
    });
    expect(await failure(model().stream(ask('Hi', { model: 'anthropic.claude-nope-v9:0' })))).toMatchObject({
      message: `${where} does not know the model anthropic.claude-nope-v9:0 (HTTP 400) (ValidationException)`,
      details: { kind: 'model_not_found' },
    });
    fake.script({ status: 404 });
    expect(await failure(model().stream(ask('Hi')))).toMatchObject({ details: { status: 404, kind: 'model_not_found' } });
    fake.script({ status: 403 });
    expect(await failure(model().stream(ask('Hi')))).toMatchObject({ message: `${where} refused the credentials (HTTP 403) (AccessDeniedException)`, details: { kind: 'auth' } });
    fake.script({ text: 'one two three four', exception: { type: 'modelStreamErrorException', afterEvents: 3 } });
    const events: ChatEvent[] = [];
    const midStream = await failure(
      (async function* () {
        for await (const event of model().stream(ask('Hi'))) {
          events.push(event);
          yield event;
        }
      })(),
    );
    expect(events.some((e) => e.type === 'text')).toBe(true);
    expect(midStream).toMatchObject({ code: 'upstream_error', retryable: true, message: `${where} reported an error mid-stream` });
  });

  it('retries a failure before the stream began, not after it', async () => {
    fake.script({ status: 503 }, { text: 'Back again.' });
    expect((await collectChat(model({ maxRetries: 1 }).stream(ask('Hi')))).content).toBe('Back again.');
    expect(fake.requests.map((r) => r.status)).toEqual([503, 200]);
  });

  it('closes the upstream connection when the caller aborts, and when the stream stalls past timeoutMs', async () => {
    fake.script({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), chunkDelayMs: 30 });
    await expectAbortClosesUpstream(model(), fake, ask('Count'));
    fake.script({ text: 'one two three', stallAfterEvents: 2 });
    expect(await failure(model({ timeoutMs: 300 }).stream(ask('Hi')))).toMatchObject({ code: 'timeout', message: `Model provider bedrock (${fake.url}) stopped streaming: no data for 300 ms` });
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('goes only through the fetch it is given: the outbound policy’s refusal passes through, and the fake gets no request (chat and listing)', async () => {
    await expectOnlyThroughFetch((fetch) => model({ fetch }), fake, ask('Hi'));
  });

  it('bounds each event stream message by answerLimit (a longer one is cut off before it is held), never the stream by its line ends', async () => {
    const limit = { bytes: 400, setting: '--max-model-answer' };
    fake.script({ text: `${'x'.repeat(600)} and more words after it`, chunkDelayMs: 50 });
    expect(await failure(model({ answerLimit: limit }).stream(ask('Hi')))).toMatchObject({
      code: 'upstream_error',
      message: `Model provider bedrock (${fake.url}) sent an event larger than 400 bytes, the limit set by --max-model-answer: it was cut off there and not used`,
    });
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
    // 60 small messages: many times the limit on the wire, and no newline byte among them, yet each is one event.
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    fake.script({ text: words });
    expect((await collectChat(model({ answerLimit: limit }).stream(ask('Hi')))).content).toBe(words);
  });

  it('bounds the tool input the AI SDK holds (its forced json tool’s, handed on only when the block stops): cut off as it passes answerLimit', async () => {
    const limit = { bytes: 1000, setting: '--max-model-answer' };
    // Three fragments of 700 bytes, each message under the limit; then the stream stalls before the block stops.
    fake.script({ text: `"${'y'.repeat(2098)}"`, stallAfterEvents: 5 });
    const error = await failure(model({ answerLimit: limit, timeoutMs: 5000 }).stream(ask('JSON please', { responseFormat: { type: 'json_object' } })));
    expect(error).toMatchObject({
      code: 'upstream_error',
      message: `Model provider bedrock (${fake.url}) sent an answer larger than 1000 bytes, the limit set by --max-model-answer: it was cut off there and not used`,
    });
    expect(await fake.lastRequest()?.ended).toBe('client_closed');
  });

  it('lists the text models callable on demand from the control plane, signed; maps its failures as the chat’s', async () => {
    expect(await model().listModels?.()).toEqual(FAKE_BEDROCK_MODELS);
    expect(fake.lastRequest()).toMatchObject({ method: 'GET', operation: 'foundation-models', status: 200, path: '/foundation-models?byOutputModality=TEXT&byInferenceType=ON_DEMAND' });
    expect(await bedrockChatModel(options({ region: 'eu-central-1', sessionToken, baseURL: temporary.url })).listModels?.()).toEqual(FAKE_BEDROCK_MODELS);
    const error = await model({ secretAccessKey: 'wrong-secret-value' })
      .listModels?.()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'upstream_error',
      retryable: false,
      message: `Model provider bedrock (${fake.url}) refused the credentials (HTTP 403) (InvalidSignatureException)`,
      details: { provider: 'bedrock', status: 403, kind: 'auth' },
    });
    expect(JSON.stringify(error)).not.toContain('wrong-secret-value');
    await expect(model().listModels?.({ signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'aborted' });
  });

  it('refuses options that are missing, or a region that is not one (it becomes part of a host name)', () => {
    expect(() => model({ region: 'us-east-1.evil.example#' })).toThrow(/region must be an AWS region/);
    expect(() => model({ accessKeyId: '' })).toThrow(/accessKeyId is required/);
    expect(() => model({ secretAccessKey: '' })).toThrow(/secretAccessKey is required/);
    expect(() => model({ sessionToken: '' })).toThrow(/sessionToken/);
    expect(() => model({ baseURL: 'ftp://host' })).toThrow(/not an http\(s\) URL/);
    expect(() => model({ timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => model({ maxRetries: -1 })).toThrow(/maxRetries/);
    expect(model({ region: 'us-gov-west-1' }).provider).toBe('bedrock');
  });
});

describe('bedrockSetup: nothing of the operator’s AWS environment reaches a user’s call', () => {
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
    fake.reset();
    temporary.reset();
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

  /** One ConverseStream call through the setup's provider (the AI SDK's model over our fetch), read to its end. */
  async function streamParts(setup: ReturnType<typeof bedrockSetup>): Promise<LanguageModelV3StreamPart[]> {
    const { stream } = await setup.provider.languageModel(MODEL).doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }] });
    const out: LanguageModelV3StreamPart[] = [];
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      if (next.value.type === 'error') throw next.value.error;
      out.push(next.value);
    }
    return out;
  }

  it("signs with the user's keys for the user's region and endpoint, whatever the operator's AWS environment holds", async () => {
    const parts = await streamParts(bedrockSetup(options()));
    expect(parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : [])).join('')).toBe('You said: Hello there');
    const sent = fake.lastRequest();
    expect(sent).toMatchObject({ status: 200, operation: 'converse-stream', modelId: MODEL });
    expect(sent?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAUSERKEY000000001\/\d{8}\/us-east-1\/bedrock\/aws4_request, /);
    expect(sent?.headers['x-amz-security-token']).toBeUndefined();
    expect(JSON.stringify(sent?.headers)).not.toMatch(/operator/);
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
