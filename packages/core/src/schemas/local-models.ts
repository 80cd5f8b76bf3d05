import { z } from 'zod';
import { baseUrlProblem } from '../net/base-url.js';

/** The address of an Ollama-compatible runtime (checked against the outbound URL policy before use). */
const RuntimeBaseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
  .max(2000)
  .refine((url) => baseUrlProblem(url) === undefined, { error: (issue) => baseUrlProblem(String(issue.input)) })
  .describe('Address of the local model runtime (no query string or fragment); default OLLAMA_HOST or http://127.0.0.1:11434');

/** One installed model (spec: "Local model (listing item)"). */
export const LocalModel = z.object({
  name: z.string().describe('Model name with its tag, e.g. llama3.2:latest'),
  size: z.number().describe('Size in bytes'),
  digest: z.string().describe('Integrity digest: algorithm prefix then hex, e.g. sha256:…'),
  modified_at: z.string().describe('ISO 8601 time of the last change'),
});
export type LocalModel = z.output<typeof LocalModel>;

export const ListLocalModelsQuery = z.object({ baseUrl: RuntimeBaseUrl.optional() });
export type ListLocalModelsQuery = z.input<typeof ListLocalModelsQuery>;

export const ListLocalModelsResponse = z.object({
  success: z.boolean(),
  models: z.array(LocalModel).describe('Empty when none are installed and on failure'),
  error: z.string().optional().describe('On failure: the runtime is not running, Failed to list models, or the invalid input'),
  code: z.string().optional().describe('On failure: unavailable, upstream_error, invalid_request, ...'),
});
export type ListLocalModelsResponse = z.output<typeof ListLocalModelsResponse>;

export const DeleteLocalModelRequest = z.object({
  modelName: z.string().min(1).max(500).describe('Exact model name including the tag; each tag is deleted on its own'),
  baseUrl: RuntimeBaseUrl.optional(),
});
export type DeleteLocalModelRequest = z.input<typeof DeleteLocalModelRequest>;

export const DeleteLocalModelResponse = z.object({
  success: z.boolean(),
  message: z.string().optional().describe('On success: names the deleted model'),
  error: z.string().optional().describe('On failure: Model not found, Failed to delete model, or the invalid input'),
  code: z.string().optional().describe('On failure: not_found, unavailable, upstream_error, invalid_request, ...'),
});
export type DeleteLocalModelResponse = z.output<typeof DeleteLocalModelResponse>;

/** A failed call of the local model endpoints: `error` instead of `message` (spec, section 7). */
export const LocalModelErrorResponse = z.object({
  success: z.literal(false),
  error: z.string(),
  code: z.string().describe('Stable machine word: invalid_request, unauthorized, not_found, unavailable, upstream_error, ...'),
  models: z.array(LocalModel).optional().describe('Empty array on the list endpoint'),
});
export type LocalModelErrorResponse = z.output<typeof LocalModelErrorResponse>;
