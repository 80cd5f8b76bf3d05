import type { ReasoningBlock } from '@agent-platform/core';
import type { LanguageModelV3StreamPart, SharedV3ProviderMetadata } from '@ai-sdk/provider';

type ReasoningPart = Extract<LanguageModelV3StreamPart, { type: 'reasoning-start' | 'reasoning-delta' | 'reasoning-end' }>;

/** `into` with `from`'s data merged in, provider by provider (a later value of a key wins: Anthropic's signature comes last). */
function merge(into: SharedV3ProviderMetadata | undefined, from: SharedV3ProviderMetadata | undefined): SharedV3ProviderMetadata | undefined {
  if (!from) return into;
  const out: SharedV3ProviderMetadata = { ...into };
  for (const [key, value] of Object.entries(from)) out[key] = { ...out[key], ...value };
  return out;
}

/**
 * The reasoning blocks of one answer, assembled from its reasoning parts by id in the order they
 * started: the text of the deltas and the provider's metadata of every part (Anthropic's
 * `signature` on the last delta of a thinking block, `redactedData` on the start of a redacted
 * one), for the assistant message sent back within the turn (`ChatMessage.reasoning`).
 */
export class ReasoningBlocks {
  readonly #blocks = new Map<string, { text: string; metadata: SharedV3ProviderMetadata | undefined }>();

  add(part: ReasoningPart): void {
    const block = this.#blocks.get(part.id) ?? { text: '', metadata: undefined };
    this.#blocks.set(part.id, block);
    if (part.type === 'reasoning-delta') block.text += part.delta;
    block.metadata = merge(block.metadata, part.providerMetadata);
  }

  /** The blocks, in order; empty when the answer had no reasoning. */
  list(): ReasoningBlock[] {
    return [...this.#blocks.values()].map(({ text, metadata }) => (metadata ? { text, metadata } : { text }));
  }
}
