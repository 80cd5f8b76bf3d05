import { type ByteLimit, type ChatModel, type ChatModelCapabilities, PlatformError } from '@agent-platform/core';
import { createOpenAI } from '@ai-sdk/openai';
import { aiSdkChatModel, DEFAULT_ANSWER_LIMIT, describeUpstream, getJson, modelFetch } from '../ai-sdk/index.js';
import { listData, member, openaiFamilyOptions } from '../openai-family.js';

export interface OpenAIResponsesChatModelOptions {
  /** Sent as `Authorization: Bearer <apiKey>`. Environment variables (`OPENAI_API_KEY`) are never read. */
  readonly apiKey: string;
  /** Default `https://api.openai.com/v1` (a gateway's or proxy's own; `OPENAI_BASE_URL` is never read). */
  readonly baseURL?: string;
  /** Every request goes through it (e.g. the server's guarded fetch); default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Milliseconds to wait for the answer (per attempt) and then for each next event. Default 120000. */
  readonly timeoutMs?: number;
  /** Retries of a call that failed before its first event (408, 409, 429 after its `retry-after`, 5xx, connection errors). Default 2. */
  readonly maxRetries?: number;
  /** Most bytes of one answer (a body, one event, the streamed text, reasoning and tool calls). Default 4 MiB. */
  readonly answerLimit?: ByteLimit;
  /**
   * Whether OpenAI keeps the responses (`store`). Default false: our chats keep their own
   * context and send it whole each turn, so nothing needs to live at OpenAI (and nothing a user
   * said is kept there for 30 days); a request's `providerOptions.store` overrides it.
   */
  readonly store?: boolean;
  /** The `provider` the model reports and errors name. Default `openai`. */
  readonly provider?: string;
}

export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** The fewest output tokens the Responses API takes (`max_output_tokens` >= 16): a smaller `maxTokens` is raised to it. */
const MIN_OUTPUT_TOKENS = 16;

/** The Responses API honours OpenAI's tool settings, images, structured outputs, and streams reasoning summaries. */
const CAPABILITIES: ChatModelCapabilities = { toolChoice: true, parallelToolCalls: true, strictTools: true, images: true, structuredOutputs: true, reasoning: true };

/**
 * A chat model of OpenAI's Responses API (`POST {baseURL}/responses` with `stream: true`), for
 * models served only there, on the AI SDK's `@ai-sdk/openai` (`.responses(model)`), every request
 * through `fetch`. Its semantic events become ours: `response.output_text.delta` text,
 * `response.reasoning_summary_text.delta` reasoning, each `function_call` item (its
 * `response.function_call_arguments.delta`s assembled) a tool call, `response.completed` /
 * `response.incomplete` (`max_output_tokens` → `length`, `content_filter`) the finish with usage
 * incl. `cached_tokens` and `reasoning_tokens`; `response.failed` and `error` events fail the call.
 * `store` is false unless asked. `ChatRequest.providerOptions` are the AI SDK's OpenAI Responses
 * options (`reasoningEffort`, `reasoningSummary: 'auto'` to stream reasoning, `serviceTier`, ...).
 *
 * @example
 * const gpt = openaiResponsesChatModel({ apiKey: process.env.OPENAI_API_KEY ?? '' });
 * const { content, reasoning } = await collectChat(gpt.stream({ model: 'o4-mini', messages: [{ role: 'user', content: 'Hi' }], providerOptions: { reasoningSummary: 'auto' } }));
 */
export function openaiResponsesChatModel(options: OpenAIResponsesChatModelOptions): ChatModel {
  const provider = options.provider ?? 'openai';
  const baseURL = (options.baseURL ?? OPENAI_BASE_URL).replace(/\/+$/, '');
  const { where, upstream } = describeUpstream(provider, baseURL);
  const answerLimit = options.answerLimit ?? DEFAULT_ANSWER_LIMIT;
  const fetch = modelFetch({ fetch: options.fetch, answerLimit, where });
  const store = options.store ?? false;
  let openai: ReturnType<typeof createOpenAI>;
  try {
    // The base URL and key always given: the package would otherwise read OPENAI_BASE_URL and OPENAI_API_KEY.
    openai = createOpenAI({ apiKey: options.apiKey, baseURL, fetch });
  } catch (error) {
    throw PlatformError.invalid(`openaiResponsesChatModel: ${error instanceof Error ? error.message : String(error)}`);
  }

  return aiSdkChatModel({
    provider,
    where,
    upstream,
    model: (modelId) => openai.responses(modelId),
    capabilities: CAPABILITIES,
    ...openaiFamilyOptions({ apiKey: options.apiKey, timeoutMs: options.timeoutMs, maxRetries: options.maxRetries, answerLimit }),
    adjust: (call) => ({
      ...call,
      // The API refuses a max_output_tokens below 16.
      ...(call.maxOutputTokens !== undefined ? { maxOutputTokens: Math.max(call.maxOutputTokens, MIN_OUTPUT_TOKENS) } : {}),
      providerOptions: { ...call.providerOptions, openai: { store, ...call.providerOptions?.openai } },
    }),
    async listModels(signal) {
      const body = await getJson(fetch, `${baseURL}/models`, { authorization: `Bearer ${options.apiKey}` }, signal);
      const data = listData(body);
      if (!data) throw new PlatformError('upstream_error', `${where} answered GET ${upstream}/models with an unexpected shape`, { details: { provider, upstream } });
      return data.map((model) => member(model, 'id')).filter((id): id is string => typeof id === 'string');
    },
  });
}
