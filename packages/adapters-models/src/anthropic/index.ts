import { type ByteLimit, type ChatModel, type ChatModelCapabilities, PlatformError } from '@agent-platform/core';
import { createAnthropic } from '@ai-sdk/anthropic';
import { aiSdkChatModel, DEFAULT_ANSWER_LIMIT, describeUpstream, getJson, modelFetch } from '../ai-sdk/index.js';

export interface AnthropicChatModelOptions {
  /**
   * Sent as `x-api-key`. Environment variables are never read (`ANTHROPIC_API_KEY` is the
   * caller's business), so an operator's key never goes to a server a user named.
   */
  readonly apiKey: string;
  /** Default `https://api.anthropic.com/v1` (a gateway's or proxy's own, e.g. LiteLLM's `/anthropic/v1`). */
  readonly baseURL?: string;
  /** Every request goes through it (e.g. the server's guarded fetch); default the global fetch. */
  readonly fetch?: typeof fetch;
  /** Milliseconds to wait for the answer (per attempt) and then for each next event. Default 120000. */
  readonly timeoutMs?: number;
  /** Retries of a call that failed before its first event (429, 529 `overloaded_error`, 5xx, connection errors). Default 2. */
  readonly maxRetries?: number;
  /** Most bytes of one answer (a body, one event, the streamed text, thinking and tool calls). Default 4 MiB. */
  readonly answerLimit?: ByteLimit;
}

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com/v1';

/** Claude takes tool choice, parallel tool use (as `disable_parallel_tool_use`), images, structured output and extended thinking. */
const CAPABILITIES: ChatModelCapabilities = { toolChoice: true, parallelToolCalls: true, images: true, structuredOutputs: true, reasoning: true };

/** Pages of `GET /models` read at most (1000 models each). */
const MAX_MODEL_PAGES = 10;

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/**
 * A chat model of Anthropic's Messages API (`POST {baseURL}/messages`, streamed), on the AI
 * SDK's `@ai-sdk/anthropic`, every request through `fetch`. `ChatRequest.providerOptions` are
 * the AI SDK's Anthropic options: `thinking: { type: 'enabled', budgetTokens }` (extended
 * thinking, streamed as `reasoning` events), `cacheControl: { type: 'ephemeral' }` (prompt
 * caching), `structuredOutputMode`, ... `responseFormat` uses Claude's structured output
 * (`output_config.format`) where the model has it, else a forced `json` tool; `json_object` is
 * always the forced tool with an open object schema.
 *
 * @example
 * const claude = anthropicChatModel({ apiKey: process.env.ANTHROPIC_API_KEY ?? '' });
 * const { content } = await collectChat(claude.stream({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }));
 */
export function anthropicChatModel(options: AnthropicChatModelOptions): ChatModel {
  const baseURL = (options.baseURL ?? ANTHROPIC_BASE_URL).replace(/\/+$/, '');
  const { where, upstream } = describeUpstream('anthropic', baseURL);
  const answerLimit = options.answerLimit ?? DEFAULT_ANSWER_LIMIT;
  const fetch = modelFetch({ fetch: options.fetch, answerLimit, where });
  let provider: ReturnType<typeof createAnthropic>;
  try {
    // A base URL and a key always given: the package would otherwise read ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY.
    provider = createAnthropic({ apiKey: options.apiKey, baseURL, fetch });
  } catch (error) {
    throw PlatformError.invalid(`anthropicChatModel: ${error instanceof Error ? error.message : String(error)}`);
  }
  const headers = { 'x-api-key': options.apiKey, 'anthropic-version': '2023-06-01' };

  return aiSdkChatModel({
    provider: 'anthropic',
    where,
    upstream,
    model: (modelId) => provider.messages(modelId),
    capabilities: CAPABILITIES,
    secrets: [options.apiKey],
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    answerLimit,
    parallelToolCalls: (parallel) => ({ disableParallelToolUse: !parallel }),
    // With extended thinking, Claude requires the signed thinking block of a tool step back with the results.
    sendReasoning: true,
    adjust: (call, request) => {
      if (request.responseFormat?.type !== 'json_object') return call;
      // Claude has no "any JSON object" mode: a forced tool taking any object stands for it.
      const own = (call.providerOptions?.anthropic ?? {}) as Record<string, never>;
      return {
        ...call,
        responseFormat: { type: 'json', schema: { type: 'object', additionalProperties: true } },
        providerOptions: { ...call.providerOptions, anthropic: { ...own, structuredOutputMode: 'jsonTool' } },
      };
    },
    async listModels(signal) {
      const names: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < MAX_MODEL_PAGES; page++) {
        const query = `limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`;
        const body = await getJson(fetch, `${baseURL}/models?${query}`, headers, signal);
        const data = member(body, 'data');
        if (!Array.isArray(data)) throw new PlatformError('upstream_error', `${where} answered GET ${upstream}/models with an unexpected shape`, { details: { provider: 'anthropic', upstream } });
        names.push(...data.map((model) => member(model, 'id')).filter((name): name is string => typeof name === 'string'));
        const last = member(body, 'last_id');
        if (member(body, 'has_more') !== true || typeof last !== 'string') break;
        after = last;
      }
      return names;
    },
  });
}
