/**
 * What the Gemini API's error bodies say beyond their HTTP status, read from the documented
 * `{ error: { code, message, status, details } }`:
 *
 * - a bad key is **400** `INVALID_ARGUMENT` with an `ErrorInfo` detail whose reason is
 *   `API_KEY_INVALID` (a missing key is 403 `PERMISSION_DENIED`), so the status alone does not say it;
 * - a quota refusal (429 `RESOURCE_EXHAUSTED`) gives its wait in a `RetryInfo` detail
 *   (`retryDelay: "34.4s"`), not in a `Retry-After` header;
 * - a prompt over the model's window is 400 `The input token count (N) exceeds the maximum
 *   number of tokens allowed (M).`;
 * - an unknown model is 404 `NOT_FOUND`, `models/<id> is not found for API version v1beta, ...`.
 */

export type GoogleErrorKind = 'auth' | 'rate_limited' | 'context_length' | 'model_not_found';

export interface GoogleErrorHints {
  readonly kind?: GoogleErrorKind;
  readonly retryAfterSeconds?: number;
}

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** `{ error }` of a Google error body: the parsed `data` of the AI SDK's error, else its raw `responseBody`. */
function errorBody(data: unknown, responseBody: string | undefined): unknown {
  const parsed = member(data, 'error');
  if (parsed !== undefined || responseBody === undefined) return parsed;
  try {
    return member(JSON.parse(responseBody), 'error');
  } catch {
    return undefined;
  }
}

/** A protobuf Duration in JSON (`"34.4s"`), in whole seconds rounded up; undefined when it is not one. */
export function durationSeconds(value: unknown): number | undefined {
  const match = typeof value === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(value) : null;
  return match ? Math.ceil(Number(match[1])) : undefined;
}

/**
 * The kind of a Gemini API failure and its retry hint, from the HTTP status and the error body
 * (`data`, as `@ai-sdk/google` parsed it, or the raw `responseBody`). Empty for anything else.
 */
export function googleErrorHints(status: number | undefined, data: unknown, responseBody?: string): GoogleErrorHints {
  const error = errorBody(data, responseBody);
  const message = String(member(error, 'message') ?? '');
  const details = member(error, 'details');
  const list = Array.isArray(details) ? details : [];
  const typed = (suffix: string) => list.find((d) => String(member(d, '@type')).endsWith(suffix));
  if (list.some((d) => member(d, 'reason') === 'API_KEY_INVALID') || status === 401 || status === 403) return { kind: 'auth' };
  if (status === 429) {
    const seconds = durationSeconds(member(typed('google.rpc.RetryInfo'), 'retryDelay'));
    return { kind: 'rate_limited', ...(seconds !== undefined ? { retryAfterSeconds: seconds } : {}) };
  }
  if (status === 400 && /input token count.*exceeds the maximum/i.test(message)) return { kind: 'context_length' };
  if (status === 404 && /^models\/\S+ is not found/.test(message)) return { kind: 'model_not_found' };
  return {};
}
