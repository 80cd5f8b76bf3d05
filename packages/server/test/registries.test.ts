import { EMBEDDERS, isPlatformError, MODEL_PROVIDERS, VECTOR_STORES } from '@agent-platform/core';
import { afterAll, describe, expect, it } from 'vitest';
import { embedderResolver, vectorStoreFactory } from '../src/knowledge.js';
import { outboundFetches } from '../src/outbound.js';
import { chatModelResolver, providerBaseUrl } from '../src/providers/index.js';

// Each plug-in kind's factories come from core's registry: every entry has its own, and a name
// that is none of them is refused, never handed to another provider (an Anthropic key must not
// go to OpenAI's address).
const fetches = outboundFetches({}, {});
afterAll(() => fetches.callers.close());

const codeOf = async (run: () => unknown): Promise<string | undefined> => {
  try {
    await run();
    return undefined;
  } catch (error) {
    return isPlatformError(error) ? error.code : 'not a PlatformError';
  }
};

describe('model providers', () => {
  const resolve = chatModelResolver({ OPENAI_API_KEY: 'sk-operator' }, fetches);

  it('makes each provider its own chat model; local has none in this version', () => {
    expect(resolve({ provider: 'openai' }).provider).toBe('openai');
    expect(resolve({ provider: 'ollama' }).provider).toBe('ollama');
    expect(() => resolve({ provider: 'local' })).toThrow(/local provider has no bundled model/);
    expect(Object.keys(MODEL_PROVIDERS)).toEqual(['openai', 'ollama', 'local', 'anthropic', 'azure', 'bedrock', 'google']);
    expect(resolve({ provider: 'anthropic', apiKey: 'sk-ant' }).provider).toBe('anthropic');
  });

  it('refuses a provider it does not know instead of falling through to OpenAI', async () => {
    for (const provider of ['gemini', 'Anthropic', 'OpenAI', '', 'constructor', '__proto__', 'toString']) {
      expect(await codeOf(() => resolve({ provider, apiKey: 'sk-ant-secret' })), provider).toBe('unsupported');
    }
  });

  it('sends a provider without a credential address to its default address from the registry', () => {
    expect(providerBaseUrl({}, 'openai')).toBe('https://api.openai.com/v1');
    expect(providerBaseUrl({ OPENAI_BASE_URL: 'http://10.0.0.5/v1' }, 'openai')).toBe('http://10.0.0.5/v1');
    expect(providerBaseUrl({}, 'ollama')).toBe('http://127.0.0.1:11434');
    expect(providerBaseUrl({ OLLAMA_HOST: 'http://gpu:11434' }, 'ollama')).toBe('http://gpu:11434');
    expect(providerBaseUrl({}, 'local')).toBeUndefined();
    expect(providerBaseUrl({ OPENAI_BASE_URL: 'http://10.0.0.5/v1' }, 'azure')).toBeUndefined();
    expect(providerBaseUrl({}, 'anthropic')).toBe('https://api.anthropic.com/v1');
  });
});

describe('vector stores', () => {
  const make = vectorStoreFactory();

  it("has a factory for every store of the registry: each reads its own configuration (an empty one is that store's 400)", async () => {
    for (const provider of Object.keys(VECTOR_STORES) as (keyof typeof VECTOR_STORES)[]) {
      const error = await Promise.resolve()
        .then(() => make(provider, {}, { fetch: fetches.callers }))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isPlatformError(error) && error.code, provider).toBe('invalid_request');
    }
  });

  it('refuses a store it does not know', async () => {
    for (const provider of ['milvus', 'builtin', 'constructor']) {
      expect(await codeOf(() => make(provider as never, {}, { fetch: fetches.callers })), provider).toBe('unsupported');
    }
  });
});

describe('embedders', () => {
  const resolver = embedderResolver({}, { fetch: fetches.operator });
  afterAll(() => resolver.close());
  const caller = { userId: 'user_a' };

  it('names every kind of the registry when a name is of none', () => {
    expect(Object.keys(EMBEDDERS)).toEqual(['openai', 'local', 'hf']);
    for (const name of ['something', 'cohere:embed-v3', 'openai:', 'constructor:x', 'openai:a\nb']) {
      expect(() => resolver(name, caller), name).toThrow('use "builtin", "openai:<model>", "local:<folder>" or "hf:<owner>/<name>"');
    }
  });

  it('hands each kind to its own factory', () => {
    expect(resolver('openai:text-embedding-3-small', caller).id).toBe('openai:text-embedding-3-small');
    // Without a data folder, local and hf models have nowhere to be: each kind says so itself.
    expect(() => resolver('local:minilm', caller)).toThrow('needs a data folder with a models/ folder');
    expect(() => resolver('hf:owner/name', caller)).toThrow('needs a data folder to keep the model in');
  });
});
