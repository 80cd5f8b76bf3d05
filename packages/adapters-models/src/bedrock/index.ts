import { type ChatModel, type ChatModelCapabilities, PlatformError } from '@agent-platform/core';
import { BedrockOptions } from '@agent-platform/core/internal';
import type { z } from 'zod';
import { aiSdkChatModel } from '../ai-sdk/index.js';
import { classifyBedrockFailure } from './errors.js';
import { listBedrockModels } from './models.js';
import { type BedrockChatModelOptions, bedrockSetup } from './provider.js';

export type { BedrockChatModelOptions } from './provider.js';

/** The provider options a Bedrock chat takes, and only them: the registry's schema (core's `registries/provider-schemas.ts`), so a project's options and each call are checked alike. */
export const bedrockProviderOptions = BedrockOptions;
export type BedrockProviderOptions = z.input<typeof bedrockProviderOptions>;

/** Converse takes a forced tool choice, images, reasoning; structured outputs as the AI SDK's forced `json` tool (or Claude's native format). */
const CAPABILITIES: ChatModelCapabilities = { toolChoice: true, images: true, structuredOutputs: true, reasoning: true };

/** Refuses `providerOptions` that `bedrockProviderOptions` does not take: `invalid_request` naming the first key not allowed or not valid, with zod's issues. */
function checkProviderOptions(value: Record<string, unknown> | undefined): void {
  if (value === undefined) return;
  const parsed = bedrockProviderOptions.safeParse(value);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((issue) => ({ path: ['providerOptions', ...issue.path.map((p) => (typeof p === 'number' ? p : String(p)))], code: issue.code, message: issue.message }));
  const first = parsed.error.issues[0] as z.core.$ZodIssue;
  const at = issues[0]?.path.join('.') ?? 'providerOptions';
  const message =
    first.code === 'unrecognized_keys'
      ? `${first.keys.map((key) => `${at}.${key}`).join(', ')} is not an allowed provider option (${first.path.length === 0 ? `Bedrock takes ${Object.keys(bedrockProviderOptions.shape).join(', ')}` : `not a field of ${at}`})`
      : `${at}: ${first.message}`;
  throw PlatformError.invalid(`bedrock: ${message}`, issues);
}

/**
 * A chat model of Amazon Bedrock's Converse API (`POST /model/{modelId}/converse-stream`, SigV4
 * signed), on the AI SDK's `@ai-sdk/amazon-bedrock`, every request through `fetch`, nothing read
 * from the process's AWS environment (see `bedrockSetup`). `ChatRequest.providerOptions` are
 * checked by `bedrockProviderOptions` (`guardrailConfig`, `reasoningConfig`,
 * `additionalModelRequestFields`, `performanceConfig`, `serviceTier`); any other key is refused.
 * `responseFormat` is the package's forced `json` tool (Claude's native format where it has
 * one); `json_object` is that tool with the schema `{ type: 'object' }`.
 *
 * @example
 * const model = bedrockChatModel({ region: 'us-east-1', accessKeyId, secretAccessKey, fetch: guardedFetch });
 * const { content } = await collectChat(model.stream({ model: 'anthropic.claude-3-5-sonnet-20240620-v1:0', messages: [{ role: 'user', content: 'Hi' }] }));
 */
export function bedrockChatModel(options: BedrockChatModelOptions): ChatModel {
  const setup = bedrockSetup(options);
  return aiSdkChatModel({
    provider: 'bedrock',
    where: setup.where,
    upstream: setup.upstream,
    model: (modelId) => setup.provider.languageModel(modelId),
    capabilities: CAPABILITIES,
    secrets: setup.secrets,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    answerLimit: setup.answerLimit,
    classify: classifyBedrockFailure,
    // Claude's reasoning on Bedrock is signed as on Anthropic's API and must come back with a tool step's results.
    sendReasoning: true,
    adjust: (call, request) => {
      checkProviderOptions(request.providerOptions);
      if (request.responseFormat?.type !== 'json_object') return call;
      // Bedrock has no JSON mode: the forced json tool with an object schema stands for it (never Claude's native format, which wants closed objects).
      const own = (call.providerOptions?.bedrock ?? {}) as Record<string, never>;
      return { ...call, responseFormat: { type: 'json', schema: { type: 'object' } }, providerOptions: { ...call.providerOptions, bedrock: { ...own, structuredOutputMode: 'jsonTool' } } };
    },
    listModels: (signal) => listBedrockModels(setup, options, signal),
  });
}
