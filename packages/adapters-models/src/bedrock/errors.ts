import { PlatformError } from '@agent-platform/core';

/** What an upstream failure was, as every provider reports it (`details.kind`). */
export type UpstreamKind = 'auth' | 'rate_limited' | 'context_length' | 'model_not_found' | 'content_filter';

const WORD = /^[A-Za-z][\w.-]{0,63}$/;

/**
 * The AWS error type of an error answer (`ValidationException`, `ThrottlingException`, ...):
 * the `x-amzn-errortype` header up to its `:` (AWS's REST-JSON services name it there, e.g.
 * `ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/`), else the body's
 * `__type` or `code` (the JSON protocols), without a namespace prefix (`ns#Type`). Undefined
 * when none is a plain word: a type is safe to show, the body's message (which an address a
 * caller chose could fill with anything) is not.
 */
export function awsErrorType(headers: Headers | Readonly<Record<string, string | undefined>> | undefined, body: unknown): string | undefined {
  const header = headers instanceof Headers ? headers.get('x-amzn-errortype') : (headers?.['x-amzn-errortype'] ?? headers?.['X-Amzn-ErrorType']);
  const fromBody = typeof body === 'object' && body !== null ? ((body as Record<string, unknown>).__type ?? (body as Record<string, unknown>).code) : undefined;
  for (const candidate of [header, fromBody]) {
    if (typeof candidate !== 'string') continue;
    const type = (candidate.split(':')[0] ?? '').split('#').at(-1)?.trim() ?? '';
    if (WORD.test(type)) return type;
  }
  return undefined;
}

/**
 * What kind of failure a Bedrock error answer is, from its status, AWS error type and message
 * (read here, never repeated): 401/403 are the credentials (`UnrecognizedClientException`,
 * `InvalidSignatureException`, `ExpiredTokenException`, or `AccessDeniedException` for a key
 * without access to the model); 429 (`ThrottlingException`, `ServiceQuotaExceededException`,
 * `ModelNotReadyException`) is a rate limit; `ResourceNotFoundException` and a
 * `ValidationException` saying the model identifier is invalid are an unknown model; a
 * `ValidationException` saying the input is too long is the context length.
 */
export function bedrockErrorKind(status: number | undefined, type: string | undefined, message: string): UpstreamKind | undefined {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429 || type === 'ThrottlingException' || type === 'ServiceQuotaExceededException') return 'rate_limited';
  if (type === 'ResourceNotFoundException' || /model identifier is invalid|could not resolve the foundation model|model (is )?not found/i.test(message)) return 'model_not_found';
  if (/input is too long|too many (input )?tokens|prompt is too long|exceeds? the (maximum|model'?s?) (context|input)|context (length|window)/i.test(message)) return 'context_length';
  return undefined;
}

/** Whether a call that failed so may succeed when repeated: timeouts, rate limits, the service's own failures. */
export const isRetryableStatus = (status: number): boolean => status === 408 || status === 429 || status >= 500;

/**
 * The error of an HTTP failure of a Bedrock call (`upstream_error`, `details: { provider,
 * upstream, status, kind?, type? }`), its message naming the server, the status and the AWS
 * error type, and the model when it is the unknown one; never the answer's text.
 */
export function bedrockHttpError(where: string, upstream: string, status: number, type: string | undefined, message: string, model?: string, cause?: unknown): PlatformError {
  const kind = bedrockErrorKind(status, type, message);
  const reason = type ? ` (${type})` : '';
  const text =
    kind === 'auth'
      ? `${where} refused the credentials (HTTP ${status})${reason}`
      : kind === 'model_not_found' && model
        ? `${where} does not know the model ${model} (HTTP ${status})${reason}`
        : kind === 'context_length'
          ? `${where}: the prompt is too long for the model${model ? ` ${model}` : ''} (HTTP ${status})${reason}`
          : `${where} answered HTTP ${status}${reason}`;
  return new PlatformError('upstream_error', text, {
    retryable: isRetryableStatus(status),
    details: { provider: 'bedrock', upstream, status, ...(kind ? { kind } : {}), ...(type ? { type } : {}) },
    ...(cause === undefined ? {} : { cause }),
  });
}
