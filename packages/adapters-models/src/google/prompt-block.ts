import type { LanguageModelV3, LanguageModelV3StreamPart } from '@ai-sdk/provider';

const member = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** The `promptFeedback.blockReason` of a finish, when Gemini refused the prompt itself (no candidate at all). */
export function promptBlockReason(part: LanguageModelV3StreamPart): string | undefined {
  if (part.type !== 'finish' || part.finishReason.unified !== 'content-filter') return undefined;
  const reason = member(member(member(part.providerMetadata, 'google'), 'promptFeedback'), 'blockReason');
  if (typeof reason !== 'string' || reason === '' || reason.endsWith('_UNSPECIFIED')) return undefined;
  // Gemini's BlockReason enum (SAFETY, OTHER, BLOCKLIST, PROHIBITED_CONTENT, IMAGE_SAFETY); anything else is not repeated.
  return /^[A-Z][A-Z_]{0,63}$/.test(reason) ? reason : 'OTHER';
}

/**
 * The language model with one difference in its stream: when Gemini blocks the prompt
 * (`promptFeedback.blockReason`, and no answer), the stream ends with an `error` part carrying
 * `blocked(reason)` instead of a `content-filter` finish, so the caller gets a clear error
 * rather than an empty answer. An answer that Gemini cut for safety (`finishReason: SAFETY`,
 * `RECITATION`, ...) still finishes as `content-filter`, with the text it had.
 */
export function withPromptBlockAsError(model: LanguageModelV3, blocked: (reason: string) => Error): LanguageModelV3 {
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    get supportedUrls() {
      return model.supportedUrls;
    },
    doGenerate: (options) => model.doGenerate(options),
    doStream: async (options) => {
      const result = await model.doStream(options);
      const stream = result.stream.pipeThrough(
        new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
          transform(part, controller) {
            const reason = promptBlockReason(part);
            controller.enqueue(reason === undefined ? part : { type: 'error', error: blocked(reason) });
          },
        }),
      );
      return { ...result, stream };
    },
  };
}
