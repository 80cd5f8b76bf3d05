import type { ByteLimit, ChatModel } from '@agent-platform/core';
import { namesOf, openaiCompatibleModel } from './openai.js';

export const DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434';

export interface OllamaChatModelOptions {
  /**
   * Where Ollama listens, e.g. `http://127.0.0.1:11434` (default). Written as `OLLAMA_HOST` is
   * (`host:port` without a scheme means http) and with or without a trailing `/v1`. The
   * environment is not read: the server's provider resolver applies `OLLAMA_HOST`.
   */
  readonly host?: string;
  /** Ollama ignores it; a proxy in front of Ollama may want one. Default `ollama`. */
  readonly apiKey?: string;
  /** See `openaiChatModel`. Default 120000 (a local model may load for a while before it answers). */
  readonly timeoutMs?: number;
  /** See `openaiChatModel`. Default 2. */
  readonly maxRetries?: number;
  readonly fetch?: typeof fetch;
  /** See `openaiChatModel`. Default 4 MiB. */
  readonly answerLimit?: ByteLimit;
  /** The `provider` the model reports and errors name. Default `ollama`. */
  readonly provider?: string;
}

/** `OLLAMA_HOST`-style host → where Ollama's own API is (`http://<host>`, without a trailing `/` or `/v1`). */
function ollamaRoot(host: string): string {
  const trimmed = host.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  return withScheme.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** `OLLAMA_HOST`-style host → Ollama's OpenAI-compatible base URL (`<host>/v1`). */
export function ollamaBaseURL(host: string = DEFAULT_OLLAMA_HOST): string {
  return `${ollamaRoot(host)}/v1`;
}

/**
 * A chat model of an Ollama server through its OpenAI-compatible endpoint
 * (`POST <host>/v1/chat/completions`): `openaiChatModel` with that base URL and provider
 * `ollama`, so streaming, tool calls, usage and the error mapping are the same. Ollama's endpoint
 * ignores `tool_choice`, `parallel_tool_calls` and `strict`: it has none of those capabilities,
 * so requests that need them are refused rather than answered as if they were honoured.
 * `listModels` reads Ollama's own `GET <host>/api/tags` (the installed models).
 */
export function ollamaChatModel(options: OllamaChatModelOptions = {}): ChatModel {
  const tags = { path: `${ollamaRoot(options.host ?? DEFAULT_OLLAMA_HOST)}/api/tags`, names: (body: unknown) => namesOf(body, 'models', 'name') };
  return openaiCompatibleModel(
    {
      baseURL: ollamaBaseURL(options.host),
      apiKey: options.apiKey ?? 'ollama',
      provider: options.provider ?? 'ollama',
      capabilities: {},
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.answerLimit ? { answerLimit: options.answerLimit } : {}),
    },
    tags,
  );
}
