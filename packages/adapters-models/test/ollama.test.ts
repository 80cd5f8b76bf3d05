import { collectChat } from '@agent-platform/core';
import { describeChatModel } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OllamaTestServer, ollamaTag, startOllamaServer } from '../../core/test/ollama-server.js';
import { DEFAULT_OLLAMA_HOST, ollamaBaseURL, ollamaChatModel } from '../src/ollama.js';
import { type FakeChatServer, startFakeChatServer } from './openai-chat-server.js';

// Ollama's OpenAI-compatible endpoint: the same paths under /v1, no key check, its own model names.
let ollama: FakeChatServer;
beforeAll(async () => {
  ollama = await startFakeChatServer({ models: ['llama3.2:3b', 'qwen2.5:0.5b'] });
});
afterAll(async () => {
  await ollama.close();
});

describeChatModel('ollama (loopback server speaking Ollama’s /v1/chat/completions)', {
  create: () => ollamaChatModel({ host: ollama.origin, maxRetries: 0 }),
  model: 'llama3.2:3b',
  scripted: { next: (reply) => ollama.script(reply) },
});

describe('ollamaChatModel', () => {
  it('calls /v1/chat/completions on the given host, with provider ollama and the placeholder key', async () => {
    const model = ollamaChatModel({ host: ollama.origin });
    expect(model.provider).toBe('ollama');
    // Ollama's endpoint ignores tool_choice, parallel_tool_calls and strict: none is claimed.
    expect(model.capabilities).toEqual({});
    const result = await collectChat(model.stream({ model: 'qwen2.5:0.5b', messages: [{ role: 'user', content: 'Hi Ollama' }] }));
    expect(result.content).toBe('You said: Hi Ollama');
    const sent = ollama.lastRequest();
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.authorization).toBe('Bearer ollama');
    expect(sent?.body).toMatchObject({ model: 'qwen2.5:0.5b', stream: true, stream_options: { include_usage: true } });
  });

  it('accepts a host written as OLLAMA_HOST is: without a scheme, with a trailing slash or /v1', async () => {
    for (const host of [`127.0.0.1:${ollama.port}`, `${ollama.origin}/`, `${ollama.origin}/v1`, `${ollama.origin}/v1/`]) {
      const before = ollama.requests.length;
      await collectChat(ollamaChatModel({ host }).stream({ model: 'llama3.2:3b', messages: [{ role: 'user', content: host }] }));
      expect(ollama.requests.slice(before).map((r) => r.path)).toEqual(['/v1/chat/completions']);
    }
    expect(DEFAULT_OLLAMA_HOST).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseURL()).toBe('http://127.0.0.1:11434/v1');
    expect(ollamaBaseURL('ollama.internal:8080')).toBe('http://ollama.internal:8080/v1');
    expect(ollamaBaseURL('https://gpu.example.com/ollama/')).toBe('https://gpu.example.com/ollama/v1');
  });

  it('names ollama in its errors (an unknown model, an unreachable host)', async () => {
    const model = ollamaChatModel({ host: ollama.origin, maxRetries: 0 });
    await expect(collectChat(model.stream({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }))).rejects.toMatchObject({
      code: 'upstream_error',
      message: `Model provider ollama (${ollama.url}) does not know the model no-such-model (HTTP 404) (model_not_found)`,
      details: { kind: 'model_not_found' },
    });
    const down = ollamaChatModel({ host: 'http://127.0.0.1:9', maxRetries: 0 });
    await expect(collectChat(down.stream({ model: 'llama3.2:3b', messages: [{ role: 'user', content: 'x' }] }))).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^Model provider ollama \(http:\/\/127\.0\.0\.1:9\/v1\) is unreachable/),
    });
  });

  it("lists the installed models from Ollama's own GET /api/tags, wherever the host is written; an error there names the status, not the body", async () => {
    const tags: OllamaTestServer = await startOllamaServer([ollamaTag('llama3.2:3b', 1), ollamaTag('nomic-embed-text:latest', 2)]);
    try {
      for (const host of [tags.url, `127.0.0.1:${tags.port}`, `${tags.url}/v1/`]) {
        expect(await ollamaChatModel({ host, maxRetries: 0 }).listModels?.(), host).toEqual(['llama3.2:3b', 'nomic-embed-text:latest']);
      }
      expect(tags.requests.map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill('GET /api/tags'));
      tags.tagsStatus = 500;
      await expect(ollamaChatModel({ host: tags.url, maxRetries: 0 }).listModels?.()).rejects.toMatchObject({
        code: 'upstream_error',
        details: { status: 500 },
        // The status: never the runtime's own text.
        message: `Model provider ollama (${tags.url}/v1) answered HTTP 500`,
      });
    } finally {
      await tags.close();
    }
  });
});
