import { type ByteLimit, type ChatEvent, type ChatModel, type ChatModelCapabilities, type ChatRequest, type FinishReason, PlatformError, type ToolCall, type Usage } from '@agent-platform/core';
import { answerTooLarge, byteBudget } from '@agent-platform/core/internal';
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3FinishReason, LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';
import { toCallOptions } from './call-options.js';
import { type FailureContext, type FailureReading, timeoutError, toPlatformError, type UpstreamFailure } from './errors.js';
import { DEFAULT_ANSWER_LIMIT } from './fetch.js';
import { ReasoningBlocks } from './reasoning.js';

export interface AiSdkChatModelOptions {
  /** Our name of the provider (`ChatModel.provider`, `details.provider`), e.g. `anthropic`. */
  readonly provider: string;
  /** How messages name the server: `Model provider anthropic (https://api.anthropic.com/v1)` (`describeUpstream`). */
  readonly where: string;
  /** The server's address as `details.upstream` gives it (`displayUrl` of the base URL; `describeUpstream`). */
  readonly upstream: string;
  /** The AI SDK's language model of a model name (e.g. `(id) => createAnthropic({...}).messages(id)`). */
  readonly model: (modelId: string) => LanguageModelV3;
  /** What the provider honours beyond text and tools. Default: none of it. */
  readonly capabilities?: ChatModelCapabilities;
  /** The model names of the provider's models route; its failures are mapped as the calls' are. */
  readonly listModels?: (signal?: AbortSignal) => Promise<string[]>;
  /** Texts never to appear in an error's message (the key, a secret access key, a session token). */
  readonly secrets?: readonly string[];
  /** Milliseconds to wait for the answer (per attempt) and, once it streams, for each next part. Default 120000. */
  readonly timeoutMs?: number;
  /**
   * Retries of a call that failed before its first event (408, 409, 429, 5xx, connection
   * errors), after `retry-after` when the server gives one of at most 60 s (a longer one is
   * not waited for: the failure, with `retryAfterSeconds`, goes to the caller), else after a
   * backoff of 0.5 s doubling to 8 s. Default 2.
   */
  readonly maxRetries?: number;
  /** Most bytes of the text, reasoning and tool calls of one answer. Default 4 MiB. */
  readonly answerLimit?: ByteLimit;
  /** The key of `ChatRequest.providerOptions` in the AI SDK's `providerOptions`. Default `provider`. */
  readonly providerOptionsKey?: string;
  /** The provider's own option for `ChatRequest.parallelToolCalls`, merged into its options. */
  readonly parallelToolCalls?: (parallel: boolean) => Record<string, unknown>;
  /**
   * Give each answer's reasoning blocks with their provider metadata on its `finish` event, and
   * send an assistant message's (`ChatMessage.reasoning`) back as reasoning parts: for a provider
   * that needs them within a turn (Anthropic's signed thinking blocks). Off
   * by default: elsewhere they may be refused (the Responses API with `store: false` answers 404
   * for a reasoning item it did not store).
   */
  readonly sendReasoning?: boolean;
  /**
   * Give each tool call the provider's metadata of its part (`ToolCall.metadata`) and send a
   * call's back with it: for a provider that needs it (Gemini's thought signatures). Off by
   * default: elsewhere it may change the request (the Responses API's item ids become references
   * to items it may not have stored).
   */
  readonly callMetadata?: boolean;
  /** A last change of the call options for what the provider does its own way (e.g. `json_object` as a schema). */
  readonly adjust?: (call: LanguageModelV3CallOptions, request: ChatRequest) => LanguageModelV3CallOptions;
  /** The provider's own reading of an error answer (its words for a kind, its retry hint). */
  readonly classify?: (failure: UpstreamFailure) => FailureReading | undefined;
}

/** The longest `retry-after` a retry waits for, in seconds. */
const MAX_RETRY_AFTER_S = 60;
/** What one tool call counts against the answer's limit beyond its id, name and arguments: its JSON framing. */
const CALL_FRAMING_BYTES = 64;

const count = (value: number | undefined): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);

function usageOf(usage: LanguageModelV3Usage | undefined): Usage | undefined {
  if (!usage || (usage.inputTokens.total === undefined && usage.outputTokens.total === undefined)) return undefined;
  const promptTokens = count(usage.inputTokens.total);
  const completionTokens = count(usage.outputTokens.total);
  const cached = count(usage.inputTokens.cacheRead);
  const written = count(usage.inputTokens.cacheWrite);
  const reasoning = count(usage.outputTokens.reasoning);
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    ...(cached > 0 ? { cachedPromptTokens: cached } : {}),
    ...(written > 0 ? { cacheWritePromptTokens: written } : {}),
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

/** The AI SDK's finish reasons onto ours; tool calls make it `tool_calls` unless the answer was cut. */
function finishReasonOf(reason: LanguageModelV3FinishReason['unified'], hasToolCalls: boolean): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'content-filter') return 'content_filter';
  return hasToolCalls || reason === 'tool-calls' ? 'tool_calls' : 'stop';
}

/** Waits `ms`, or rejects when `signal` is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** How long to wait before retry `attempt` (from 0) of a failure, or undefined when it is not retried. */
function retryDelayMs(failure: PlatformError, attempt: number): number | undefined {
  if (!failure.retryable || (failure.code !== 'upstream_error' && failure.code !== 'unavailable')) return undefined;
  const after = failure.details?.retryAfterSeconds;
  if (typeof after === 'number') return after <= MAX_RETRY_AFTER_S ? after * 1000 : undefined;
  return Math.min(500 * 2 ** attempt, 8000) * (1 - Math.random() * 0.25);
}

/**
 * A `ChatModel` over an AI SDK language model (`LanguageModelV3` of `@ai-sdk/provider`): our
 * request becomes `doStream`'s call options, its stream parts our events (text, reasoning,
 * whole tool calls, one `finish` with the reason and usage), and every failure a
 * `PlatformError` named after the server, the same way for every provider: `upstream_error`
 * with `details { provider, upstream, status, kind?, retryAfterSeconds? }` for an error answer,
 * `unavailable` when nothing answers, `timeout`, `aborted`, the outbound policy's refusal as it is.
 *
 * @example
 * const anthropic = createAnthropic({ apiKey, fetch: modelFetch({ answerLimit: DEFAULT_ANSWER_LIMIT, where }) });
 * const model = aiSdkChatModel({ provider: 'anthropic', where, upstream, model: (id) => anthropic.messages(id), secrets: [apiKey] });
 */
export function aiSdkChatModel(options: AiSdkChatModelOptions): ChatModel {
  const timeoutMs = options.timeoutMs ?? 120_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw PlatformError.invalid(`${options.provider}: timeoutMs must be a positive integer`);
  const maxRetries = options.maxRetries ?? 2;
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw PlatformError.invalid(`${options.provider}: maxRetries must be an integer ≥ 0`);
  const answerLimit = options.answerLimit ?? DEFAULT_ANSWER_LIMIT;
  const capabilities = { ...(options.capabilities ?? {}) };
  const { where } = options;
  const context: FailureContext = { provider: options.provider, where, upstream: options.upstream, secrets: options.secrets ?? [], timeoutMs, classify: options.classify };
  const shaping = {
    providerOptionsKey: options.providerOptionsKey ?? options.provider,
    capabilities,
    parallelToolCalls: options.parallelToolCalls,
    sendReasoning: options.sendReasoning,
    callMetadata: options.callMetadata,
  };

  async function* stream(request: ChatRequest): AsyncGenerator<ChatEvent, void, undefined> {
    const signal = request.signal;
    const aborted = () => new PlatformError('aborted', 'The chat request was aborted', { cause: signal?.reason });
    if (signal?.aborted) throw aborted();
    if (!request.model) throw PlatformError.invalid(`${where}: a model name is required`);
    const call = options.adjust ? options.adjust(toCallOptions(request, shaping), request) : toCallOptions(request, shaping);

    // One controller for the call: the caller's signal and the timers both abort it.
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut: 'answer' | 'stall' | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (kind: 'answer' | 'stall') => {
      timer = setTimeout(() => {
        timedOut = kind;
        controller.abort();
      }, timeoutMs);
    };
    const disarm = () => clearTimeout(timer);
    const interrupted = () => (signal?.aborted ? aborted() : timedOut ? timeoutError(context, timedOut === 'stall') : undefined);
    let reader: ReadableStreamDefaultReader<LanguageModelV3StreamPart> | undefined;
    let started = false;
    let finished = false;

    async function* attempt(): AsyncGenerator<ChatEvent, void, undefined> {
      arm('answer');
      try {
        reader = (await options.model(request.model).doStream({ ...call, abortSignal: controller.signal })).stream.getReader();
      } finally {
        disarm();
      }
      const answer = byteBudget(answerLimit.bytes, () => answerTooLarge(where, 'an answer', answerLimit.bytes, answerLimit.setting));
      const partial = new Map<string, { name: string; arguments: string }>();
      const calls: ToolCall[] = [];
      const reasoning = new ReasoningBlocks();
      let finish: Extract<LanguageModelV3StreamPart, { type: 'finish' }> | undefined;
      const emit = (event: ChatEvent): ChatEvent => {
        started = true;
        return event;
      };
      while (true) {
        arm('stall');
        let next: Awaited<ReturnType<ReadableStreamDefaultReader<LanguageModelV3StreamPart>['read']>>;
        try {
          next = await reader.read();
        } finally {
          disarm();
        }
        const cut = interrupted();
        if (cut) throw cut;
        if (next.done) break;
        const part = next.value;
        if (part.type === 'reasoning-start' || part.type === 'reasoning-delta' || part.type === 'reasoning-end') {
          // The provider's data of a block (a signature, a redacted block) counts against the answer's limit too.
          if (part.providerMetadata) answer.add(JSON.stringify(part.providerMetadata));
          reasoning.add(part);
        }
        if (part.type === 'text-delta' || part.type === 'reasoning-delta') {
          if (part.delta === '') continue;
          answer.add(part.delta);
          yield emit({ type: part.type === 'text-delta' ? 'text' : 'reasoning', delta: part.delta });
        } else if (part.type === 'tool-input-start' && !part.providerExecuted) {
          answer.addBytes(CALL_FRAMING_BYTES);
          answer.add(part.id + part.toolName);
          partial.set(part.id, { name: part.toolName, arguments: '' });
        } else if (part.type === 'tool-input-delta') {
          const known = partial.get(part.id);
          if (!known) continue;
          answer.add(part.delta);
          known.arguments += part.delta;
        } else if (part.type === 'tool-call' && !part.providerExecuted) {
          // The provider's whole call: what its fragments added up to, counted once.
          if (!partial.delete(part.toolCallId)) answer.add(`${part.toolCallId}${part.toolName}${part.input}`);
          // The provider's data of the call (a thought signature), where it goes back.
          const metadata = options.callMetadata && part.providerMetadata && Object.keys(part.providerMetadata).length > 0 ? part.providerMetadata : undefined;
          if (metadata) answer.add(JSON.stringify(metadata));
          const whole: ToolCall = { id: part.toolCallId || `call_${crypto.randomUUID().replaceAll('-', '')}`, name: part.toolName, arguments: part.input, ...(metadata ? { metadata } : {}) };
          calls.push(whole);
          yield emit({ type: 'tool_call', call: whole });
        } else if (part.type === 'finish') {
          finish = part;
        } else if (part.type === 'error') {
          throw part.error;
        }
      }
      if (!finish) {
        throw new PlatformError('upstream_error', `${where} ended the stream before the answer was finished`, { retryable: true, details: { provider: options.provider, upstream: options.upstream } });
      }
      if (finish.finishReason.unified === 'error') {
        throw new PlatformError('upstream_error', `${where} ended the answer with an error${finish.finishReason.raw ? ` (${finish.finishReason.raw})` : ''}`, {
          retryable: true,
          details: { provider: options.provider, upstream: options.upstream },
        });
      }
      // Calls whose fragments came without the whole call (a provider that sends none): assembled here.
      for (const [id, call] of partial) {
        const whole: ToolCall = { id, name: call.name, arguments: call.arguments || '{}' };
        calls.push(whole);
        yield emit({ type: 'tool_call', call: whole });
      }
      const usage = usageOf(finish.usage);
      const reason = finishReasonOf(finish.finishReason.unified, calls.length > 0);
      // The blocks only where they go back (`sendReasoning`): elsewhere the text came as events, enough.
      const blocks = options.sendReasoning ? reasoning.list() : [];
      finished = true;
      yield { type: 'finish', reason, ...(usage ? { usage } : {}), ...(blocks.length > 0 ? { reasoning: blocks } : {}) };
    }

    try {
      for (let tries = 0; ; tries++) {
        try {
          yield* attempt();
          return;
        } catch (error) {
          const failure = interrupted() ?? toPlatformError(context, error, request.model);
          const delay = started || tries >= maxRetries ? undefined : retryDelayMs(failure, tries);
          if (delay === undefined) throw failure;
          await reader?.cancel().catch(() => undefined);
          reader = undefined;
          await pause(delay, controller.signal).catch(() => {
            throw aborted();
          });
        }
      }
    } finally {
      disarm();
      signal?.removeEventListener('abort', onAbort);
      if (!finished) {
        // Stopped early (the consumer left, or an error): close the upstream connection.
        controller.abort();
        await reader?.cancel().catch(() => undefined);
      }
    }
  }

  const list = options.listModels;
  return {
    provider: options.provider,
    capabilities,
    stream: (request) => stream(request),
    ...(list
      ? {
          async listModels({ signal }: { readonly signal?: AbortSignal } = {}): Promise<string[]> {
            const deadline = AbortSignal.timeout(timeoutMs);
            try {
              return await list(signal ? AbortSignal.any([signal, deadline]) : deadline);
            } catch (error) {
              if (signal?.aborted) throw new PlatformError('aborted', 'Listing the models was aborted', { cause: signal.reason });
              if (deadline.aborted) throw timeoutError(context, false);
              throw toPlatformError(context, error, '');
            }
          },
        }
      : {}),
  };
}
