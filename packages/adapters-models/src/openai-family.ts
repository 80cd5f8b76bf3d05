import type { ByteLimit } from '@agent-platform/core';
import type { AiSdkChatModelOptions } from './ai-sdk/index.js';

/**
 * What the OpenAI-family providers on the AI SDK (Azure's chat completions, OpenAI's Responses)
 * give the adapter alike: the key as the secret to scrub, the call limits, their options under
 * `openai` (where `@ai-sdk/azure`'s chat model and `@ai-sdk/openai` read them) and
 * `parallelToolCalls` as the AI SDK's OpenAI option of that name.
 */
export function openaiFamilyOptions(options: {
  readonly apiKey: string;
  readonly timeoutMs?: number | undefined;
  readonly maxRetries?: number | undefined;
  readonly answerLimit: ByteLimit;
}): Pick<AiSdkChatModelOptions, 'secrets' | 'timeoutMs' | 'maxRetries' | 'answerLimit' | 'providerOptionsKey' | 'parallelToolCalls'> {
  return {
    secrets: [options.apiKey],
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    answerLimit: options.answerLimit,
    providerOptionsKey: 'openai',
    parallelToolCalls: (parallel) => ({ parallelToolCalls: parallel }),
  };
}

/** `value[key]` of an object, else undefined. */
export const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** The entries of an OpenAI-style list (`{ object: 'list', data: [...] }`), or undefined for an answer of another shape. */
export const listData = (body: unknown): unknown[] | undefined => {
  const data = member(body, 'data');
  return Array.isArray(data) ? data : undefined;
};
