import { isPlatformError, PlatformError } from '@agent-platform/core';
import { answerTooLargeIn } from '@agent-platform/core/internal';
import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from '@qdrant/js-client-rest';

/** The parts of the client's `ApiError` (a non-2xx answer) that we read. */
interface HttpFailure {
  readonly status: number;
  readonly data?: unknown;
}

const isHttpFailure = (error: unknown): error is HttpFailure => error instanceof Error && typeof (error as { status?: unknown }).status === 'number';

/** True when Qdrant answered 404 (a missing collection, for the calls the store makes). */
export const isNotFound = (error: unknown): boolean => isHttpFailure(error) && error.status === 404;

/**
 * True when creating a collection found it already there (made meanwhile by another instance):
 * Qdrant answers 409 (`Wrong input: Collection … already exists!`); a 400 with those words is
 * taken the same way, for servers that answer it so.
 */
export const isConflict = (error: unknown): boolean => isHttpFailure(error) && (error.status === 409 || (error.status === 400 && providerMessage(error.data).includes('already exists')));

/**
 * Qdrant's own words: `status.error` of its JSON error body (`{ status: { error }, time }`), or
 * the text body of its auth layer, shortened. Read to recognise the cases the store knows (a
 * dimension mismatch, a collection that exists), never quoted into an answer.
 */
function providerMessage(data: unknown): string {
  let text = '';
  if (typeof data === 'string') text = data;
  else if (data && typeof data === 'object') {
    const status = (data as { status?: unknown }).status;
    const error = status && typeof status === 'object' ? (status as { error?: unknown }).error : undefined;
    text = typeof error === 'string' ? error : JSON.stringify(data);
  }
  text = text.trim();
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** The network-level reason of a failed fetch (`connect ECONNREFUSED 127.0.0.1:6333`, `other side closed`). */
function networkReason(error: Error): string {
  let reason: unknown = error;
  // undici: TypeError('fetch failed') whose cause is the socket error (sometimes nested once more).
  for (let i = 0; i < 3 && reason instanceof Error && reason.cause instanceof Error; i++) reason = reason.cause;
  const e = reason as Error & { code?: string };
  return e.message || e.code || 'unknown network error';
}

export interface ErrorContext {
  /** The configured endpoint, for messages (it never holds credentials: the config refuses them). */
  readonly endpoint: string;
  readonly timeoutMs: number;
  readonly hasApiKey: boolean;
  readonly indexName: string;
}

/**
 * Maps what the Qdrant client throws to a `PlatformError`: unreachable → `unavailable`
 * (retryable), timeout → `timeout`, 401/403 → `invalid_request` (the configuration's key),
 * 429 → `rate_limited`, other answers → `upstream_error` with Qdrant's status (never its body's
 * text: an address a caller chose could answer anything). Messages never contain the API key.
 */
export function toPlatformError(error: unknown, ctx: ErrorContext): PlatformError {
  if (isPlatformError(error)) return error;
  const tooLarge = answerTooLargeIn(error);
  if (tooLarge) return tooLarge;
  if (isHttpFailure(error)) {
    const { status } = error;
    if (status === 401 || status === 403) {
      const why = !ctx.hasApiKey && status === 401 ? `Qdrant requires an API key (401): set apiKey` : `Qdrant refused the API key (${status})`;
      return PlatformError.invalid(`Invalid vectorstore configuration: ${why}`);
    }
    const message = providerMessage(error.data);
    // "Wrong input: Vector dimension error: expected dim: 768, got 512"
    const dims = status === 400 ? /expected dim: (\d+), got (\d+)/.exec(message) : null;
    if (dims) {
      return PlatformError.invalid(`Invalid vectorstore configuration: index "${ctx.indexName}" has dimension ${dims[1]}, the embedding model gives ${dims[2]}`);
    }
    if (status === 429) return new PlatformError('rate_limited', `Qdrant at ${ctx.endpoint} answered 429`, { retryable: true, details: { status }, cause: error });
    return new PlatformError('upstream_error', `Qdrant at ${ctx.endpoint} answered ${status}`, { retryable: status >= 500, details: { status }, cause: error });
  }
  if (error instanceof QdrantClientTimeoutError) {
    return new PlatformError('timeout', `Qdrant at ${ctx.endpoint} did not answer within ${ctx.timeoutMs} ms`, { retryable: true, cause: error });
  }
  if (error instanceof QdrantClientResourceExhaustedError) {
    return new PlatformError('rate_limited', `Qdrant at ${ctx.endpoint} answered 429`, { retryable: true, details: { status: 429 }, cause: error });
  }
  if (error instanceof QdrantClientUnexpectedResponseError) {
    // A 2xx other than 200/201 (e.g. 202 Accepted): the client treats it as a failure.
    const status = /\b([1-5]\d\d)\b/.exec(error.message)?.[1];
    return new PlatformError('upstream_error', `Qdrant at ${ctx.endpoint} answered unexpectedly${status ? ` (HTTP ${status})` : ''}`, { retryable: true, cause: error });
  }
  if (error instanceof TypeError && error.cause !== undefined) {
    // fetch() rejects with TypeError('fetch failed', { cause }) for anything below HTTP: refused,
    // reset, DNS, TLS. (A TypeError without a cause is a bug, not the network.)
    return new PlatformError('unavailable', `Qdrant at ${ctx.endpoint} could not be reached: ${networkReason(error)}`, { retryable: true, cause: error });
  }
  // JSON.parse's message quotes the text it could not read: not repeated.
  if (error instanceof SyntaxError) return new PlatformError('upstream_error', `Qdrant at ${ctx.endpoint} answered with a body that is not JSON`, { cause: error });
  return new PlatformError('upstream_error', `Qdrant call failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
}
