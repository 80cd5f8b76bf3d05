import { type ErrorCode, isPlatformError, PlatformError } from '@agent-platform/core';

/** HTTP status of each core error code (DESIGN.md, "Errors and status codes"). */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  method_not_allowed: 405,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  rate_limited: 429,
  unsupported: 501,
  upstream_error: 502,
  unavailable: 503,
  timeout: 504,
  aborted: 499,
  internal: 500,
};

/** What an upstream's refusal means (`details.kind` of `upstream_error`, set by every model adapter). */
type UpstreamKind = 'auth' | 'rate_limited' | 'context_length' | 'model_not_found' | 'content_filter';

/**
 * The status and OpenAI error of each kind of upstream refusal (docs/PROVIDERS.md, "Errors at
 * the endpoint"): a refused key stays 502 (the caller's request was fine; their credential was
 * not), the upstream's 429 is the caller's 429 (with its `Retry-After`), a prompt too long for
 * the model and a prompt the provider's filter refused are the caller's 400, an unknown model 404.
 */
const UPSTREAM_KINDS: Record<UpstreamKind, { status: number; type: string; code: string }> = {
  auth: { status: 502, type: 'api_error', code: 'upstream_auth' },
  rate_limited: { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  context_length: { status: 400, type: 'invalid_request_error', code: 'context_length_exceeded' },
  model_not_found: { status: 404, type: 'invalid_request_error', code: 'model_not_found' },
  content_filter: { status: 400, type: 'invalid_request_error', code: 'content_filter' },
};

/** The kind of an upstream failure, when it has one we map. */
function upstreamKind(err: PlatformError): UpstreamKind | undefined {
  const kind = err.code === 'upstream_error' ? err.details?.kind : undefined;
  return typeof kind === 'string' && Object.hasOwn(UPSTREAM_KINDS, kind) ? (kind as UpstreamKind) : undefined;
}

/**
 * The headers of a failure: an upstream's `Retry-After` (whole seconds) passed on with its 429;
 * on a refused key's 502, `x-should-retry: false`, which OpenAI's clients read: a 5xx is retried
 * by default, and asking again with the same key only adds refusals.
 */
export function failureHeaders(error: unknown): Record<string, string> {
  if (!isPlatformError(error)) return {};
  if (upstreamKind(error) === 'auth') return { 'x-should-retry': 'false' };
  if (upstreamKind(error) !== 'rate_limited') return {};
  const after = error.details?.retryAfterSeconds;
  return typeof after === 'number' && Number.isFinite(after) && after >= 0 ? { 'retry-after': String(Math.ceil(after)) } : {};
}

/**
 * The body of every failure: `success: false`, the message, the stable `code` and, when the
 * error has them, its extra facts under `details` (e.g. `{ line, column }` of tool code that
 * does not parse, `{ limit, max }` of a document over a limit). Members the spec shows at the
 * top level of a route's failure (`document: null`, the empty lists) are the route's
 * `failure` members (see `RouteSpec.failure`), never taken from `details`.
 */
export interface ErrorBody {
  success: false;
  message: string;
  code: ErrorCode;
  details?: Record<string, unknown>;
}

/** An error's `details`: its own extra facts, and the issues of invalid input (each problem with the path of its field). */
function detailsOf(err: PlatformError): { details?: Record<string, unknown> } {
  if (!err.issues) return err.details ? { details: err.details } : {};
  return { details: { ...err.details, issues: err.issues } };
}

/** The status and body for anything a handler threw; unknown errors are bugs (500). */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody; bug: boolean } {
  const known = isPlatformError(error);
  const err = known ? error : new PlatformError('internal', 'Internal server error');
  const kind = upstreamKind(err);
  return {
    status: kind ? UPSTREAM_KINDS[kind].status : STATUS_BY_CODE[err.code],
    body: { success: false, message: err.message, code: err.code, ...detailsOf(err) },
    bug: !known,
  };
}

/** OpenAI's error `type` of the core error codes that have one of their own; every other is `api_error`. */
const OPENAI_TYPE_BY_CODE: Partial<Record<ErrorCode, string>> = {
  unauthorized: 'authentication_error',
  not_found: 'not_found_error',
  rate_limited: 'rate_limit_error',
  invalid_request: 'invalid_request_error',
  payload_too_large: 'invalid_request_error',
};

/**
 * The Open Responses error object: OpenAI's, with `param`, the field at fault (the first issue's
 * path, dotted), or null.
 */
export function responsesError(code: ErrorCode, message: string, details?: Record<string, unknown>): { message: string; type: string; code: string; param: string | null } {
  const issues = details?.issues as { path?: unknown[] }[] | undefined;
  const path = issues?.[0]?.path;
  return { ...openaiError(code, message, details), param: Array.isArray(path) && path.length > 0 ? path.join('.') : null };
}

/**
 * OpenAI's error object, so OpenAI clients show the error (the OpenAI-compatible routes, and the
 * failure event of a completion stream, live or replayed).
 */
export function openaiError(code: ErrorCode, message: string, details?: Record<string, unknown>): { message: string; type: string; code: string } {
  const kind = code === 'upstream_error' && typeof details?.kind === 'string' && Object.hasOwn(UPSTREAM_KINDS, details.kind) ? UPSTREAM_KINDS[details.kind as UpstreamKind] : undefined;
  return kind ? { message, type: kind.type, code: kind.code } : { message, type: OPENAI_TYPE_BY_CODE[code] ?? 'api_error', code };
}
