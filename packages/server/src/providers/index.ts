import type { ChatModel, ChatModelResolver, GuardedFetch } from '@agent-platform/core';
import { ollamaChatModel } from '@agent-platform/adapters-models/ollama';
import { openaiChatModel } from '@agent-platform/adapters-models/openai';
import { proxiedFetch } from './proxy.js';

/**
 * The chat model of a provider call: the caller's credential when they have one, else the
 * environment (DESIGN.md, "Model providers"): `openai` → OPENAI_API_KEY / OPENAI_BASE_URL;
 * `ollama` → OLLAMA_HOST or http://127.0.0.1:11434 (its OpenAI-compatible `/v1`).
 * AGENT_PLATFORM_MODEL_TIMEOUT_MS bounds each provider request (default 120000). A credential
 * with `proxy: true` goes through HTTPS_PROXY / HTTP_PROXY. A credential's `baseUrl` (chosen by
 * a caller) is only reached when the outbound policy allows its addresses.
 */
export function chatModelResolver(env: NodeJS.ProcessEnv = process.env, guarded?: GuardedFetch): ChatModelResolver {
  // One client per provider, key and address: clients keep their connections alive.
  const cache = new Map<string, ChatModel>();
  const resolve: ChatModelResolver = (config) => {
    const timeout = Number(env.AGENT_PLATFORM_MODEL_TIMEOUT_MS);
    // A base URL from a caller's credential goes through the outbound policy (checked before any
    // connection); the operator's own addresses (environment) do not need it.
    const callerUrl = config.baseUrl !== undefined && guarded !== undefined;
    let chosenFetch: typeof fetch | undefined;
    if (config.proxy) {
      const viaProxy = proxiedFetch(env);
      chosenFetch = callerUrl
        ? (async (input: string | URL | Request, init?: RequestInit) => {
            await guarded.check(typeof input === 'string' || input instanceof URL ? input : input.url);
            return viaProxy(input, init);
          }) as typeof fetch
        : viaProxy;
    } else if (callerUrl) {
      chosenFetch = guarded as unknown as typeof fetch;
    }
    // One retry of a request that failed before its answer began (5xx, 429, connection errors).
    const common = { maxRetries: 1, ...(chosenFetch ? { fetch: chosenFetch } : {}), ...(timeout > 0 ? { timeoutMs: timeout } : {}) };
    if (config.provider === 'ollama') {
      return ollamaChatModel({ ...common, host: config.baseUrl ?? env.OLLAMA_HOST ?? 'http://127.0.0.1:11434', ...(config.apiKey ? { apiKey: config.apiKey } : {}) });
    }
    const apiKey = config.apiKey ?? env.OPENAI_API_KEY;
    const baseURL = config.baseUrl ?? env.OPENAI_BASE_URL;
    return openaiChatModel({ ...common, ...(apiKey ? { apiKey } : {}), ...(baseURL ? { baseURL } : {}) });
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
