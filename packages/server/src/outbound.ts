import { createGuardedFetch, createOutboundPolicy, defaultLocalModelBaseUrl, type GuardedFetch, type OutboundPolicyOptions } from '@agent-platform/core';

/** The Hugging Face hub the `hf:` embedders download from: HF_ENDPOINT (as Hugging Face's own tools read it) or huggingface.co. */
export const hubUrl = (env: NodeJS.ProcessEnv): string => env.HF_ENDPOINT || 'https://huggingface.co/';

/** The proxies of the environment (HTTPS_PROXY for https targets, HTTP_PROXY for http ones, each falling back to the other), or undefined. */
export function proxyUrls(env: NodeJS.ProcessEnv): { readonly http: string; readonly https: string } | undefined {
  const https = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
  const http = env.HTTP_PROXY || env.http_proxy || https;
  return https && http ? { http, https } : undefined;
}

const hostOf = (url: string | undefined): string[] => {
  if (!url) return [];
  try {
    const host = new URL(url).hostname;
    return host ? [host] : [];
  } catch {
    return [];
  }
};

/**
 * The hosts of the operator's own URLs, allowed for the operator's requests (never for the
 * callers'): the hosts of OPENAI_BASE_URL, OLLAMA_HOST, the proxies (HTTPS_PROXY, HTTP_PROXY)
 * and, with model downloads on, HF_ENDPOINT, and of `urls` (the server-wide vector store's
 * endpoints), as written (the operator chose them, private ones included). With `allowlistOnly` the defaults are added too (api.openai.com, 127.0.0.1 for
 * Ollama, and the hub and its download hosts `*.huggingface.co` and `*.hf.co`), since nothing
 * else would be reachable; otherwise those are public or loopback addresses the policy allows.
 */
export function operatorHosts(
  env: NodeJS.ProcessEnv,
  options: { readonly allowlistOnly?: boolean; readonly modelDownloads?: boolean; readonly urls?: readonly string[] } = {},
): string[] {
  const proxies = proxyUrls(env);
  const hosts = [
    ...hostOf(env.OPENAI_BASE_URL),
    ...hostOf(env.OLLAMA_HOST ? defaultLocalModelBaseUrl(env) : undefined),
    ...hostOf(proxies?.http),
    ...hostOf(proxies?.https),
    ...(options.modelDownloads ? hostOf(env.HF_ENDPOINT) : []),
    ...(options.urls ?? []).flatMap(hostOf),
  ];
  if (options.allowlistOnly) {
    hosts.push(...hostOf(env.OPENAI_BASE_URL ? undefined : 'https://api.openai.com/v1'), ...hostOf(defaultLocalModelBaseUrl(env)));
    if (options.modelDownloads && !env.HF_ENDPOINT) hosts.push('huggingface.co', '*.huggingface.co', 'hf.co', '*.hf.co');
  }
  return [...new Set(hosts)];
}

/** The two guarded fetches of a server: one path, two policies (DESIGN.md, "Outbound URLs supplied by API callers"). */
export interface OutboundFetches {
  /**
   * URLs a caller supplies (a local model `baseUrl`, a credential's `baseUrl`, MCP servers,
   * vector store endpoints): the operator's policy, plus OLLAMA_HOST's host (the local model
   * routes reach the operator's runtime for callers).
   */
  readonly callers: GuardedFetch;
  /** The operator's own URLs (the environment): the same fetch and pools, the operator's hosts allowed too (`operatorHosts`). */
  readonly operator: GuardedFetch;
}

/** The guarded fetches of a server from its policy options and environment. Closing `callers` closes both. */
export function outboundFetches(
  outbound: OutboundPolicyOptions,
  env: NodeJS.ProcessEnv,
  options: { readonly modelDownloads?: boolean; readonly operatorUrls?: readonly string[] } = {},
): OutboundFetches {
  const allowed = outbound.allowedHosts ?? [];
  const ollama = env.OLLAMA_HOST ? hostOf(defaultLocalModelBaseUrl(env)) : [];
  const callers = createGuardedFetch(createOutboundPolicy({ ...outbound, allowedHosts: [...allowed, ...ollama] }));
  const own = operatorHosts(env, { allowlistOnly: outbound.allowlistOnly === true, modelDownloads: options.modelDownloads === true, urls: options.operatorUrls ?? [] });
  const operator = callers.withPolicy(createOutboundPolicy({ ...outbound, allowedHosts: [...allowed, ...own] }));
  return { callers, operator };
}
