import { describeEmbeddingModel } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinEmbedder } from '../src/builtin.js';
import { openaiEmbedder } from '../src/openai.js';
import { type FakeOpenAI, startFakeOpenAI } from './openai-server.js';

describeEmbeddingModel('builtin (Universal Sentence Encoder lite)', { create: () => builtinEmbedder(), semantic: true });

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI(64);
});
afterAll(async () => {
  await fake.close();
});

describeEmbeddingModel('openai-compatible server', {
  create: () => openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, batchSize: 16 }),
});

describe('openaiEmbedder', () => {
  it('sends the key and model, batches, and learns the dimensions', async () => {
    const model = openaiEmbedder({ model: 'nomic-embed-text', apiKey: 'sk-abc', baseURL: fake.url, batchSize: 2 });
    expect(model.id).toBe('openai:nomic-embed-text');
    expect(model.dimensions).toBe(0);
    const before = fake.requests.length;
    await model.embed(['a', 'b', 'c']);
    expect(model.dimensions).toBe(64);
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent[0]?.authorization).toBe('Bearer sk-abc');
    expect(sent[0]?.body).toMatchObject({ model: 'nomic-embed-text', input: ['a', 'b'] });
  });

  it('maps upstream failures to upstream_error naming the server and status', async () => {
    const model = openaiEmbedder({ model: 'm', apiKey: 'bad', baseURL: fake.url, maxRetries: 0 });
    fake.failWith(401);
    await expect(model.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error', retryable: false, message: expect.stringMatching(/answered 401/) });
    fake.failWith(500);
    await expect(model.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error', retryable: true, message: expect.stringMatching(/answered 500/) });
    fake.failWith(undefined);
  });

  it('reports an unreachable server as upstream_error', async () => {
    const model = openaiEmbedder({ model: 'm', baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0, timeoutMs: 2000 });
    await expect(model.embed(['x'])).rejects.toMatchObject({ code: 'upstream_error' });
  });
});

describe('builtinEmbedder', () => {
  it('recovers after close: the next call starts a new worker', async () => {
    const model = builtinEmbedder();
    const [a] = await model.embed(['hello there']);
    await model.close?.();
    const [b] = await model.embed(['hello there']);
    expect(b?.length).toBe(512);
    expect(Array.from(b ?? []).slice(0, 5)).toEqual(Array.from(a ?? []).slice(0, 5));
    await model.close?.();
  });
});
