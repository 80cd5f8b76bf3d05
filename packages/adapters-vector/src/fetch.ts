import { AsyncLocalStorage } from 'node:async_hooks';
import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS } from '@agent-platform/core';
import { boundedFetch } from '@agent-platform/core/internal';

/**
 * The fetch a store's client makes its requests with. The platform passes its guarded fetch
 * (core's `createGuardedFetch`), so every request obeys the outbound policy; without one the
 * client uses the global fetch.
 */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const scope = new AsyncLocalStorage<FetchFunction>();
/** The global fetch as this module found it: what a store without a fetch of its own calls (never the replacement below, which would call back here). */
const globalFetch: FetchFunction = globalThis.fetch.bind(globalThis);

/** A store's answer limit when its options give none: 16 MiB (`DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes`). */
export const defaultAnswerLimit = (): ByteLimit => ({ bytes: DEFAULT_UPSTREAM_LIMITS.vectorAnswerBytes, setting: 'the answerLimit option of the store' });

/**
 * The fetch a store's requests go through: `fetch` (or the global one) with every answer read
 * under `limit` (`boundedFetch`): past it the store is cut off and the call fails with
 * `upstream_error` naming the limit's setting. `onExceeded` is told first (for clients that
 * report a failed read only vaguely).
 */
export function storeFetch(fetch: FetchFunction | undefined, limit: ByteLimit, subject: string, onExceeded?: (error: Error) => void): FetchFunction {
  return boundedFetch(fetch ?? globalFetch, { maxBytes: limit.bytes, subject, setting: limit.setting, onExceeded });
}
/** The global fetch this module installed, while it is still the global one. */
let installed: typeof fetch | undefined;

/**
 * Runs `run` with `fetch` as the global fetch of its async context (everything `run` starts,
 * awaits included), for official clients that call the global `fetch` and take no fetch of
 * their own: Qdrant's REST client and Weaviate's. The global fetch is replaced (once, and again
 * if something replaced it since) by one that calls the fetch of the current context, and the
 * fetch it replaced outside any context: code outside `run` sees no change.
 */
export function withGlobalFetch<T>(fetch: FetchFunction | undefined, run: () => Promise<T>): Promise<T> {
  if (!fetch) return run();
  if (globalThis.fetch !== installed) {
    const outer = globalThis.fetch;
    installed = ((input: string | URL | Request, init?: RequestInit) => (scope.getStore() ?? outer)(input, init)) as typeof globalThis.fetch;
    globalThis.fetch = installed;
  }
  return scope.run(fetch, run);
}
