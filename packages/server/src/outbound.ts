import { createGuardedFetch, createOutboundPolicy, defaultLocalModelBaseUrl, type GuardedFetch, type OutboundPolicyOptions } from '@agent-platform/core';
import { hostPortEntry } from '@agent-platform/core/internal';

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

/** The allow-list entry of exactly the URL's host and port (`127.0.0.1:11434`), none when it is not a URL. */
const hostPort = (url: string | undefined): string[] => {
  const entry = url ? hostPortEntry(url) : undefined;
  return entry ? [entry] : [];
};

/**
 * What the operator's own requests may reach besides the policy (never the callers'): exactly
 * the host and port of OPENAI_BASE_URL, of the local model runtime (OLLAMA_HOST, else
 * http://127.0.0.1:11434), of the proxies (HTTPS_PROXY, HTTP_PROXY) and, with model downloads
 * on, of HF_ENDPOINT; and the hosts of `urls` (the server-wide vector store's endpoints) on
 * every port, as a store's client may derive another port from its endpoint (Weaviate's gRPC).
 * As written: the operator chose them, private and loopback ones included. With
 * `allowlistOnly` the public defaults are added too (api.openai.com, and the hub and its
 * download hosts `*.huggingface.co` and `*.hf.co`), since nothing else would be reachable.
 */
export function operatorHosts(env: NodeJS.ProcessEnv, options: { readonly allowlistOnly?: boolean; readonly modelDownloads?: boolean; readonly urls?: readonly string[] } = {}): string[] {
  const proxies = proxyUrls(env);
  const hosts = [
    ...hostPort(env.OPENAI_BASE_URL),
    ...hostPort(defaultLocalModelBaseUrl(env)),
    ...hostPort(proxies?.http),
    ...hostPort(proxies?.https),
    ...(options.modelDownloads ? hostPort(env.HF_ENDPOINT) : []),
    ...(options.urls ?? []).flatMap(hostOf),
  ];
  if (options.allowlistOnly) {
    hosts.push(...hostOf(env.OPENAI_BASE_URL ? undefined : 'https://api.openai.com/v1'));
    if (options.modelDownloads && !env.HF_ENDPOINT) hosts.push('huggingface.co', '*.huggingface.co', 'hf.co', '*.hf.co');
  }
  return [...new Set(hosts)];
}

/** The two guarded fetches of a server: one path, two policies (DESIGN.md, "Outbound URLs supplied by API callers"). */
export interface OutboundFetches {
  /**
   * URLs a caller supplies (a local model `baseUrl`, a credential's `baseUrl`, MCP servers,
   * vector store endpoints): the operator's policy alone (`--allow-host`); loopback only where
   * an entry allows it.
   */
  readonly callers: GuardedFetch;
  /** The operator's own URLs (the environment, the server-wide vector store): the same fetch and pools, the operator's hosts allowed too (`operatorHosts`). */
  readonly operator: GuardedFetch;
}

/** The guarded fetches of a server from its policy options and environment. Closing `callers` closes both. */
export function outboundFetches(
  outbound: OutboundPolicyOptions,
  env: NodeJS.ProcessEnv,
  options: { readonly modelDownloads?: boolean; readonly operatorUrls?: readonly string[] } = {},
): OutboundFetches {
  const allowed = outbound.allowedHosts ?? [];
  const callers = createGuardedFetch(createOutboundPolicy({ ...outbound, allowedHosts: allowed }));
  const own = operatorHosts(env, { allowlistOnly: outbound.allowlistOnly === true, modelDownloads: options.modelDownloads === true, urls: options.operatorUrls ?? [] });
  const operator = callers.withPolicy(createOutboundPolicy({ ...outbound, allowedHosts: [...allowed, ...own] }));
  return { callers, operator };
}
