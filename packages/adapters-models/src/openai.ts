import {
  type ByteLimit,
  type ChatEvent,
  type ChatModel,
  type ChatModelCapabilities,
  type ChatRequest,
  DEFAULT_UPSTREAM_LIMITS,
  type FinishReason,
  isPlatformError,
  PlatformError,
  type ToolCall,
  type Usage,
} from '@agent-platform/core';
import { answerTooLarge, boundedFetch, byteBudget, displayUrl, isEventStream, isUnresolvedHost, safeReason, unreachableAs } from '@agent-platform/core/internal';
import OpenAI from 'openai';
import { chainOf, failureMessage, readFailure } from './ai-sdk/errors.js';
import { toOpenAIMessage, toOpenAIResponseFormat, toOpenAITool, toOpenAIToolChoice } from './openai-request.js';

type OpenAIChunk = OpenAI.Chat.Completions.ChatCompletionChunk;
type StreamingBody = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;

export interface OpenAIChatModelOptions {
  /**
   * Sent as `Authorization: Bearer <apiKey>`. Without one no `Authorization` header is sent
   * (local servers need none). Environment variables are never read: `OPENAI_API_KEY` is the
   * caller's business (the server's provider resolver applies it), so an operator's key never
   * goes to a server a user named.
   */
  readonly apiKey?: string;
  /** e.g. `https://api.openai.com/v1` (default), `http://127.0.0.1:8000/v1` (vLLM). */
  readonly baseURL?: string;
  /**
   * Milliseconds to wait for the answer's headers (per attempt) and, once it streams, for each
   * next chunk (a stream that stalls that long is cut). Default 120000.
   */
  readonly timeoutMs?: number;
  /**
   * Retries by the client, with backoff, of a request that failed before its stream began
   * (408, 409, 429, 5xx, connection errors, timeouts; it honours `retry-after`). Default 2.
   */
  readonly maxRetries?: number;
  /** A custom fetch (e.g. one that connects only to addresses the operator allowed, or a proxy's). */
  readonly fetch?: typeof fetch;
  /**
   * Most bytes of one answer of the server, enforced while reading: a body that is not streamed
   * (the models list, an error), one event of a streamed answer, and the text and tool calls
   * (names, ids, arguments) a streamed answer adds up to. Past it the upstream is cut off and
   * the call fails with `upstream_error` naming `setting`. Default 4 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.modelAnswerBytes`).
   */
  readonly answerLimit?: ByteLimit;
  /** The `provider` the model reports and errors name. Default `openai`. */
  readonly provider?: string;
  /**
   * Which request field carries `ChatRequest.maxTokens`. Default `max_tokens`, which every
   * OpenAI-compatible server understands (Ollama, vLLM, llama.cpp, LM Studio) and OpenAI still
   * accepts for its GPT-4-class models. OpenAI's reasoning models (o-series, gpt-5) reject it and
   * want `max_completion_tokens`, which many compatible servers ignore or reject.
   */
  readonly maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /**
   * What the server honours of OpenAI's tool settings (`tool_choice`, `parallel_tool_calls`,
   * `strict`): requests that ask for one it lacks are refused before they are sent, instead of
   * being ignored by the server. Default: all of them, as OpenAI's API does.
   */
  readonly capabilities?: ChatModelCapabilities;
}

/** OpenAI's API honours every tool setting, takes images (vision models) and structured outputs. */
const OPENAI_CAPABILITIES: ChatModelCapabilities = { toolChoice: true, parallelToolCalls: true, strictTools: true, images: true, structuredOutputs: true };

/**
 * OpenAI's finish reasons onto ours: `function_call` (the legacy form of a tool call) is
 * `tool_calls`; `content_filter` (the provider cut the answer) is `content_filter`; any reason
 * this code does not know is `stop`; assembled tool calls make it `tool_calls` whatever the
 * server said (some servers report `stop`), except after `length` or `content_filter`, whose
 * tool calls may be cut short.
 */
function finishReasonOf(reason: string, hasToolCalls: boolean): FinishReason {
  if (reason === 'length' || reason === 'content_filter') return reason;
  if (hasToolCalls || reason === 'tool_calls' || reason === 'function_call') return 'tool_calls';
  return 'stop';
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);

function usageOf(usage: OpenAIChunk['usage']): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const promptTokens = count(usage.prompt_tokens);
  const completionTokens = count(usage.completion_tokens);
  const total = count(usage.total_tokens);
  return { promptTokens, completionTokens, totalTokens: total || promptTokens + completionTokens };
}

/** What one tool call counts against the answer's limit beyond its id, name and arguments: its JSON framing. */
const CALL_FRAMING_BYTES = 64;

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * How a server lists its models (`ChatModel.listModels`): the route, relative to the base URL or
 * absolute, and the names in its JSON answer (undefined for an answer of another shape).
 */
export interface ModelListing {
  readonly path: string;
  names(body: unknown): string[] | undefined;
}

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** The `name` (or `id`) of each entry of `body[key]`, an array; undefined when it is not one. */
export function namesOf(body: unknown, key: string, field: string): string[] | undefined {
  const list = member(body, key);
  if (!Array.isArray(list)) return undefined;
  return list.map((entry) => member(entry, field)).filter((name): name is string => typeof name === 'string');
}

/** OpenAI's `GET /models`: `{ object: "list", data: [{ id, ... }] }`. */
const OPENAI_MODELS: ModelListing = { path: '/models', names: (body) => namesOf(body, 'data', 'id') };

/**
 * A chat model of any server that speaks OpenAI's `POST /v1/chat/completions` (OpenAI, Azure
 * OpenAI's v1 API, vLLM, LM Studio, llama.cpp server, OpenRouter, Ollama's `/v1`, ...), over
 * the official `openai` client. Every call streams (`stream: true` with
 * `stream_options.include_usage`): text deltas are yielded as they arrive, tool-call fragments
 * are assembled by index into whole `tool_call` events, and one `finish` comes last.
 *
 * Failures are `PlatformError`s naming the provider and server: `upstream_error` for an HTTP
 * error (with its status; retryable for 408, 409, 429 and 5xx), an unreachable server, an
 * `{error}` event or a malformed stream; `timeout` when the server does not answer or stalls;
 * `aborted` when the request's signal is aborted. The API key never appears in a message.
 */
export function openaiChatModel(options: OpenAIChatModelOptions = {}): ChatModel {
  return openaiCompatibleModel(options, OPENAI_MODELS);
}

/** `openaiChatModel` for a server that lists its models its own way (Ollama's tags route). */
export function openaiCompatibleModel(options: OpenAIChatModelOptions, listing: ModelListing): ChatModel {
  const provider = options.provider ?? 'openai';
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw PlatformError.invalid('openaiChatModel: timeoutMs must be a positive integer');
  const maxRetries = options.maxRetries ?? 2;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw PlatformError.invalid('openaiChatModel: maxRetries must be an integer ≥ 0');
  const apiKey = options.apiKey || undefined;
  const maxTokensField = options.maxTokensField ?? 'max_tokens';
  const answerLimit = options.answerLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.modelAnswerBytes, setting: 'the answerLimit option of the chat model' };
  const baseURL = options.baseURL ?? 'https://api.openai.com/v1';
  const where = `Model provider ${provider} (${displayUrl(baseURL)})`;
  // Every answer is read under the limit: a streamed completion (a POST answered with an event
  // stream) event by event, anything else (a listing, an error, a body that is not a stream) whole.
  const fetch = boundedFetch(options.fetch ?? ((input, init) => globalThis.fetch(input, init)), (request, response) => ({
    maxBytes: request.method === 'POST' && isEventStream(response) ? undefined : answerLimit.bytes,
    maxEventBytes: answerLimit.bytes,
    subject: where,
    setting: answerLimit.setting,
  }));
  const client = new OpenAI({
    // The client insists on a key; without one, the header it would make is removed below.
    apiKey: apiKey ?? 'none',
    baseURL,
    // Nothing from the environment: no organization, project or admin key goes to a server a user named.
    organization: null,
    project: null,
    adminAPIKey: null,
    webhookSecret: null,
    timeout: timeoutMs,
    maxRetries,
    // Problems are reported as errors; the client's console logging (e.g. of a malformed event) is off.
    logLevel: 'off',
    ...(apiKey === undefined ? { defaultHeaders: { Authorization: null } } : {}),
    fetch,
  });
  const upstream = displayUrl(client.baseURL);
  const details = (extra: Record<string, unknown> = {}) => ({ provider, upstream, ...extra });
  /** Never let the key through, whatever a server or the client wrote. */
  const scrub = (text: string): string => {
    let out = text.replace(/\/\/[^/@\s]+@/g, '//');
    if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join('[redacted]');
    return out;
  };

  const toPlatformError = (error: unknown, model?: string): PlatformError => {
    if (isPlatformError(error)) return error;
    if (error instanceof OpenAI.APIConnectionTimeoutError) {
      return new PlatformError('timeout', `${where} did not answer within ${timeoutMs} ms`, { retryable: true, details: details(), cause: error });
    }
    if (error instanceof OpenAI.APIUserAbortError) return new PlatformError('aborted', 'The chat request was aborted', { cause: error });
    if (error instanceof OpenAI.APIConnectionError) {
      // The fetch refused the address (the outbound policy): pass its answer through.
      if (isUnresolvedHost(error.cause)) return unreachableAs(`${where} is unreachable`, error.cause);
      if (isPlatformError(error.cause)) return error.cause;
      const reason = scrub(chainOf(error.cause ?? error));
      return new PlatformError('unavailable', `${where} is unreachable: ${reason}`, { retryable: true, details: details(), cause: error });
    }
    if (error instanceof OpenAI.APIError) {
      // The status and, where the server gave one, its error code: never the body's text.
      const reason = safeReason(error.error);
      const status = error.status;
      if (status === undefined) {
        // An `{ "error": ... }` event inside the stream.
        return new PlatformError('upstream_error', `${where} reported an error mid-stream${reason}`, { retryable: true, details: details(), cause: error });
      }
      // The kind (auth, rate_limited with retry-after, context_length, model_not_found, content_filter) the server answers alike for every provider.
      const reading = readFailure({ status, headers: Object.fromEntries(error.headers ?? []), body: { error: error.error }, model: model ?? '' }, reason);
      const message = `${failureMessage(where, status, reason, reading, model ?? '')}${reading.kind === 'auth' && apiKey === undefined ? ' (no API key was configured)' : ''}`;
      return new PlatformError('upstream_error', message, {
        retryable: status === 408 || status === 409 || status === 429 || status >= 500,
        details: details({ status, ...reading }),
        cause: error,
      });
    }
    if (error instanceof SyntaxError) {
      // JSON.parse's message quotes the text it could not read: not repeated.
      return new PlatformError('upstream_error', `${where} sent a malformed event stream: an event that is not JSON`, { details: details(), cause: error });
    }
    // A body that broke off (the socket closed or was reset while streaming), or anything else the transport threw.
    return new PlatformError('upstream_error', `${where} is unreachable: the connection broke mid-stream: ${scrub(chainOf(error))}`, {
      retryable: true,
      details: details(),
      cause: error,
    });
  };

  async function* stream(request: ChatRequest): AsyncGenerator<ChatEvent, void, undefined> {
    const signal = request.signal;
    const aborted = () => new PlatformError('aborted', 'The chat request was aborted', { cause: signal?.reason });
    if (signal?.aborted) throw aborted();
    if (!request.model) throw PlatformError.invalid(`${where}: a model name is required`);

    const body: StreamingBody = {
      model: request.model,
      messages: request.messages.map(toOpenAIMessage),
      stream: true,
      stream_options: { include_usage: true },
      // OpenAI rejects an empty `tools` list.
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools.map(toOpenAITool) } : {}),
      ...(request.tools && request.tools.length > 0 && request.toolChoice ? { tool_choice: toOpenAIToolChoice(request.toolChoice) } : {}),
      ...(request.tools && request.tools.length > 0 && request.parallelToolCalls !== undefined ? { parallel_tool_calls: request.parallelToolCalls } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { [maxTokensField]: request.maxTokens } : {}),
      ...(request.topP !== undefined ? { top_p: request.topP } : {}),
      ...(request.frequencyPenalty !== undefined ? { frequency_penalty: request.frequencyPenalty } : {}),
      ...(request.presencePenalty !== undefined ? { presence_penalty: request.presencePenalty } : {}),
      ...(request.seed !== undefined ? { seed: request.seed } : {}),
      ...(request.stop !== undefined ? { stop: [...request.stop] } : {}),
      ...(request.responseFormat !== undefined ? { response_format: toOpenAIResponseFormat(request.responseFormat) } : {}),
      ...(typeof request.providerOptions?.reasoningEffort === 'string' ? { reasoning_effort: request.providerOptions.reasoningEffort as OpenAI.ReasoningEffort } : {}),
    };

    // One controller for the call: the caller's signal and the stall timer both abort it.
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let stalled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waitForChunk = () => {
      timer = setTimeout(() => {
        stalled = true;
        controller.abort();
      }, timeoutMs);
    };
    const stopWaiting = () => clearTimeout(timer);
    const interrupted = (): PlatformError | undefined =>
      signal?.aborted ? aborted() : stalled ? new PlatformError('timeout', `${where} stopped streaming: no data for ${timeoutMs} ms`, { retryable: true, details: details() }) : undefined;

    let iterator: AsyncIterator<OpenAIChunk> | undefined;
    let finished = false;
    try {
      try {
        const chunks = await client.chat.completions.create(body, { signal: controller.signal });
        iterator = chunks[Symbol.asyncIterator]();
      } catch (error) {
        throw interrupted() ?? toPlatformError(error, request.model);
      }

      const calls = new Map<number, PartialCall>();
      // The answer's text and tool calls, counted as they arrive (the calls are held until they are whole).
      const answer = byteBudget(answerLimit.bytes, () => answerTooLarge(where, 'an answer', answerLimit.bytes, answerLimit.setting));
      let lastIndex = -1;
      let reason: string | undefined;
      let usage: Usage | undefined;
      let callsSent = false;
      const completeCalls = function* (): Generator<ChatEvent> {
        if (callsSent) return;
        callsSent = true;
        for (const index of [...calls.keys()].sort((a, b) => a - b)) {
          const call = calls.get(index) as PartialCall;
          // Servers that give no id (some OpenAI-compatible ones) get one, so tool results can refer to it.
          const complete: ToolCall = { id: call.id || `call_${crypto.randomUUID().replaceAll('-', '')}`, name: call.name, arguments: call.arguments };
          yield { type: 'tool_call', call: complete };
        }
      };

      while (true) {
        let next: IteratorResult<OpenAIChunk>;
        waitForChunk();
        try {
          next = await iterator.next();
        } catch (error) {
          throw interrupted() ?? toPlatformError(error);
        } finally {
          stopWaiting();
        }
        // The client ends the stream quietly when its request is aborted.
        const cut = interrupted();
        if (cut) throw cut;
        if (next.done) break;

        const chunk = next.value as OpenAIChunk | null;
        if (!chunk || typeof chunk !== 'object') throw new PlatformError('upstream_error', `${where} sent a malformed event stream: a chunk that is not an object`, { details: details() });
        const chunkUsage = usageOf(chunk.usage);
        if (chunkUsage) usage = chunkUsage;
        const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
        for (const choice of choices) {
          // Only one choice is asked for (no `n`); another index is not ours.
          if (!choice || (choice.index ?? 0) !== 0) continue;
          const delta = choice.delta ?? {};
          // Reasoning, where a compatible server streams it (not in OpenAI's types): DeepSeek's and vLLM's `reasoning_content`, else vLLM's newer and Ollama's `reasoning`.
          const thought = (delta as { reasoning_content?: unknown }).reasoning_content ?? (delta as { reasoning?: unknown }).reasoning;
          if (typeof thought === 'string' && thought !== '') {
            answer.add(thought);
            yield { type: 'reasoning', delta: thought };
          }
          if (typeof delta.content === 'string' && delta.content !== '') {
            answer.add(delta.content);
            yield { type: 'text', delta: delta.content };
          }
          // A refusal is the model's answer to the user, streamed in its own field by OpenAI.
          if (typeof delta.refusal === 'string' && delta.refusal !== '') {
            answer.add(delta.refusal);
            yield { type: 'text', delta: delta.refusal };
          }
          for (const fragment of delta.tool_calls ?? []) {
            const fn = fragment.function;
            // Servers that send whole calls without `index` get one: a new id starts a new call.
            const known = calls.get(lastIndex);
            const index = typeof fragment.index === 'number' ? fragment.index : known && (!fragment.id || fragment.id === known.id) ? lastIndex : lastIndex + 1;
            let call = calls.get(index);
            if (!call) {
              // A call costs its framing too, so that a stream of empty calls is bounded as well.
              answer.addBytes(CALL_FRAMING_BYTES);
              call = { id: '', name: '', arguments: '' };
              calls.set(index, call);
            }
            lastIndex = Math.max(lastIndex, index);
            answer.add(`${fragment.id ?? ''}${fn?.name ?? ''}${fn?.arguments ?? ''}`);
            if (fragment.id && !call.id) call.id = fragment.id;
            // The name comes whole in the first fragment; a server that repeats it must not double it.
            if (fn?.name && fn.name !== call.name) call.name += fn.name;
            if (fn?.arguments) call.arguments += fn.arguments;
          }
          if (choice.finish_reason) {
            reason = choice.finish_reason;
            yield* completeCalls();
          }
        }
      }

      if (reason === undefined) {
        throw new PlatformError('upstream_error', `${where} ended the stream before the answer was finished (no finish_reason)`, { retryable: true, details: details() });
      }
      yield* completeCalls();
      finished = true;
      const finish = finishReasonOf(reason, calls.size > 0);
      yield usage ? { type: 'finish', reason: finish, usage } : { type: 'finish', reason: finish };
    } finally {
      stopWaiting();
      signal?.removeEventListener('abort', onAbort);
      if (!finished) {
        // Stopped early (the consumer left, or an error): close the upstream connection.
        controller.abort();
        await iterator?.return?.().catch(() => undefined);
      }
    }
  }

  async function listModels({ signal }: { readonly signal?: AbortSignal } = {}): Promise<string[]> {
    let body: unknown;
    try {
      body = await client.get(listing.path, signal ? { signal } : {});
    } catch (error) {
      if (signal?.aborted) throw new PlatformError('aborted', 'Listing the models was aborted', { cause: signal.reason });
      throw toPlatformError(error);
    }
    const names = listing.names(body);
    if (!names) throw new PlatformError('upstream_error', `${where} answered GET ${displayUrl(client.buildURL(listing.path, undefined))} with an unexpected shape`, { details: details() });
    return names;
  }

  return {
    provider,
    capabilities: { ...(options.capabilities ?? OPENAI_CAPABILITIES) },
    stream: (request) => stream(request),
    listModels,
  };
}
