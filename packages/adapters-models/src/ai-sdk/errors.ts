import { isPlatformError, PlatformError } from '@agent-platform/core';
import { answerTooLargeIn, isUnresolvedHost, safeReason, unreachableAs } from '@agent-platform/core/internal';
import { APICallError } from '@ai-sdk/provider';

/** What an upstream's refusal means, beyond its status (`details.kind`). */
export type UpstreamKind = 'auth' | 'rate_limited' | 'context_length' | 'model_not_found' | 'content_filter';

/** An upstream's error answer, as a provider's `classify` hook reads it. */
export interface UpstreamFailure {
  /** The HTTP status (or, for an error event in the stream, the status the provider gives its type). */
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  /** The answer's body: its JSON value, or its text when it is not JSON. */
  readonly body: unknown;
  /** The model of the request. */
  readonly model: string;
}

/** What a `classify` hook tells of a failure; what it leaves out is read the common way. */
export interface FailureReading {
  readonly kind?: UpstreamKind;
  readonly retryAfterSeconds?: number;
}

/** Who failed, for the messages and details of `PlatformError`s. */
export interface FailureContext {
  readonly provider: string;
  readonly where: string;
  readonly upstream: string;
  readonly secrets: readonly string[];
  readonly timeoutMs: number;
  readonly classify?: ((failure: UpstreamFailure) => FailureReading | undefined) | undefined;
}

/** Never a secret, nor a URL's user part, whatever a server or a library wrote. */
export function scrubber(secrets: readonly string[]): (text: string) => string {
  const hidden = secrets.filter((secret) => secret.length >= 4);
  return (text) => hidden.reduce((out, secret) => out.split(secret).join('[redacted]'), text.replace(/\/\/[^/@\s]+@/g, '//'));
}

const record = (value: unknown): Record<string, unknown> | undefined => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined);

/** The provider's error object: `{ error: {...} }` (Anthropic, OpenAI, Gemini) or the body itself (Bedrock). */
const inner = (body: unknown): Record<string, unknown> | undefined => record(record(body)?.error) ?? record(body);

/** The provider's own text of the failure: read to classify it, never shown. */
function textOf(body: unknown): string {
  const error = inner(body);
  const message = error?.message ?? record(body)?.message ?? body;
  return typeof message === 'string' ? message : '';
}

/** A short word naming the failure: the error's code or type (`rate_limit_error`), Gemini's `status`, Bedrock's error type header. */
function reasonOf(body: unknown, headers: Readonly<Record<string, string>>): string {
  const common = safeReason(record(body)?.error !== undefined ? body : { error: body });
  if (common) return common;
  const status = inner(body)?.status;
  if (typeof status === 'string' && /^[A-Z][A-Z_]{0,63}$/.test(status)) return ` (${status})`;
  const amazon = headers['x-amzn-errortype']?.split(':')[0];
  return amazon && /^[A-Za-z][\w.-]{0,63}$/.test(amazon) ? ` (${amazon})` : '';
}

/** Seconds to wait, from `retry-after-ms`, `retry-after` (seconds or a date) or Gemini's `RetryInfo.retryDelay` (`"30s"`). */
function retryAfterOf(headers: Readonly<Record<string, string>>, body: unknown): number | undefined {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] && Number.isFinite(ms) && ms >= 0) return ms / 1000;
  const after = headers['retry-after'];
  if (after) {
    const seconds = Number(after);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds;
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, (date - Date.now()) / 1000);
  }
  const details = inner(body)?.details;
  for (const detail of Array.isArray(details) ? details : []) {
    const delay = record(detail)?.retryDelay;
    const match = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** The common reading of an error answer: every provider's words for the kinds we name. */
function kindOf({ status, body, model }: UpstreamFailure, reason: string): UpstreamKind | undefined {
  const text = textOf(body);
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (/model_not_found|DeploymentNotFound/i.test(reason) || (status === 404 && (/model/i.test(text) || (model !== '' && text.includes(model))))) return 'model_not_found';
  if (/model identifier is invalid|model\b.*\b(not found|does not exist)/i.test(text)) return 'model_not_found';
  if (/context_length_exceeded/i.test(reason) || /prompt is too long|context (length|window)|maximum context|too many (input )?tokens|input is too long|input token count/i.test(text))
    return 'context_length';
  if (/content_filter|content_policy|ResponsibleAIPolicyViolation|PROHIBITED_CONTENT/i.test(reason + text)) return 'content_filter';
  return undefined;
}

/**
 * The kind of an upstream's error answer and how long to wait (`retryAfterSeconds`, whole
 * seconds rounded up): the provider's `classify` hook first, then the common reading. Also what
 * openai.ts classifies its client's errors with, so every provider's are alike.
 */
export function readFailure(failure: UpstreamFailure, reason: string, classify?: FailureContext['classify']): FailureReading {
  const own = classify?.(failure);
  const kind = own?.kind ?? kindOf(failure, reason);
  const after = own?.retryAfterSeconds ?? retryAfterOf(failure.headers, failure.body);
  return { ...(kind ? { kind } : {}), ...(after !== undefined ? { retryAfterSeconds: Math.ceil(after) } : {}) };
}

/** The message of an HTTP error answer of that reading; `reason` is the error's code in parentheses, never its text. */
export function failureMessage(where: string, status: number, reason: string, { kind, retryAfterSeconds }: FailureReading, model: string): string {
  const http = `HTTP ${status}`;
  switch (kind) {
    case 'auth':
      return `${where} refused the credentials (${http})${reason}`;
    case 'rate_limited':
      return `${where} is rate limiting requests (${http})${reason}${retryAfterSeconds !== undefined ? `; retry after ${retryAfterSeconds} s` : ''}`;
    case 'context_length':
      return `${where} refused the request: the prompt is too long for the model ${model} (${http})${reason}`;
    case 'model_not_found':
      return `${where} does not know the model ${model} (${http})${reason}`;
    case 'content_filter':
      return `${where} refused the prompt: its content filter blocked it (${http})${reason}`;
    default:
      return `${where} answered ${http}${reason}`;
  }
}

const parseBody = (text: string | undefined): unknown => {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** An error event the provider's stream carried (the AI SDK's `ProviderStreamError`). */
interface StreamError {
  readonly type?: unknown;
  readonly statusCode?: unknown;
  readonly isRetryable?: unknown;
  readonly data?: unknown;
}
/** An error part's value: the AI SDK's error object of the event, or (Bedrock) the exception's own payload; only error parts throw plain objects. */
const isStreamError = (error: unknown): error is StreamError => !(error instanceof Error) && record(error) !== undefined;

/** The `PlatformError` of any failure of a model call (or of `listModels`), for the model `model`. */
export function toPlatformError(context: FailureContext, error: unknown, model: string): PlatformError {
  const { where } = context;
  const scrub = scrubber(context.secrets);
  const details = (extra: Record<string, unknown> = {}) => ({ provider: context.provider, upstream: context.upstream, ...extra });
  const found = answerTooLargeIn(error) ?? (isPlatformError(error) ? error : isPlatformError((error as { cause?: unknown })?.cause) ? (error as { cause: PlatformError }).cause : undefined);
  if (found) return isUnresolvedHost(found) ? unreachableAs(`${where} is unreachable`, found) : found;

  // The AI SDK reports a body that broke off after a 2xx answer as an APICallError with that status: not an error answer.
  const brokeOff = APICallError.isInstance(error) && typeof error.statusCode === 'number' && error.statusCode < 300;
  const answered = APICallError.isInstance(error) && error.statusCode !== undefined && !brokeOff ? error : undefined;
  const event = answered === undefined && isStreamError(error) ? error : undefined;
  if (answered || event) {
    const status = answered ? (answered.statusCode as number) : typeof event?.statusCode === 'number' ? event.statusCode : 500;
    const headers = answered ? Object.fromEntries(Object.entries(answered.responseHeaders ?? {}).map(([k, v]) => [k.toLowerCase(), v])) : {};
    const body = answered ? (parseBody(answered.responseBody) ?? answered.data) : (event?.data ?? { error: { type: event?.type } });
    const failure: UpstreamFailure = { status, headers, body, model };
    const reason = reasonOf(body, headers);
    const reading = readFailure(failure, reason, context.classify);
    const message = answered ? failureMessage(where, status, reason, reading, model) : `${where} reported an error mid-stream${reason}`;
    const { kind, retryAfterSeconds } = reading;
    // An error event mid-stream: the AI SDK's flag where it gives one, else retryable unless its kind says the same call fails again.
    const retryable = answered
      ? status === 408 || status === 409 || status === 429 || status >= 500
      : typeof event?.isRetryable === 'boolean'
        ? event.isRetryable
        : kind === undefined || kind === 'rate_limited';
    return new PlatformError('upstream_error', scrub(message), {
      retryable,
      details: details({ ...(answered ? { status } : {}), ...(kind ? { kind } : {}), ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}) }),
      cause: error,
    });
  }
  if (APICallError.isInstance(error) && !brokeOff) {
    // No answer: the connection failed (the AI SDK's "Cannot connect to API").
    return new PlatformError('unavailable', scrub(`${where} is unreachable: ${chainOf(error.cause ?? error)}`), { retryable: true, details: details(), cause: error });
  }
  const name = error instanceof Error ? error.name : '';
  if (name === 'AI_JSONParseError' || name === 'AI_TypeValidationError') {
    // Their messages quote the text they could not read: not repeated.
    return new PlatformError('upstream_error', `${where} sent a malformed event stream: an event it could not read`, { retryable: true, details: details(), cause: error });
  }
  if (name === 'AI_InvalidArgumentError' || name === 'AI_UnsupportedFunctionalityError' || name === 'AI_InvalidPromptError') {
    return new PlatformError(name === 'AI_UnsupportedFunctionalityError' ? 'unsupported' : 'invalid_request', scrub(`${where}: ${(error as Error).message}`), { details: details(), cause: error });
  }
  // A body that broke off (the socket closed or was reset while streaming), or anything else the transport threw.
  return new PlatformError('upstream_error', scrub(`${where} is unreachable: the connection broke mid-stream: ${chainOf(error)}`), { retryable: true, details: details(), cause: error });
}

/** The message of an error and of its causes, e.g. `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`. */
export function chainOf(error: unknown): string {
  const parts: string[] = [];
  for (let current = error, depth = 0; depth < 5 && current instanceof Error; current = current.cause, depth++) {
    if (current.message && !parts.includes(current.message)) parts.push(current.message);
  }
  if (parts.length === 0) return String(error);
  const [first, ...rest] = parts;
  return rest.length > 0 ? `${first} (${rest.join('; ')})` : (first as string);
}

/** The timeout errors: no answer within `timeoutMs`, or a stream that stalled that long. */
export function timeoutError(context: FailureContext, stalled: boolean): PlatformError {
  const message = stalled ? `${context.where} stopped streaming: no data for ${context.timeoutMs} ms` : `${context.where} did not answer within ${context.timeoutMs} ms`;
  return new PlatformError('timeout', message, { retryable: true, details: { provider: context.provider, upstream: context.upstream } });
}
