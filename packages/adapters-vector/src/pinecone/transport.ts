import { AsyncLocalStorage } from 'node:async_hooks';
import { type ByteLimit, isPlatformError, PlatformError } from '@agent-platform/core';
import { boundedFetch } from '@agent-platform/core/internal';
import type { FetchFunction } from '../fetch.js';

/**
 * What the fetch under the Pinecone client saw during one store call. The client turns HTTP
 * failures into its own errors (and, after retrying a 5xx, into one that no longer carries the
 * status or Pinecone's message), so the store keeps the last failed response here and builds its
 * own error from it.
 */
export interface CallContext {
  /** Aborts the call's requests: the caller's signal and the store's close. */
  readonly signal: AbortSignal;
  /** URL of the last request. */
  url?: string;
  /** The last request's failed answer (its status), when it had one. */
  failure?: { readonly status: number };
  /** An answer of the call passed the answer limit (the client may report that only as a failed request). */
  tooLarge?: PlatformError;
}

const calls = new AsyncLocalStorage<CallContext>();

/** Runs `fn` with `context` visible to the fetch of every request it makes. */
export const withCall = <T>(context: CallContext, fn: () => Promise<T>): Promise<T> => calls.run(context, fn);

/**
 * The fetch given to the client: each request, made with `base` (the platform's guarded fetch:
 * the control plane's endpoint and the index hosts it names are all checked), gets the
 * per-request timeout and the call's signal, its answer is read under `limit`, and a failed
 * answer's status is noted in the call's context (its body is not: it is never quoted).
 */
export function pineconeFetch(timeoutMs: number, limit: ByteLimit, base: FetchFunction = (input, init) => fetch(input, init)): typeof fetch {
  const bounded = boundedFetch(base, () => ({
    maxBytes: limit.bytes,
    setting: limit.setting,
    onExceeded: (error) => {
      const context = calls.getStore();
      if (context) context.tooLarge ??= error;
    },
  }));
  return async (input, init) => {
    const context = calls.getStore();
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([timeout, ...(context ? [context.signal] : []), ...(init?.signal ? [init.signal] : [])]);
    if (context) {
      context.url = input instanceof Request ? input.url : String(input);
      context.failure = undefined;
    }
    const response = await bounded(input, { ...init, signal });
    if (!response.ok && context) context.failure = { status: response.status };
    return response;
  };
}

const causes = (error: unknown): unknown[] => {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < 10; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
};

const nameOf = (e: unknown) => (typeof e === 'object' && e !== null ? String((e as { name?: unknown }).name) : '');
const messageOfError = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Our error for what a Pinecone call threw: 401/403 → the configuration's API key, another HTTP
 * failure → `upstream_error` with Pinecone's status (never its body's text), no answer → `unavailable`,
 * the per-request timeout → `timeout`, the caller's signal or close → `aborted`.
 * The API key never appears in a message.
 */
export function toPlatformError(error: unknown, context: CallContext, fallbackUrl: string, timeoutMs: number, apiKey: string): PlatformError {
  // Ours (a refusal by the outbound policy, an answer past its limit) as it is, even when the client wrapped it.
  const ours = causes(error).find(isPlatformError) ?? context.tooLarge;
  if (ours) return ours;
  const redact = (text: string) => (apiKey ? text.split(apiKey).join('***') : text);
  let origin = fallbackUrl;
  try {
    if (context.url) origin = new URL(context.url).origin;
  } catch {
    // Keep the fallback.
  }
  const chain = causes(error);
  if (chain.some((e) => nameOf(e) === 'TimeoutError')) {
    return new PlatformError('timeout', `pinecone at ${origin} did not answer within ${timeoutMs} ms`, { retryable: true, cause: error });
  }
  if (context.signal.aborted || chain.some((e) => nameOf(e) === 'AbortError')) {
    return new PlatformError('aborted', 'The pinecone request was aborted', { cause: error });
  }
  const failure = context.failure;
  if (failure) {
    if (failure.status === 401 || failure.status === 403) {
      return PlatformError.invalid(`Invalid vectorstore configuration: pinecone refused the API key (${failure.status})`);
    }
    return new PlatformError('upstream_error', `pinecone at ${origin} answered ${failure.status}`, {
      retryable: failure.status >= 500 || failure.status === 429,
      details: { status: failure.status },
      cause: error,
    });
  }
  // No answer at all: the client's PineconeConnectionError around fetch's "fetch failed".
  if (chain.some((e) => nameOf(e) === 'PineconeConnectionError' || (nameOf(e) === 'TypeError' && messageOfError(e) === 'fetch failed'))) {
    const root = chain[chain.length - 1];
    const code = (root as { code?: unknown }).code;
    const message = messageOfError(root);
    const reason = redact(typeof code === 'string' && !message.includes(code) ? `${code}${message ? ` (${message})` : ''}` : message);
    return new PlatformError('unavailable', `pinecone at ${origin} could not be reached: ${reason}`, { retryable: true, cause: error });
  }
  // JSON.parse's message quotes the text it could not read: not repeated.
  if (chain.some((e) => e instanceof SyntaxError)) return new PlatformError('upstream_error', `pinecone at ${origin} answered with a body that is not JSON`, { cause: error });
  return new PlatformError('internal', redact(`pinecone client failed: ${messageOfError(error)}`), { cause: error });
}
