import { z } from 'zod';
import { baseUrlProblem } from '../net/base-url.js';

/**
 * What each model provider of the registry (model-providers.ts) declares with zod: the fields of
 * its credentials and its `providerOptions`. The schemas are strict: a member a provider does
 * not know is a 400 naming it, never dropped. Each options schema carries an example (JSON
 * Schema's `examples`, shown by the document and the console's project form; the same as
 * docs/PROVIDERS.md's table, which a test checks).
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

/** Amazon Bedrock: SigV4 keys of an IAM identity and the region they sign for (no AWS environment variable is ever read for a user). */
export const BedrockFields = z.strictObject({
  region: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d{1,2}$/, { error: 'must be an AWS region such as us-east-1' })
    .describe('The AWS region, e.g. us-east-1'),
  accessKeyId: z
    .string()
    .regex(/^[A-Z0-9]{16,128}$/, { error: 'must be an AWS access key id (AKIA... or ASIA...)' })
    .describe('The access key id (shown)'),
  secretAccessKey: z.string().min(1).max(4096).describe('Signs each request; stored encrypted, never returned (its last four characters are)'),
  sessionToken: z.string().min(1).max(8192).optional().describe('For temporary (STS) keys; stored encrypted, never returned'),
});

/** OpenAI (and compatible servers): which API of the upstream answers, and o-series reasoning effort. */
export const OpenAIOptions = z
  .strictObject({
    api: z.enum(['chat', 'responses']).optional().describe('chat (default): POST /chat/completions; responses: POST /responses, for models served only by the Responses API'),
    reasoningEffort: z.enum(['minimal', 'low', 'medium', 'high']).optional().describe("A reasoning model's effort (reasoning_effort / reasoning.effort)"),
  })
  .meta({ examples: [{ api: 'responses', reasoningEffort: 'low' }] });

/** Azure OpenAI's chat completions: a reasoning deployment's effort (the AI SDK's OpenAI chat option). */
export const AzureOptions = OpenAIOptions.omit({ api: true }).meta({ examples: [{ reasoningEffort: 'medium' }] });

/** Ollama takes no options of its own here. */
export const NoOptions = z.strictObject({});

/** Anthropic's Messages API: extended thinking and prompt caching (the AI SDK's Anthropic options). */
export const AnthropicOptions = z
  .strictObject({
    thinking: z
      .discriminatedUnion('type', [z.strictObject({ type: z.literal('enabled'), budgetTokens: z.number().int().min(1024).max(1_000_000) }), z.strictObject({ type: z.literal('disabled') })])
      .optional()
      .describe('Extended thinking: { type: "enabled", budgetTokens } (at least 1024, below the answer limit); its text streams as reasoning'),
    cacheControl: z
      .strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() })
      .optional()
      .describe('Prompt caching of the system prompt and tools: { type: "ephemeral" }'),
    sendReasoning: z.boolean().optional().describe('Send earlier reasoning back with the history (default true)'),
  })
  .meta({ examples: [{ thinking: { type: 'enabled', budgetTokens: 2048 } }] });

const HARM_CATEGORIES = ['HARM_CATEGORY_HATE_SPEECH', 'HARM_CATEGORY_DANGEROUS_CONTENT', 'HARM_CATEGORY_HARASSMENT', 'HARM_CATEGORY_SEXUALLY_EXPLICIT', 'HARM_CATEGORY_CIVIC_INTEGRITY'] as const;
const THRESHOLDS = ['HARM_BLOCK_THRESHOLD_UNSPECIFIED', 'BLOCK_LOW_AND_ABOVE', 'BLOCK_MEDIUM_AND_ABOVE', 'BLOCK_ONLY_HIGH', 'BLOCK_NONE', 'OFF'] as const;

/** Gemini: safety settings and thinking config (the AI SDK's Google options). */
export const GoogleOptions = z
  .strictObject({
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
  })
  .meta({ examples: [{ safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }] }] });

/**
 * The provider options a Bedrock chat takes, and only them (the Bedrock adapter checks each call
 * with this same schema): the AI SDK spreads `providerOptions.bedrock` into the Converse body as
 * it is, so any other key would reach the wire (a `messages` key would replace the conversation).
 */
export const BedrockOptions = z
  .strictObject({
    /** A guardrail applied to the input and the streamed answer (ConverseStream's `GuardrailStreamConfiguration`). */
    guardrailConfig: z
      .strictObject({
        guardrailIdentifier: z.string().min(1),
        guardrailVersion: z.string().min(1),
        trace: z.enum(['enabled', 'disabled', 'enabled_full']).optional(),
        streamProcessingMode: z.enum(['sync', 'async']).optional(),
      })
      .optional(),
    /** Extended thinking (the AI SDK's: Claude's `thinking`, Nova's and OpenAI's reasoning settings); streamed as `reasoning` events. */
    reasoningConfig: z
      .strictObject({
        type: z.enum(['enabled', 'disabled', 'adaptive']).optional(),
        budgetTokens: z.number().int().positive().optional(),
        maxReasoningEffort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional(),
        display: z.enum(['omitted', 'summarized']).optional(),
      })
      .optional(),
    /** The model's own request fields beyond Converse's `inferenceConfig` (e.g. `{ top_k: 40 }`). */
    additionalModelRequestFields: z.record(z.string(), z.unknown()).optional(),
    /** Latency-optimized inference where the model offers it. */
    performanceConfig: z.strictObject({ latency: z.enum(['standard', 'optimized']) }).optional(),
    /** The service tier of the request. */
    serviceTier: z.enum(['reserved', 'priority', 'default', 'flex']).optional(),
  })
  .meta({ examples: [{ guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1' } }] });
