import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuardedFetch, createOutboundPolicy } from '@agent-platform/core';
import { describeEmbeddingModel } from '@agent-platform/core/testing';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openaiEmbedder } from '../src/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from './openai-server.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test', models: { 'text-embedding-3-small': 1536, 'text-embedding-ada-002': 1536, 'nomic-embed-text': 768 } });
});
afterAll(async () => {
  await fake.close();
});

describeEmbeddingModel('openai (loopback server speaking /v1/embeddings)', {
  create: () => openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, batchSize: 16 }),
});

const sentSince = (n: number) => fake.requests.slice(n);
const inputsOf = (r: FakeOpenAI['requests'][number]) => r.body.input as string[];

describe('openaiEmbedder', () => {
  it('sends the key, the model and a batch of texts; asks for base64 (the client default); learns the dimensions', async () => {
    const model = openaiEmbedder({ model: 'nomic-embed-text', apiKey: 'sk-test', baseURL: fake.url, batchSize: 2 });
    expect(model.id).toBe('openai:nomic-embed-text');
    expect(model.dimensions).toBe(0);
    const before = fake.requests.length;
    const vectors = await model.embed(['alpha', 'beta', 'gamma']);
    expect(vectors.map((v) => v.length)).toEqual([768, 768, 768]);
    expect(model.dimensions).toBe(768);
    const sent = sentSince(before);
    expect(sent).toHaveLength(2);
    expect(sent[0]?.authorization).toBe('Bearer sk-test');
    expect(sent[0]?.body).toEqual({ model: 'nomic-embed-text', input: ['alpha', 'beta'], encoding_format: 'base64' });
    expect(sent[1]?.body).toMatchObject({ input: ['gamma'] });
  });

  it('gives the same unit vectors with encoding_format float', async () => {
    const base64 = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url });
    const float = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, encodingFormat: 'float' });
    const before = fake.requests.length;
    const [a] = await base64.embed(['one two three two']);
    const [b] = await float.embed(['one two three two']);
    expect(sentSince(before).map((r) => r.body.encoding_format)).toEqual(['base64', 'float']);
    expect(Array.from(a ?? [])).toEqual(Array.from(b ?? []));
    // bag of words: one, two twice, three → norm sqrt(6)
    expect(Math.max(...(a ?? []))).toBeCloseTo(2 / Math.sqrt(6), 6);
  });

  it('sends the dimensions it is given', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, dimensions: 256 });
    expect(model.dimensions).toBe(256);
    const before = fake.requests.length;
    const [v] = await model.embed(['shorter vectors']);
    expect(v?.length).toBe(256);
    expect(sentSince(before)[0]?.body.dimensions).toBe(256);
  });

  it('truncates a text to maxInputTokens cl100k tokens, so the server takes it', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url });
    const long = Array.from({ length: 12_000 }, (_, i) => `w${i % 997}`).join(' ');
    expect(countTokens(long)).toBeGreaterThan(8192);
    const before = fake.requests.length;
    const [v] = await model.embed([long]);
    expect(v?.length).toBe(1536);
    const sent = inputsOf(sentSince(before)[0] as FakeOpenAI['requests'][number])[0] as string;
    expect(countTokens(sent)).toBeLessThanOrEqual(8191);
    expect(countTokens(sent)).toBeGreaterThan(8000);
    expect(long.startsWith(sent)).toBe(true);

    const small = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxInputTokens: 10 });
    const at = fake.requests.length;
    await small.embed(['one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen']);
    expect(countTokens(inputsOf(sentSince(at)[0] as FakeOpenAI['requests'][number])[0] as string)).toBeLessThanOrEqual(10);
  });

  it('splits a batch before it passes maxRequestTokens', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxRequestTokens: 9 });
    const before = fake.requests.length;
    const vectors = await model.embed(['one two three four', 'five six seven eight', 'nine ten', 'eleven']);
    expect(vectors).toHaveLength(4);
    expect(sentSince(before).map(inputsOf)).toEqual([
      ['one two three four', 'five six seven eight'],
      ['nine ten', 'eleven'],
    ]);
  });

  it('maps a 500 to a retryable upstream_error naming the server and the status', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
    fake.failNext(500);
    const error = await model.embed(['x']).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'PlatformError', code: 'upstream_error', retryable: true, details: { upstream: fake.url, status: 500 } });
    expect((error as Error).message).toBe(`Embedding upstream ${fake.url} answered HTTP 500 (server_error)`);
  });

  it('maps a 429 to a retryable upstream_error', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0 });
    fake.failNext(429);
    await expect(model.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error', retryable: true, message: expect.stringMatching(/answered HTTP 429 \(rate_limit_exceeded\)$/) });
  });

  it('lets the client retry a 503 (it honours retry-after-ms)', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxRetries: 1 });
    const before = fake.requests.length;
    fake.failNext(503);
    expect(await model.embed(['retried'])).toHaveLength(1);
    expect(sentSince(before)).toHaveLength(2);
  });

  it('maps a 401 to an upstream_error that says the credentials were refused', async () => {
    const wrong = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-wrong-key', baseURL: fake.url, maxRetries: 0 });
    const error = await wrong.embed(['x']).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'upstream_error', retryable: false, details: { status: 401 } });
    // The status and the error's code, never the server's text.
    expect((error as Error).message).toBe(`Embedding upstream ${fake.url} refused the credentials (HTTP 401) (invalid_api_key)`);
    const before = fake.requests.length;
    const none = openaiEmbedder({ model: 'text-embedding-3-small', baseURL: fake.url, maxRetries: 0 });
    await expect(none.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error', message: expect.stringMatching(/\(no API key was configured\)$/) });
    expect(fake.requests.length).toBe(before); // refused before the route: not recorded
  });

  it('maps an unknown model (404) and a rejected parameter (400) to non-retryable upstream_errors', async () => {
    const unknown = openaiEmbedder({ model: 'no-such-model', apiKey: 'sk-test', baseURL: fake.url });
    await expect(unknown.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error', retryable: false, message: expect.stringMatching(/HTTP 404 \(model_not_found\)$/) });
    const ada = openaiEmbedder({ model: 'text-embedding-ada-002', apiKey: 'sk-test', baseURL: fake.url, dimensions: 256 });
    await expect(ada.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error', retryable: false, message: expect.stringMatching(/HTTP 400 \(invalid_request_error\)$/) });
  });

  it('reports an unreachable server as a retryable upstream_error', async () => {
    const model = openaiEmbedder({ model: 'm', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, timeoutMs: 2000 });
    await expect(model.embed(['x'])).rejects.toMatchObject({
      code: 'upstream_error',
      retryable: true,
      message: expect.stringMatching(/^Embedding upstream http:\/\/127\.0\.0\.1:9\/v1 could not be reached/),
    });
  });

  it('says when the host name of the base URL does not resolve (the guarded fetch), naming the upstream', async () => {
    const fetch = createGuardedFetch(createOutboundPolicy(), { lookup: async () => [] }) as unknown as typeof globalThis.fetch;
    const model = openaiEmbedder({ model: 'm', baseURL: 'http://nothing.invalid/v1', maxRetries: 0, fetch });
    await expect(model.embed(['x'])).rejects.toMatchObject({
      code: 'unavailable',
      message: "Embedding upstream http://nothing.invalid/v1 could not be reached: host name 'nothing.invalid' does not resolve",
      details: { host: 'nothing.invalid' },
    });
  });

  it('rejects an answer that is not an embedding list, and never shows credentials of the base URL', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('upstream proxy says hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const model = openaiEmbedder({ model: 'm', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
      const error = await model.embed(['x']).catch((e: unknown) => e);
      expect((error as Error).message).toBe(`Embedding upstream http://127.0.0.1:${port}/v1 answered with an unexpected body (no data list)`);
      expect(error).toMatchObject({ code: 'upstream_error' });
      // fetch refuses a URL with credentials and quotes it; the error must not.
      const withCredentials = openaiEmbedder({ model: 'm', baseURL: `http://user:secret@127.0.0.1:${port}/v1?tenant=x`, maxRetries: 0 });
      const refused = await withCredentials.embed(['x']).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'upstream_error', message: expect.stringMatching(new RegExp(`^Embedding upstream http://127\\.0\\.0\\.1:${port}/v1 could not be reached`)) });
      expect((refused as Error).message).not.toMatch(/secret/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('rejects with the abort reason when the signal is aborted', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url });
    const controller = new AbortController();
    controller.abort(new Error('stop now'));
    await expect(model.embed(['x'], { signal: controller.signal })).rejects.toThrow('stop now');
  });

  it('validates its options', () => {
    expect(() => openaiEmbedder({ model: 'm', batchSize: 4096 })).toThrow(/batchSize/);
    expect(() => openaiEmbedder({ model: '' })).toThrow(/model/);
  });
});

describe('the loopback server', () => {
  const post = (body: unknown) => fetch(`${fake.url}/embeddings`, { method: 'POST', headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('answers the documented shape, in float and base64', async () => {
    type Answer = { data: { object: string; index: number; embedding: number[] | string }[] };
    const float = (await (await post({ model: 'nomic-embed-text', input: 'hello world' })).json()) as Answer;
    expect(float).toMatchObject({ object: 'list', model: 'nomic-embed-text', usage: { prompt_tokens: 2, total_tokens: 2 } });
    expect(float.data).toHaveLength(1);
    expect(float.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    const b64 = (await (await post({ model: 'nomic-embed-text', input: ['hello world'], encoding_format: 'base64' })).json()) as Answer;
    const bytes = Buffer.from(b64.data[0]?.embedding as string, 'base64');
    expect(Array.from(new Float32Array(new Uint8Array(bytes).buffer))).toEqual(float.data[0]?.embedding);
  });

  it('rejects what OpenAI rejects', async () => {
    expect((await post({ input: 'x' })).status).toBe(400);
    expect((await post({ model: 'nomic-embed-text', input: '' })).status).toBe(400);
    expect((await post({ model: 'nomic-embed-text', input: [] })).status).toBe(400);
    expect((await post({ model: 'nomic-embed-text', input: 'x', encoding_format: 'hex' })).status).toBe(400);
    expect((await post({ model: 'nomic-embed-text', input: 'word '.repeat(9000) })).status).toBe(400);
    expect((await post({ model: 'nomic-embed-text', input: Array.from({ length: 2049 }, () => 'x') })).status).toBe(400);
  });
});
