/**
 * What kind of failure an upstream's HTTP error is, the same way for every provider, so the
 * server can answer each kind alike (`details.kind` of an `upstream_error`): `auth` (401/403),
 * `rate_limited` (429, with `retryAfterSeconds`), `context_length` (the prompt is too long for
 * the model), `model_not_found` (an unknown model or deployment) and `content_filter` (the
 * provider's safety system refused the prompt).
 */
export type UpstreamErrorKind = 'auth' | 'rate_limited' | 'context_length' | 'model_not_found' | 'content_filter';

/** An upstream's HTTP error as the client saw it. */
export interface UpstreamFailure {
  readonly status: number;
  /** The answer's headers (`retry-after-ms`, `retry-after`): a `Headers` or a plain record. */
  readonly headers?: Headers | Readonly<Record<string, string | undefined>> | undefined;
  /**
   * The parsed error body (OpenAI's and Azure's `{ error: { code, type, message, innererror } }`,
   * or the `error` member alone). Its codes and text are read to classify it, never repeated.
   */
  readonly body?: unknown;
}

export interface UpstreamClassification {
  readonly kind?: UpstreamErrorKind;
  /** Seconds to wait before trying again (429), from `retry-after-ms` or `retry-after`. */
  readonly retryAfterSeconds?: number;
}

const header = (headers: UpstreamFailure['headers'], name: string): string | undefined => {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Readonly<Record<string, string | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : record[key];
};

/**
 * Whole seconds to wait, from `retry-after-ms` (milliseconds, OpenAI's and Azure's) or else
 * `retry-after` (seconds or an HTTP date); rounded up, so a caller that waits that long is not
 * early. Undefined when neither is there or readable.
 */
export function retryAfterSeconds(headers: UpstreamFailure['headers'], now: number = Date.now()): number | undefined {
  const ms = Number.parseFloat(header(headers, 'retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms / 1000);
  const value = header(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value));
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** The error's codes (`code`, `type`, `status`, `innererror.code`), lower-cased, and its message. */
function wordsOf(body: unknown): { codes: string[]; text: string } {
  const inner = member(body, 'error') ?? body;
  const codes = [member(inner, 'code'), member(inner, 'type'), member(inner, 'status'), member(member(inner, 'innererror'), 'code')]
    .filter((word): word is string => typeof word === 'string')
    .map((word) => word.toLowerCase());
  // Some servers (Ollama, vLLM) answer `{ "error": "<text>" }`.
  const message = typeof inner === 'string' ? inner : (member(inner, 'message') ?? member(body, 'message'));
  return { codes, text: typeof message === 'string' ? message : '' };
}

const CONTEXT_CODES = ['context_length_exceeded'];
const CONTEXT_TEXT = /maximum context length|context[ _]length|context window|prompt is too long|input is too long|too many (input )?tokens/i;
const MODEL_CODES = ['model_not_found', 'deploymentnotfound'];
const MODEL_TEXT = /\b(model|deployment)\b.*\b(not found|does not exist|not exist)\b/i;
const FILTER_CODES = ['content_filter', 'responsibleaipolicyviolation'];

/** The kind of an upstream's HTTP error and, for a 429, how long to wait. */
export function classifyUpstream(failure: UpstreamFailure): UpstreamClassification {
  const { status } = failure;
  if (status === 401 || status === 403) return { kind: 'auth' };
  if (status === 429) {
    const seconds = retryAfterSeconds(failure.headers);
    return seconds === undefined ? { kind: 'rate_limited' } : { kind: 'rate_limited', retryAfterSeconds: seconds };
  }
  const { codes, text } = wordsOf(failure.body);
  const has = (list: readonly string[]) => codes.some((code) => list.includes(code));
  if (has(FILTER_CODES)) return { kind: 'content_filter' };
  if (has(CONTEXT_CODES) || (status === 400 || status === 413 ? CONTEXT_TEXT.test(text) : false)) return { kind: 'context_length' };
  if (has(MODEL_CODES) || (status === 404 && MODEL_TEXT.test(text))) return { kind: 'model_not_found' };
  return {};
}

/**
 * The message of an upstream HTTP error of that kind, e.g. `Model provider azure (https://…)
 * does not know the model "gpt-5" (HTTP 404) (DeploymentNotFound)`. `reason` is the error's own
 * code in parentheses (`safeReason`), never its text; `model` is named where the kind is about it.
 */
export function upstreamErrorMessage(where: string, status: number, reason: string, classification: UpstreamClassification, model?: string): string {
  const named = model ? ` ${JSON.stringify(model.slice(0, 200))}` : '';
  switch (classification.kind) {
    case 'auth':
      return `${where} refused the credentials (HTTP ${status})${reason}`;
    case 'rate_limited': {
      const wait = classification.retryAfterSeconds;
      return `${where} is rate limiting the requests (HTTP ${status})${reason}${wait === undefined ? '' : `; retry after ${wait} s`}`;
    }
    case 'context_length':
      return `${where} refused the prompt as too long for the model${named} (HTTP ${status})${reason}`;
    case 'model_not_found':
      return `${where} does not know the model${named} (HTTP ${status})${reason}`;
    case 'content_filter':
      return `${where} refused the prompt by its content filter (HTTP ${status})${reason}`;
    default:
      return `${where} answered HTTP ${status}${reason}`;
  }
}
