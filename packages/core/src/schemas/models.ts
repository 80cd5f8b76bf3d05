import { z } from 'zod';
import { queryInt } from './common.js';

/** One agent as an OpenAI model object (`GET /api/v1/models`). */
export const ModelObject = z.object({
  id: z.string().describe('The project id: pass it as model to /api/v1/chat/completions'),
  object: z.literal('model'),
  created: z.number().int().describe('Unix time (seconds) the project was created'),
  owned_by: z.string().describe('Always agent-platform'),
  name: z.string().describe("The project's name (shown by front ends that read it, e.g. Open WebUI)"),
});
export type ModelObject = z.output<typeof ModelObject>;

/** Largest page of the models list, and its default: what front ends that never page see. */
export const MAX_MODELS_LIMIT = 1000;

/**
 * `GET /api/v1/models`: a page of the list, as OpenAI's other lists page (`limit`, `after`).
 * OpenAI's own models list has no paging, so clients and front ends that ask without them get
 * the first page, of the default size.
 */
export const ListModelsQuery = z.object({
  limit: queryInt().min(1).max(MAX_MODELS_LIMIT).default(MAX_MODELS_LIMIT).describe(`Models on the page, 1-${MAX_MODELS_LIMIT} (default ${MAX_MODELS_LIMIT})`),
  after: z.string().min(1).max(200).optional().describe('The id of the last model of the previous page (its last_id): the page starts after it'),
});
export type ListModelsQuery = z.input<typeof ListModelsQuery>;

/** OpenAI's model list: the caller's projects, newest first, with the cursor members of OpenAI's paged lists. */
export const ListModelsResponse = z.object({
  object: z.literal('list'),
  data: z.array(ModelObject),
  first_id: z.string().nullable().describe('The id of the first model of the page (null when it is empty)'),
  last_id: z.string().nullable().describe('The id of the last model of the page: pass it as after for the next page'),
  has_more: z.boolean().describe('Whether models follow this page'),
});
export type ListModelsResponse = z.output<typeof ListModelsResponse>;
