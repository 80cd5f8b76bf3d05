import { crc32 as zlibCrc32 } from 'node:zlib';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeBedrockServer, startFakeBedrockServer } from './fakes/bedrock-server.js';
import { crc32, decodeMessages, encodeEvent, encodeException, encodeMessage } from './fakes/eventstream.js';

/**
 * The fake Bedrock itself, checked against independent implementations: its CRC32 against
 * zlib's, its frames against a frame the real service sent (vercel/ai's recorded fixture
 * `model-stream-error-exception.eventstream.base64.txt`: prelude and CRCs), and its SigV4 check
 * and event stream against the AI SDK's signer (aws4fetch) and decoder (@smithy/eventstream-codec).
 */

const credentials = { accessKeyId: 'AKIAFAKEBEDROCK00001', secretAccessKey: 'fake/secret+KEY/0123456789abcdefghijklmn' };
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
let fake: FakeBedrockServer;
let temporary: FakeBedrockServer;
beforeAll(async () => {
  fake = await startFakeBedrockServer({ credentials });
  temporary = await startFakeBedrockServer({ credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEFAKE//session==' }, region: 'eu-central-1' });
});
afterAll(async () => {
  await fake.close();
  await temporary.close();
});
beforeEach(() => {
  fake.reset();
  temporary.reset();
});

const provider = (server: FakeBedrockServer, settings: Partial<Parameters<typeof createAmazonBedrock>[0]> = {}) =>
  createAmazonBedrock({ apiKey: '', region: 'us-east-1', ...credentials, baseURL: server.url, ...settings });
const prompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hello there' }] }];

async function parts(server: FakeBedrockServer, settings: Partial<Parameters<typeof createAmazonBedrock>[0]> = {}, model = MODEL): Promise<LanguageModelV3StreamPart[]> {
  const { stream } = await provider(server, settings).languageModel(model).doStream({ prompt });
  const out: LanguageModelV3StreamPart[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
  return out;
}

describe('the event stream encoder', () => {
  it('computes CRC32 as zlib does', () => {
    for (const text of ['', 'a', 'The quick brown fox jumps over the lazy dog', 'ü€𝄞'.repeat(50)]) {
      const bytes = Buffer.from(text, 'utf8');
      expect(crc32(bytes)).toBe(zlibCrc32(bytes));
    }
  });

  it('frames a message byte for byte as the service does (prelude, lengths and both CRCs of a recorded frame)', () => {
    const payload = Buffer.from('{"message":"Model Stream Error","originalStatusCode":500,"originalMessage":"The model stream failed."}');
    const frame = Buffer.from(encodeMessage({ ':message-type': 'exception', ':exception-type': 'modelStreamErrorException', ':content-type': 'application/json' }, payload));
    expect([frame.readUInt32BE(0), frame.readUInt32BE(4), frame.readUInt32BE(8), frame.readUInt32BE(frame.length - 4)]).toEqual([0xdd, 0x67, 0xc791907a, 0x57334313]);
  });

  it('round-trips events and exceptions, and its reader refuses a corrupted checksum', () => {
    const body = Buffer.concat([encodeEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }), encodeException('throttlingException', { message: 'slow down' })]);
    const messages = decodeMessages(body);
    expect(messages.map((m) => m.headers)).toEqual([
      { ':event-type': 'contentBlockDelta', ':content-type': 'application/json', ':message-type': 'event' },
      { ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' },
    ]);
    expect(JSON.parse(Buffer.from(messages[0]?.payload ?? []).toString())).toEqual({ contentBlockIndex: 0, delta: { text: 'Hi' } });
    const corrupt = Buffer.from(body);
    corrupt[20] = (corrupt[20] as number) ^ 0xff;
    expect(() => decodeMessages(corrupt)).toThrow(/message checksum mismatch/);
    corrupt[20] = (corrupt[20] as number) ^ 0xff;
    corrupt[9] = (corrupt[9] as number) ^ 0xff;
    expect(() => decodeMessages(corrupt)).toThrow(/prelude checksum mismatch/);
  });
});

describe('the fake Bedrock runtime', () => {
  it('takes a request the AI SDK signed, and streams what the SDK decodes: text, tool calls, stop reason, usage', async () => {
    fake.script({ text: 'Let me look.', toolCalls: [{ name: 'lookup', arguments: { word: 'cat' }, id: 'tooluse_abc' }], usage: { promptTokens: 11, completionTokens: 7, cacheReadInputTokens: 5 } });
    const { stream } = await provider(fake)
      .languageModel(MODEL)
      .doStream({ prompt, tools: [{ type: 'function', name: 'lookup', description: 'Looks up', inputSchema: { type: 'object', properties: { word: { type: 'string' } } } }] });
    const out: LanguageModelV3StreamPart[] = [];
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
    expect(fake.lastRequest()).toMatchObject({ status: 200, operation: 'converse-stream', modelId: MODEL, path: '/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream' });
    expect(
      out
        .filter((p) => p.type === 'text-delta')
        .map((p) => (p as { delta: string }).delta)
        .join(''),
    ).toBe('Let me look.');
    expect(out.find((p) => p.type === 'tool-call')).toMatchObject({ toolCallId: 'tooluse_abc', toolName: 'lookup', input: '{"word":"cat"}' });
    expect(out.at(-1)).toMatchObject({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      usage: { inputTokens: { total: 16, noCache: 11, cacheRead: 5 }, outputTokens: { total: 7 } },
    });
  });

  it('streams reasoning in its own block, and the non-streaming Converse answers the same reply as JSON', async () => {
    fake.script({ reasoning: 'Two plus two is four.', text: 'Four.' });
    const out = await parts(fake);
    expect(out.filter((p) => p.type === 'reasoning-delta').map((p) => (p as { delta: string }).delta)).toEqual(['Two ', 'plus ', 'two ', 'is ', 'four.', '']);
    fake.script({ reasoning: 'Hmm.', text: 'Yes.' });
    const result = await provider(fake).languageModel(MODEL).doGenerate({ prompt });
    expect(result.content.map((c) => c.type)).toEqual(['reasoning', 'text']);
    expect(fake.lastRequest()?.operation).toBe('converse');
  });

  it('checks the signature: a wrong secret, an unknown key, a session token missing or extra, another region or an expired date is refused as AWS refuses it', async () => {
    const refusal = async (server: FakeBedrockServer, settings: Partial<Parameters<typeof createAmazonBedrock>[0]>) => {
      const error = await parts(server, settings).catch((e: unknown) => e);
      return { status: (error as { statusCode?: number }).statusCode, type: server.lastRequest()?.errorType, message: (error as Error).message };
    };
    expect(await refusal(fake, { secretAccessKey: 'wrong' })).toMatchObject({
      status: 403,
      type: 'InvalidSignatureException',
      message: expect.stringMatching(/^The request signature we calculated does not match/),
    });
    expect(await refusal(fake, { accessKeyId: 'AKIAUNKNOWN' })).toMatchObject({ status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' });
    expect(await refusal(fake, { sessionToken: 'stray' })).toMatchObject({ status: 403, type: 'UnrecognizedClientException' });
    expect(await refusal(temporary, { region: 'eu-central-1' })).toMatchObject({ status: 403, type: 'UnrecognizedClientException' });
    expect(await refusal(temporary, { region: 'us-east-1', sessionToken: 'FwoGZXIvYXdzEFAKE//session==' })).toMatchObject({
      status: 403,
      type: 'InvalidSignatureException',
      message: 'Credential should be scoped to a valid region.',
    });
    const stale = (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('x-amz-date', '20200101T000000Z');
      return fetch(input, { ...init, headers });
    };
    expect(await refusal(fake, { fetch: stale })).toMatchObject({ status: 403, type: 'InvalidSignatureException', message: expect.stringMatching(/^Date in Credential scope does not match/) });
    // With the right token, signed for the right region: taken.
    expect((await parts(temporary, { region: 'eu-central-1', sessionToken: 'FwoGZXIvYXdzEFAKE//session==' })).at(-1)).toMatchObject({ type: 'finish' });
    expect(temporary.lastRequest()?.headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEFAKE//session==');
  });

  it('answers a malformed conversation, an unknown model and a long prompt with ValidationExceptions', async () => {
    const error = await parts(fake, {}, 'anthropic.claude-nonexistent').catch((e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 400, message: 'The provided model identifier is invalid.' });
    const long = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'word '.repeat(8000) }] }];
    const tooLong = await Promise.resolve(provider(fake).languageModel(MODEL).doStream({ prompt: long })).catch((e: unknown) => e);
    expect(tooLong).toMatchObject({ statusCode: 400, message: 'Input is too long for requested model.' });
    const assistantFirst = [{ role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Hi' }] }];
    const wrongOrder = await Promise.resolve(provider(fake).languageModel(MODEL).doStream({ prompt: assistantFirst })).catch((e: unknown) => e);
    expect(wrongOrder).toMatchObject({ statusCode: 400, message: expect.stringMatching(/^A conversation must start with a user message/) });
  });

  it('sends an exception frame mid-stream, and a frame with a broken CRC that the decoder refuses', async () => {
    fake.script({ text: 'one two three', exception: { type: 'throttlingException', message: 'Too many tokens, please wait.', afterEvents: 2 } });
    const throttled = await parts(fake);
    expect(throttled.find((p) => p.type === 'error')).toMatchObject({ error: { message: 'Too many tokens, please wait.' } });
    fake.script({ text: 'one two three', corruptEvent: 2 });
    const corrupt = await parts(fake).catch((e: unknown) => e);
    expect(String(corrupt)).toMatch(/checksum/i);
  });
});
