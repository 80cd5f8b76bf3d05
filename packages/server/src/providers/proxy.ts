import { type GuardedFetch, PlatformError } from '@agent-platform/core';
import { proxyUrls } from '../outbound.js';

/**
 * `fetch` sending every request through the operator's HTTP(S) proxy (HTTPS_PROXY for https
 * targets, HTTP_PROXY for http ones, each falling back to the other), for credentials with
 * `proxy: true`: each target, and each redirect hop, is checked by `fetch`'s policy first, and
 * the connection to the proxy goes to the proxy's address as `operator` (the operator's policy)
 * checked it. Throws `invalid_request` when the environment names no proxy.
 */
export function proxiedFetch(env: NodeJS.ProcessEnv, fetch: GuardedFetch, operator: GuardedFetch): GuardedFetch {
  const proxies = proxyUrls(env);
  if (!proxies) {
    throw PlatformError.invalid('This credential sends its traffic through a proxy (proxy: true), but the server has no HTTPS_PROXY or HTTP_PROXY configured');
  }
  return fetch.viaProxy({ ...proxies, guard: operator });
}
