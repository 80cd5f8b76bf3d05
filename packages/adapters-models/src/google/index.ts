import { type ByteLimit, type ChatModel, type ChatModelCapabilities, PlatformError } from '@agent-platform/core';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { aiSdkChatModel, DEFAULT_ANSWER_LIMIT, describeUpstream, modelFetch } from '../ai-sdk/index.js';
import { classifyGoogleFailure } from './errors.js';
import { listGoogleModels } from './models.js';
import { withPromptBlockAsError } from './prompt-block.js';
import { joinToolResults } from './tool-results.js';

/** The Gemini API (Google AI Studio keys). */
export const DEFAULT_GOOGLE_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

export interface GoogleChatModelOptions {
  /** A Gemini API key, sent as `x-goog-api-key`. Environment variables are never read. */
  readonly apiKey: string;
  /** Default `https://generativelanguage.googleapis.com/v1beta`; a gateway's or proxy's URL ends in the API version too. */
  readonly baseURL?: string;
  /** A custom fetch (the server passes its guarded one: SSRF policy, redirects, DNS). Every call goes through it. */
  readonly fetch?: typeof fetch;
  /** Milliseconds to wait for the answer's headers and, once it streams, for each next chunk. Default 120000. */
  readonly timeoutMs?: number;
  /** Retries, with backoff, of a call that failed before its stream began (429 within 60 s, 5xx, connection errors). Default 2. */
  readonly maxRetries?: number;
  /** Most bytes of one answer, enforced while reading (as `openaiChatModel`'s). Default 4 MiB. */
  readonly answerLimit?: ByteLimit;
}

/**
 * What Gemini honours: a forced or named function (`toolConfig.functionCallingConfig` mode `ANY`,
 * with `allowedFunctionNames`), images (`inlineData`), structured outputs (`responseMimeType:
 * application/json`, with `responseJsonSchema`) and thought summaries (`thinkingConfig.includeThoughts`).
 * Not `parallelToolCalls: false` (the API has no such switch), nor strict tools.
 */
export const GOOGLE_CAPABILITIES: ChatModelCapabilities = { toolChoice: true, images: true, structuredOutputs: true, reasoning: true };

/**
 * A model of the Gemini API (`generativelanguage.googleapis.com`), over `@ai-sdk/google`:
 * `streamGenerateContent?alt=sse`, function declarations and calls (parallel ones too), thought
 * parts as `reasoning` events, images as `inlineData`, `responseFormat` as a response JSON
 * schema, and Gemini's own options (`safetySettings`, `thinkingConfig`, ...) from
 * `ChatRequest.providerOptions`, which go to the API as `@ai-sdk/google` names them.
 *
 * A prompt Gemini blocks (`promptFeedback.blockReason`) fails with `upstream_error` of kind
 * `content_filter`; an answer it cuts for safety (`finishReason: SAFETY`, `RECITATION`, ...)
 * finishes as `content_filter` with the text it had. A bad key (400 `API_KEY_INVALID`) is kind
 * `auth`, a quota refusal's `RetryInfo` is `retryAfterSeconds`. The key never appears in a message.
 *
 * @example
 * const model = googleChatModel({ apiKey: process.env.GEMINI_API_KEY ?? '' });
 * for await (const event of model.stream({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hi' }] })) console.log(event);
 */
export function googleChatModel(options: GoogleChatModelOptions): ChatModel {
  if (typeof options.apiKey !== 'string' || options.apiKey.trim() === '') throw PlatformError.invalid('googleChatModel: an apiKey is required');
  const apiKey = options.apiKey;
  const baseURL = (options.baseURL ?? DEFAULT_GOOGLE_BASE_URL).replace(/\/+$/, '');
  const { where, upstream } = describeUpstream('google', baseURL);
  const answerLimit = options.answerLimit ?? DEFAULT_ANSWER_LIMIT;
  const fetch = modelFetch({ fetch: options.fetch, answerLimit, where });
  const google = createGoogleGenerativeAI({ apiKey, baseURL, fetch });
  const details = { provider: 'google', upstream };
  const blocked = (reason: string) =>
    new PlatformError('upstream_error', `${where} refused the prompt: Gemini blocked it (${reason}), so no answer was generated`, {
      retryable: false,
      details: { ...details, kind: 'content_filter', blockReason: reason },
    });
  return aiSdkChatModel({
    provider: 'google',
    where,
    upstream,
    model: (modelId) => withPromptBlockAsError(google(modelId), blocked),
    capabilities: GOOGLE_CAPABILITIES,
    listModels: (signal) => listGoogleModels(fetch, { baseURL, apiKey, where, details }, signal),
    secrets: [apiKey],
    answerLimit,
    classify: classifyGoogleFailure,
    adjust: joinToolResults,
    // Gemini 3 signs the function calls of a turn and refuses the turn's next request without them.
    callMetadata: true,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
  });
}
