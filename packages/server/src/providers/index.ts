import { anthropicChatModel } from '@agent-platform/adapters-models/anthropic';
import { azureChatModel } from '@agent-platform/adapters-models/azure';
import { bedrockChatModel } from '@agent-platform/adapters-models/bedrock';
import { googleChatModel } from '@agent-platform/adapters-models/google';
import { ollamaChatModel } from '@agent-platform/adapters-models/ollama';
import type { OpenAIChatModelOptions } from '@agent-platform/adapters-models/openai';
import { type ByteLimit, type ChatModel, type ChatModelResolver, MODEL_PROVIDERS, type ModelProviderEntry, type ModelProviderId, PlatformError } from '@agent-platform/core';
import type { OutboundFetches } from '../outbound.js';
import { openaiModel } from './openai.js';
import { proxiedFetch } from './proxy.js';

/**
 * Where a provider's calls go when the credential names no `baseUrl`, or there is no credential:
 * the provider's `defaultBaseUrl` (registries/model-providers.ts in core): `openai` →
 * OPENAI_BASE_URL or https://api.openai.com/v1; `ollama` → OLLAMA_HOST or
 * http://127.0.0.1:11434. Projects show it in `resolved.baseUrl`.
 */
export function providerBaseUrl(env: NodeJS.ProcessEnv, provider: string): string | undefined {
  if (!Object.hasOwn(MODEL_PROVIDERS, provider)) return undefined;
  const entry: ModelProviderEntry = MODEL_PROVIDERS[provider as ModelProviderId];
  return entry.defaultBaseUrl ? env[entry.defaultBaseUrl.env] || entry.defaultBaseUrl.url : undefined;
}

/** What every factory gets besides the call's own config: the fetch, retries, time and answer limits, the provider's address and key. */
type Common = Pick<OpenAIChatModelOptions, 'maxRetries' | 'fetch' | 'timeoutMs' | 'answerLimit'>;

/** A credential's fields (the caller's, else the operator's environment), as the provider's registry entry declares them. */
type Fields = Readonly<Record<string, unknown>>;

/**
 * Makes a provider's chat model from the call's config, its address (the credential's, else the
 * default) and its credential's fields (the caller's, else the operator's environment).
 */
type ChatModelFactory = (common: Common, baseUrl: string | undefined, fields: Fields) => ChatModel;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * One factory per provider of the registry: a provider without one is a compile error, and a
 * name that is none of them is refused (never sent to another provider's address).
 */
const CHAT_MODELS = {
  openai: (common, baseUrl, fields) => openaiModel(common, baseUrl, text(fields.apiKey)),
  ollama: (common, baseUrl, fields) => ollamaChatModel({ ...common, ...(baseUrl !== undefined ? { host: baseUrl } : {}), ...(text(fields.apiKey) ? { apiKey: text(fields.apiKey) } : {}) }),
  local: () => {
    throw new PlatformError('unsupported', 'The local provider has no bundled model in this version; use openai or ollama');
  },
  bedrock: (common, baseUrl, fields) => {
    const [region, accessKeyId, secretAccessKey, sessionToken] = [fields.region, fields.accessKeyId, fields.secretAccessKey, fields.sessionToken].map(text);
    if (!region || !accessKeyId || !secretAccessKey) {
      throw PlatformError.invalid('Provider bedrock needs a credential of yours (region, accessKeyId, secretAccessKey): the server reads no AWS environment for users (POST /api/v1/credentials)');
    }
    return bedrockChatModel({ ...common, region, accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}), ...(baseUrl !== undefined ? { baseURL: baseUrl } : {}) });
  },
  google: (common, baseUrl, fields) => googleChatModel({ ...common, apiKey: text(fields.apiKey) ?? '', ...(baseUrl !== undefined ? { baseURL: baseUrl } : {}) }),
  anthropic: (common, baseUrl, fields) => anthropicChatModel({ ...common, apiKey: text(fields.apiKey) ?? '', ...(baseUrl !== undefined ? { baseURL: baseUrl } : {}) }),
  azure: (common, baseUrl, fields) =>
    azureChatModel({
      ...common,
      apiKey: text(fields.apiKey) ?? '',
      ...(text(fields.endpoint) ? { endpoint: text(fields.endpoint) } : {}),
      ...(text(fields.apiVersion) ? { apiVersion: text(fields.apiVersion) } : {}),
      ...(fields.deployments ? { deployments: fields.deployments as Record<string, string> } : {}),
      ...(baseUrl !== undefined ? { baseURL: baseUrl } : {}),
    }),
} satisfies Record<ModelProviderId, ChatModelFactory>;

/** The operator's values of a provider's credential fields (the entry's `env`: the first variable set of each). */
function environmentFields(env: NodeJS.ProcessEnv, entry: ModelProviderEntry): Fields {
  const fields: Record<string, string> = {};
  for (const [field, names] of Object.entries(entry.env ?? {})) {
    const value = names.map((name) => env[name]).find((v) => v !== undefined && v !== '');
    if (value !== undefined) fields[field] = value;
  }
  return fields;
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
    if (!Object.hasOwn(CHAT_MODELS, config.provider)) throw new PlatformError('unsupported', `Unknown model provider "${config.provider}"`);
    const provider = config.provider as ModelProviderId;
    const entry: ModelProviderEntry = MODEL_PROVIDERS[provider];
    // An address a caller chose (a credential's baseUrl, or an address among its fields) goes through the callers' policy.
    const chosen = config.baseUrl !== undefined || (entry.urls ?? []).some((field) => config.fields?.[field] !== undefined);
    const base = chosen ? fetches.callers : fetches.operator;
    const chosenFetch = (config.proxy ? proxiedFetch(env, base, fetches.operator) : base) as unknown as typeof fetch;
    // One retry of a request that failed before its answer began (5xx, 429, connection errors).
    const common = { maxRetries: 1, fetch: chosenFetch, ...(timeout > 0 ? { timeoutMs: timeout } : {}), ...(answerLimit ? { answerLimit } : {}) };
    // The operator's environment only for a call without a credential, whose address is then the provider's default.
    const fields = config.fields ?? (config.apiKey !== undefined ? { apiKey: config.apiKey } : chosen ? {} : environmentFields(env, entry));
    return CHAT_MODELS[provider](common, config.baseUrl ?? providerBaseUrl(env, provider), fields);
  };
  return (config) => {
    const key = JSON.stringify([config.provider, config.apiKey ?? null, config.fields ?? null, config.baseUrl ?? null, config.proxy ?? false]);
    let model = cache.get(key);
    if (!model) {
      if (cache.size >= 1000) cache.delete(cache.keys().next().value as string);
      model = resolve(config);
      cache.set(key, model);
    }
    return model;
  };
}
