import { PlatformError } from '@agent-platform/core';
import { ProxyAgent, fetch as undiciFetch } from 'undici';

/**
 * A fetch that sends every request through the operator's HTTP(S) proxy (HTTPS_PROXY for https
 * targets, HTTP_PROXY for http ones, each falling back to the other), for credentials with
 * `proxy: true`.
 */
export function proxiedFetch(env: NodeJS.ProcessEnv): typeof fetch {
  const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy ?? env.HTTP_PROXY ?? env.http_proxy;
  const httpProxy = env.HTTP_PROXY ?? env.http_proxy ?? httpsProxy;
  if (!httpsProxy || !httpProxy) {
    throw PlatformError.invalid('This credential sends its traffic through a proxy (proxy: true), but the server has no HTTPS_PROXY or HTTP_PROXY configured');
  }
  const agents = { 'https:': new ProxyAgent(httpsProxy), 'http:': new ProxyAgent(httpProxy) };
  return ((input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const dispatcher = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
    return undiciFetch(input as never, { ...(init as object), dispatcher } as never);
  }) as unknown as typeof fetch;
}
