import { z } from 'zod';
import { baseUrlProblem } from '../net/base-url.js';

/**
 * What each model provider of the registry (model-providers.ts) declares with zod: the fields of
 * its credentials and its `providerOptions`. The schemas are strict: a member a provider does
 * not know is a 400 naming it, never dropped.
 */

/** An address callers choose (a credential's `baseUrl`, Azure's `endpoint`): http(s), no query or fragment; checked against the outbound policy when saved. */
export const callerUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2000)
  .refine((url) => baseUrlProblem(url) === undefined, { error: (issue) => baseUrlProblem(String(issue.input)) });

const apiKey = z.string().min(1).max(4096).describe('Stored encrypted; never returned (its last four characters are)');

/** The fields of a credential that holds an API key and nothing else (OpenAI-compatible servers, Ollama, Anthropic, Gemini). */
export const ApiKeyFields = z.strictObject({ apiKey });

/** Azure OpenAI: the resource's endpoint, the API version and, optionally, the deployment of each model name. */
export const AzureFields = z.strictObject({
  apiKey,
  endpoint: callerUrl.describe('The resource endpoint, e.g. https://my-resource.openai.azure.com (checked against the outbound policy)'),
  apiVersion: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$|^v1$/, { error: 'must be an Azure OpenAI api-version such as 2024-10-21, 2025-01-01-preview or v1' })
    .optional()
    .describe('The api-version query parameter of every call (default 2024-10-21, the latest GA version)'),
  deployments: z
    .record(z.string().min(1).max(200), z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, { error: 'must be a deployment name (letters, digits, . _ -)' }))
    .optional()
    .describe('Model name → deployment name; a model not listed is taken as the deployment name itself'),
});

/** OpenAI (and compatible servers): which API of the upstream answers, and o-series reasoning effort. */
export const OpenAIOptions = z.strictObject({
  api: z.enum(['chat', 'responses']).optional().describe('chat (default): POST /chat/completions; responses: POST /responses, for models served only by the Responses API'),
  reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high']).optional().describe("A reasoning model's effort (reasoning_effort / reasoning.effort)"),
});

/** Azure OpenAI's chat completions: a reasoning deployment's effort (the AI SDK's OpenAI chat option). */
export const AzureOptions = OpenAIOptions.omit({ api: true });

/** Ollama takes no options of its own here. */
export const NoOptions = z.strictObject({});

/** Anthropic's Messages API: extended thinking and prompt caching (the AI SDK's Anthropic options). */
export const AnthropicOptions = z.strictObject({
  thinking: z
    .discriminatedUnion('type', [z.strictObject({ type: z.literal('enabled'), budgetTokens: z.number().int().min(1024).max(1_000_000) }), z.strictObject({ type: z.literal('disabled') })])
    .optional()
    .describe('Extended thinking: { type: "enabled", budgetTokens } (at least 1024, below the answer limit); its text streams as reasoning'),
  cacheControl: z
    .strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
    .optional()
    .describe('Prompt caching of the system prompt and tools: { type: "ephemeral" }'),
  sendReasoning: z.boolean().optional().describe('Send earlier reasoning back with the history (default true)'),
});

const HARM_CATEGORIES = ['HARM_CATEGORY_HATE_SPEECH', 'HARM_CATEGORY_DANGEROUS_CONTENT', 'HARM_CATEGORY_HARASSMENT', 'HARM_CATEGORY_SEXUALLY_EXPLICIT', 'HARM_CATEGORY_CIVIC_INTEGRITY'] as const;
const THRESHOLDS = ['HARM_BLOCK_THRESHOLD_UNSPECIFIED', 'BLOCK_LOW_AND_ABOVE', 'BLOCK_MEDIUM_AND_ABOVE', 'BLOCK_ONLY_HIGH', 'BLOCK_NONE', 'OFF'] as const;

/** Gemini: safety settings and thinking config (the AI SDK's Google options). */
export const GoogleOptions = z.strictObject({
  safetySettings: z
    .array(z.strictObject({ category: z.enum(HARM_CATEGORIES), threshold: z.enum(THRESHOLDS) }))
    .max(10)
    .optional()
    .describe('Per harm category, the threshold that blocks an answer'),
  thinkingConfig: z
    .strictObject({
      thinkingBudget: z.number().int().min(-1).max(100_000).optional(),
      includeThoughts: z.boolean().optional(),
      thinkingLevel: z.enum(['minimal', 'low', 'medium', 'high']).optional(),
    })
    .optional()
    .describe('Thinking models: the token budget (0 off, -1 dynamic) or level, and whether thought summaries stream as reasoning'),
});
