import type { FailureReading, UpstreamFailure } from '../ai-sdk/index.js';

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/**
 * Gemini's word for a failure that its status does not say: a bad key is **400**
 * `INVALID_ARGUMENT` with an `ErrorInfo` detail whose reason is `API_KEY_INVALID` (a missing key
 * is 403 `PERMISSION_DENIED`, read the common way). The rest of Gemini's errors read the common
 * way too: 429 `RESOURCE_EXHAUSTED` with its `RetryInfo.retryDelay`, 400 `The input token count
 * (N) exceeds the maximum number of tokens allowed (M).`, 404 `models/<id> is not found ...`.
 */
export function classifyGoogleFailure(failure: UpstreamFailure): FailureReading | undefined {
  const details = member(member(failure.body, 'error'), 'details');
  if (Array.isArray(details) && details.some((detail) => member(detail, 'reason') === 'API_KEY_INVALID')) return { kind: 'auth' };
  return undefined;
}
