import { type ByteLimit, isPlatformError, PlatformError } from '@agent-platform/core';
import { answerTooLargeIn, boundedFetch, limitBody } from '@agent-platform/core/internal';
import type { FetchFunction } from '../fetch.js';

/** What error messages need to know of the store (never the API key). */
export interface ErrorContext {
  readonly endpoint: string;
  readonly indexName: string;
  readonly tenant: string;
  readonly database: string;
  readonly hasApiKey: boolean;
  readonly timeoutMs: number;
  /** Most bytes of one answer of Chroma, read under it (`upstream_error` naming the setting past it). */
  readonly answerLimit: ByteLimit;
}

const invalid = (what: string) => PlatformError.invalid(`Invalid vectorstore configuration: ${what}`);

export const unreachable = (ctx: ErrorContext, cause: unknown) => {
  const reason = describeCause(cause);
  return new PlatformError('unavailable', `chroma at ${ctx.endpoint} could not be reached${reason ? `: ${reason}` : ''}`, { retryable: true, cause });
};

export const timedOut = (ctx: ErrorContext, cause?: unknown) => new PlatformError('timeout', `chroma at ${ctx.endpoint} did not answer within ${ctx.timeoutMs} ms`, { retryable: true, cause });

/** `connect ECONNREFUSED 127.0.0.1:8000`, `other side closed`: the useful part of a fetch failure. */
function describeCause(cause: unknown): string {
  let error = cause as { message?: unknown; cause?: unknown } | undefined;
  // undici's TypeError('fetch failed') carries the socket error as its cause.
  while (error?.cause && typeof error.cause === 'object') error = error.cause as typeof error;
  return typeof error?.message === 'string' ? error.message : '';
}

/**
 * The PlatformError for a Chroma answer that is not 2xx, from its status and what its
 * `{ error, message }` body says: the body is read for the cases the store knows (a dimension
 * mismatch, a missing database), which are said in our words; otherwise only the status is
 * given, never the body's text (an address a caller chose could answer anything).
 */
export function answerError(ctx: ErrorContext, status: number, message: string): PlatformError {
  if (status === 401 || status === 403) {
    return invalid(ctx.hasApiKey ? `chroma refused the API key (${status})` : `chroma at ${ctx.endpoint} requires an API key (${status})`);
  }
  const dimensions = /expecting embedding with dimension of (\d+), got (\d+)/.exec(message);
  if (dimensions) return invalid(`index "${ctx.indexName}" has dimension ${dimensions[1]}, the embedding model gives ${dimensions[2]}`);
  if (/^Database \[.*\] does not exist/.test(message)) {
    return invalid(`chroma at ${ctx.endpoint} has no database "${ctx.database}" in tenant "${ctx.tenant}"`);
  }
  // The collection went away (deleted by someone else): the store forgets it and opens it again.
  if (status === 404) return new PlatformError('not_found', `chroma at ${ctx.endpoint} answered 404`, { details: { status } });
  if (status === 429) return new PlatformError('rate_limited', `chroma at ${ctx.endpoint} answered 429`, { retryable: true, details: { status } });
  return new PlatformError('upstream_error', `chroma at ${ctx.endpoint} answered ${status}`, { retryable: status >= 500, details: { status } });
}

/** Bytes of an error answer read to recognise it (Chroma's are a short JSON object). */
const ERROR_BODY_BYTES = 64 * 1024;

/** The `message` (or `error`) of a Chroma error body, read up to `ERROR_BODY_BYTES`; empty when there is none. */
async function readMessage(response: Response): Promise<string> {
  const body = await limitBody(response, { maxBytes: ERROR_BODY_BYTES, setting: 'the error body bound' }, response.url)
    .text()
    .catch(() => '');
  try {
    const json = JSON.parse(body) as { message?: unknown; error?: unknown };
    const message = json.message ?? json.error;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON: nothing the store recognises
  }
  return '';
}

/**
 * The `fetch` the adapter gives the client (in place of the client's own, which keeps neither
 * the status nor the cause and has no timeout): each request, made with `base` (the platform's
 * guarded fetch), gets `timeoutMs`, and failures become PlatformErrors.
 */
export function createFetch(ctx: ErrorContext, base: FetchFunction = (input, init) => fetch(input, init)): FetchFunction {
  const bounded = boundedFetch(base, { maxBytes: ctx.answerLimit.bytes, subject: `chroma at ${ctx.endpoint}`, setting: ctx.answerLimit.setting });
  return async (input, init) => {
    const signal = AbortSignal.timeout(ctx.timeoutMs);
    let response: Response;
    try {
      response = await bounded(input, { ...init, signal });
    } catch (error) {
      // A refusal by the outbound policy (or an invalid URL) is the caller's to see as it is.
      if (isPlatformError(error)) throw error;
      throw signal.aborted ? timedOut(ctx, error) : unreachable(ctx, error);
    }
    if (response.ok) return response;
    throw answerError(ctx, response.status, await readMessage(response));
  };
}

/**
 * Any failure of a client call as a PlatformError: ours pass through; a timeout that hit while
 * a body was read; the client's own errors (from validation, or its fetch if ours could not be
 * installed) by their names.
 */
export function toPlatformError(ctx: ErrorContext, error: unknown): PlatformError {
  if (isPlatformError(error)) return error;
  const tooLarge = answerTooLargeIn(error);
  if (tooLarge) return tooLarge;
  // JSON.parse's message quotes the text it could not read: not repeated.
  if (error instanceof SyntaxError) return new PlatformError('upstream_error', `chroma at ${ctx.endpoint} answered with a body that is not JSON`, { cause: error });
  const { name, message } = error instanceof Error ? error : { name: '', message: String(error) };
  switch (name) {
    case 'TimeoutError':
      return timedOut(ctx, error);
    case 'ChromaConnectionError':
      return unreachable(ctx, error);
    case 'ChromaAuthError':
      return answerError(ctx, 401, message);
    case 'ChromaForbiddenError':
      return answerError(ctx, 403, message);
    case 'ChromaNotFoundError':
      return answerError(ctx, 404, message);
    case 'ChromaClientError':
      return answerError(ctx, 400, message.replace(/^Bad request to .* with status: /, ''));
    case 'ChromaServerError':
      return answerError(ctx, 500, message);
    default:
      return new PlatformError('internal', `chroma client failed: ${message}`, { cause: error });
  }
}
