import { type ChatEvent, type ChatMessage, type ChatModel, type FinishReason, PlatformError, type ToolCall } from '@agent-platform/core';
import OpenAI from 'openai';

export interface OpenAIChatOptions {
  readonly apiKey?: string;
  /** e.g. `https://api.openai.com/v1` (default), `http://127.0.0.1:11434/v1` (Ollama). */
  readonly baseURL?: string;
  readonly provider?: string;
  /** Per request, ms. Default 120000. */
  readonly timeoutMs?: number;
  /** Client retries before the first byte (429, 5xx, connection errors). Default 1. */
  readonly maxRetries?: number;
  /** A fetch that enforces the outbound URL policy or goes through a proxy. */
  readonly fetch?: typeof fetch;
}

type OpenAIMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

const toOpenAI = (m: ChatMessage): OpenAIMessage => {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content };
    case 'user':
      return { role: 'user', content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls && m.toolCalls.length > 0
          ? { tool_calls: m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
    default:
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
  }
};

const finishReason = (reason: string | null | undefined, hadToolCalls: boolean): FinishReason =>
  reason === 'length' ? 'length' : reason === 'tool_calls' || reason === 'function_call' || hadToolCalls ? 'tool_calls' : 'stop';

/** Maps what the openai client throws to the service's errors (never echoing the key). */
function upstreamError(error: unknown, upstream: string, signal: AbortSignal | undefined): PlatformError {
  if (signal?.aborted || error instanceof OpenAI.APIUserAbortError) return new PlatformError('aborted', 'The request was aborted');
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new PlatformError('timeout', `The model provider at ${upstream} did not answer in time`, { retryable: true, cause: error });
  if (error instanceof OpenAI.APIConnectionError) return new PlatformError('unavailable', `The model provider at ${upstream} is unreachable`, { retryable: true, cause: error });
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? 0;
    const detail = (error.error as { message?: string } | undefined)?.message ?? error.message;
    return new PlatformError('upstream_error', `The model provider at ${upstream} answered ${status || 'an error'}: ${detail}`, {
      retryable: status === 408 || status === 409 || status === 429 || status >= 500,
      cause: error,
    });
  }
  if (error instanceof PlatformError) return error;
  return new PlatformError('upstream_error', `The model provider at ${upstream} sent something unreadable: ${(error as Error).message}`, { cause: error });
}

/**
 * A chat model of any OpenAI-compatible server (OpenAI, Ollama's /v1, vLLM, LM Studio,
 * llama.cpp server, OpenRouter) through the official `openai` client, always streaming:
 * text deltas are yielded as they arrive; tool-call fragments are assembled by index.
 */
export function openaiChatModel(options: OpenAIChatOptions = {}): ChatModel {
  const upstream = options.baseURL ?? 'https://api.openai.com/v1';
  const client = new OpenAI({
    apiKey: options.apiKey ?? 'none',
    baseURL: upstream,
    timeout: options.timeoutMs ?? 120_000,
    maxRetries: options.maxRetries ?? 1,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return {
    provider: options.provider ?? 'openai',
    async *stream(request): AsyncGenerator<ChatEvent> {
      let stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
      try {
        stream = await client.chat.completions.create(
          {
            model: request.model,
            messages: request.messages.map(toOpenAI),
            stream: true,
            stream_options: { include_usage: true },
            ...(request.tools && request.tools.length > 0
              ? { tools: request.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
              : {}),
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
            ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
          },
          request.signal ? { signal: request.signal } : {},
        );
      } catch (error) {
        throw upstreamError(error, upstream, request.signal);
      }
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      let reason: string | null = null;
      let usage: { promptTokens: number; completionTokens: number; totalTokens: number } | undefined;
      try {
        for await (const chunk of stream) {
          const errorBody = (chunk as unknown as { error?: { message?: string } }).error;
          if (errorBody) throw new PlatformError('upstream_error', `The model provider at ${upstream} failed mid-answer: ${errorBody.message ?? 'unknown error'}`);
          if (chunk.usage) {
            usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens, totalTokens: chunk.usage.total_tokens };
          }
          const choice = chunk.choices?.[0];
          if (!choice) continue;
          if (choice.delta?.content) yield { type: 'text', delta: choice.delta.content };
          for (const fragment of choice.delta?.tool_calls ?? []) {
            const call = calls.get(fragment.index) ?? { id: '', name: '', arguments: '' };
            if (fragment.id) call.id = fragment.id;
            if (fragment.function?.name) call.name += fragment.function.name;
            if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
            calls.set(fragment.index, call);
          }
          if (choice.finish_reason) reason = choice.finish_reason;
        }
      } catch (error) {
        throw upstreamError(error, upstream, request.signal);
      }
      const assembled: ToolCall[] = [...calls.entries()].sort(([a], [b]) => a - b).map(([i, c]) => ({ id: c.id || `call_${i}`, name: c.name, arguments: c.arguments }));
      for (const call of assembled) yield { type: 'tool_call', call };
      yield usage ? { type: 'finish', reason: finishReason(reason, assembled.length > 0), usage } : { type: 'finish', reason: finishReason(reason, assembled.length > 0) };
    },
  };
}
