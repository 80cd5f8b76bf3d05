import type { ByteLimit, ChatModel, ChatModelResolver } from '@agent-platform/core';
import { ollamaChatModel } from '@agent-platform/adapters-models/ollama';
import { openaiChatModel } from '@agent-platform/adapters-models/openai';
import type { OutboundFetches } from '../outbound.js';
import { proxiedFetch } from './proxy.js';

/**
 * Where a provider's calls go when the credential names no `baseUrl`, or there is no credential:
 * `openai` → OPENAI_BASE_URL or https://api.openai.com/v1; `ollama` → OLLAMA_HOST or
 * http://127.0.0.1:11434. Projects show it in `resolved.baseUrl`.
 */
export function providerBaseUrl(env: NodeJS.ProcessEnv, provider: string): string | undefined {
  if (provider === 'ollama') return env.OLLAMA_HOST || 'http://127.0.0.1:11434';
  if (provider === 'openai') return env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
  return undefined;
}

/**
 * The chat model of a provider call: the caller's credential when they have one, else the
 * environment (DESIGN.md, "Model providers"): `openai` → OPENAI_API_KEY / OPENAI_BASE_URL;
 * `ollama` → OLLAMA_HOST or http://127.0.0.1:11434 (its OpenAI-compatible `/v1`).
 * AGENT_PLATFORM_MODEL_TIMEOUT_MS bounds each provider request (default 120000). A credential
 * with `proxy: true` goes through HTTPS_PROXY / HTTP_PROXY. Every request goes through the
 * guarded fetch: a credential's `baseUrl` (chosen by a caller) through the callers' policy, the
 * environment's addresses through the operator's (their hosts allowed). Each answer is read
 * under `answerLimit` (`--max-model-answer`).
 */
export function chatModelResolver(env: NodeJS.ProcessEnv, fetches: OutboundFetches, answerLimit?: ByteLimit): ChatModelResolver {
  // One client per provider, key and address: clients keep their connections alive.
  const cache = new Map<string, ChatModel>();
  const resolve: ChatModelResolver = (config) => {
    const timeout = Number(env.AGENT_PLATFORM_MODEL_TIMEOUT_MS);
    const base = config.baseUrl !== undefined ? fetches.callers : fetches.operator;
    const chosenFetch = (config.proxy ? proxiedFetch(env, base, fetches.operator) : base) as unknown as typeof fetch;
    // One retry of a request that failed before its answer began (5xx, 429, connection errors).
    const common = { maxRetries: 1, fetch: chosenFetch, ...(timeout > 0 ? { timeoutMs: timeout } : {}), ...(answerLimit ? { answerLimit } : {}) };
    if (config.provider === 'ollama') {
      return ollamaChatModel({ ...common, host: config.baseUrl ?? providerBaseUrl(env, 'ollama'), ...(config.apiKey ? { apiKey: config.apiKey } : {}) });
    }
    const apiKey = config.apiKey ?? env.OPENAI_API_KEY;
    return openaiChatModel({ ...common, ...(apiKey ? { apiKey } : {}), baseURL: config.baseUrl ?? providerBaseUrl(env, 'openai') });
  };
  return (config) => {
    const key = JSON.stringify([config.provider, config.apiKey ?? null, config.baseUrl ?? null, config.proxy ?? false]);
    let model = cache.get(key);
    if (!model) {
      if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
      model = resolve(config);
      cache.set(key, model);
    }
    return model;
  };
}
