import { type ErrorCode, isPlatformError, PlatformError } from '@agent-platform/core';

/** HTTP status of each core error code (DESIGN.md, "Errors and status codes"). */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
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

export interface ErrorBody {
  [member: string]: unknown;
  success: false;
  message: string;
  code: ErrorCode;
}

/** The status and body for anything a handler threw; unknown errors are bugs (500). */
export function toErrorResponse(error: unknown): { status: number; body: ErrorBody; bug: boolean } {
  const known = isPlatformError(error);
  const err = known ? error : new PlatformError('internal', 'Internal server error');
  return {
    status: STATUS_BY_CODE[err.code],
    // `details` add documented members, e.g. `document: null` when a document is not found.
    body: { ...err.details, success: false, message: err.message, code: err.code },
    bug: !known,
  };
}

/** OpenAI's error object, so OpenAI clients show the error (the OpenAI-compatible routes). */
export function openaiError(code: string, message: string): { message: string; type: string; code: string } {
  const type =
    code === 'unauthorized'
      ? 'authentication_error'
      : code === 'not_found'
        ? 'not_found_error'
        : code === 'rate_limited'
          ? 'rate_limit_error'
          : code === 'invalid_request' || code === 'payload_too_large'
            ? 'invalid_request_error'
            : 'api_error';
  return { message, type, code };
}
