import { expect } from 'vitest';
import type { ChatEvent, ChatModel, FinishReason, Usage } from '../agent/chat-model.js';

/**
 * What a test can make a steerable model (a fake upstream) answer to its next call. A
 * provider's test wires it to its fake, e.g. a loopback OpenAI-compatible server.
 */
export interface ScriptedChatReply {
  /** The answer's text, streamed in several pieces (e.g. word by word). */
  readonly text?: string;
  /** Tool calls the model asks for (arguments: a JSON text). */
  readonly toolCalls?: readonly { readonly name: string; readonly arguments: string }[];
  /** Default `tool_calls` with tool calls, else `stop`. */
  readonly finishReason?: FinishReason;
  /** Token counts the upstream reports. */
  readonly usage?: Usage;
  /** A pause between streamed pieces, ms (the abort check needs a stream that lasts). */
  readonly chunkDelayMs?: number;
  /** Fail the call with this HTTP status (or the provider's equivalent) instead of answering. */
  readonly status?: number;
  /** Reasoning text streamed before the answer (where the provider streams reasoning). */
  readonly reasoning?: string;
}

export interface ChatModelSuiteOptions {
  /** A model under test (one per test). */
  create(): ChatModel | Promise<ChatModel>;
  /** The model name sent in requests. */
  readonly model: string;
  /**
   * Steers the next call's answer. With it, the suite checks exact texts, tool calls, finish
   * reasons, usage and upstream failures; without it (a real model), only what any model does
   * (the tool-call and failure checks are skipped).
   */
  readonly scripted?: {
    next(reply: ScriptedChatReply): void | Promise<void>;
  };
  /**
   * The `providerOptions` that make the model stream its reasoning (e.g. Anthropic's
   * `{ thinking: { type: 'enabled', budgetTokens: 1024 } }`). With it, and where the model's
   * `capabilities.reasoning`, the suite checks that reasoning arrives as `reasoning` events,
   * apart from the text.
   */
  readonly reasoning?: { readonly providerOptions: Record<string, unknown> };
}

export async function drain(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

export const texts = (events: readonly ChatEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.delta] : []));

/** The stream's shape: text and tool calls, then exactly one `finish`, last. */
export function expectWellFormed(events: readonly ChatEvent[]): Extract<ChatEvent, { type: 'finish' }> {
  expect(events.length).toBeGreaterThan(0);
  const finishes = events.filter((e) => e.type === 'finish');
  expect(finishes).toHaveLength(1);
  const last = events[events.length - 1];
  expect(last?.type).toBe('finish');
  for (const event of events) {
    if (event.type === 'text' || event.type === 'reasoning') {
      expect(typeof event.delta).toBe('string');
      expect(event.delta.length).toBeGreaterThan(0);
    }
  }
  const finish = last as Extract<ChatEvent, { type: 'finish' }>;
  expect(['stop', 'length', 'tool_calls', 'content_filter']).toContain(finish.reason);
  if (finish.usage) {
    const { promptTokens, completionTokens, totalTokens, cachedPromptTokens, cacheWritePromptTokens, reasoningTokens } = finish.usage;
    for (const n of [promptTokens, completionTokens, totalTokens]) expect(Number.isInteger(n) && n >= 0).toBe(true);
    // The optional counts are parts of the prompt's and the answer's.
    for (const n of [cachedPromptTokens, cacheWritePromptTokens]) if (n !== undefined) expect(Number.isInteger(n) && n >= 0 && n <= promptTokens).toBe(true);
    if (reasoningTokens !== undefined) expect(Number.isInteger(reasoningTokens) && reasoningTokens >= 0 && reasoningTokens <= completionTokens).toBe(true);
  }
  return finish;
}

/** Resolves to the error the promise rejects with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
