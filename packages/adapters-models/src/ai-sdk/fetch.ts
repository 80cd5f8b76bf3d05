import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS } from '@agent-platform/core';
import { boundedFetch, displayUrl, isEventStream } from '@agent-platform/core/internal';
import { APICallError } from '@ai-sdk/provider';

/** The default limit of a model's answer, and the setting that names it. */
export const DEFAULT_ANSWER_LIMIT: ByteLimit = { bytes: DEFAULT_UPSTREAM_LIMITS.modelAnswerBytes, setting: 'the answerLimit option of the chat model' };

/** How messages name a provider's server (`Model provider anthropic (https://api.anthropic.com/v1)`), and the address `details.upstream` gives. */
export function describeUpstream(provider: string, baseURL: string): { readonly where: string; readonly upstream: string } {
  const upstream = displayUrl(baseURL);
  return { where: `Model provider ${provider} (${upstream})`, upstream };
}

/**
 * The fetch a provider's AI SDK package is given: the caller's (the guarded one, or the global
 * fetch), every answer read under `answerLimit` as openai.ts reads them: a streamed answer (a
 * POST answered with an event stream, or what `streamed` says is one) event by event, anything
 * else (a listing, an error) whole.
 */
export function modelFetch(options: {
  readonly fetch?: typeof fetch | undefined;
  readonly answerLimit: ByteLimit;
  readonly where: string;
  /** Answers that are streams although not `text/event-stream` (Bedrock's binary event stream). */
  readonly streamed?: (response: Response) => boolean;
  /**
   * Whether each event (the lines up to a blank line) of every answer is bounded by
   * `answerLimit`, and the body handed on a whole line at a time. Default true. False for a
   * binary stream (Bedrock's event stream), where a newline byte is no boundary: the count would
   * be wrong and chunks held back until a `0x0a` byte happens to come; such a provider bounds its
   * own frames.
   */
  readonly eventBytes?: boolean;
}): typeof fetch {
  const streamed = options.streamed ?? isEventStream;
  const maxEventBytes = options.eventBytes === false ? undefined : options.answerLimit.bytes;
  return boundedFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), (request, response) => ({
    maxBytes: request.method === 'POST' && streamed(response) ? undefined : options.answerLimit.bytes,
    maxEventBytes,
    subject: options.where,
    setting: options.answerLimit.setting,
  }));
}

/**
 * GETs a JSON document (a provider's models route) through `fetch`, failing as the AI SDK's
 * calls fail, so one mapping serves both: an answer other than 2xx is an `APICallError` with
 * its status, headers and body; no answer is one without a status.
 */
export async function getJson(fetch: typeof globalThis.fetch, url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'GET', headers, ...(signal ? { signal } : {}) });
  } catch (error) {
    if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
      throw new APICallError({ message: 'Cannot connect to API', url, requestBodyValues: undefined, cause: error.cause ?? error, isRetryable: true });
    }
    throw error;
  }
  const text = await response.text();
  if (!response.ok) {
    const responseHeaders = Object.fromEntries(response.headers.entries());
    throw new APICallError({ message: response.statusText, url, requestBodyValues: undefined, statusCode: response.status, responseHeaders, responseBody: text });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Not JSON: the caller finds no list in it and says the answer had an unexpected shape.
    return text;
  }
}
