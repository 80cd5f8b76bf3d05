import type { z } from 'zod';
import { PlatformError } from '../errors.js';
import type { ListModelsQuery, ListModelsResponse, ModelObject } from '../schemas/models.js';
import type { ListPosition, ProjectRecord, StorageAdapter } from '../storage/types.js';

/** `owned_by` of every model object. */
export const MODEL_OWNER = 'agent-platform';

const toModel = (project: ProjectRecord): ModelObject => ({
  id: project.id,
  object: 'model',
  created: Math.floor(project.createdAt.getTime() / 1000),
  owned_by: MODEL_OWNER,
  name: project.name,
});

/**
 * `GET /api/v1/models`: a page of the user's projects as OpenAI model objects, newest first, so
 * OpenAI-compatible front ends can pick an agent (its id is what `/api/v1/chat/completions`
 * takes as `model`). Paged as OpenAI's cursor lists are: `limit`, and `after` the last id of the
 * previous page; the answer says `has_more`, `first_id` and `last_id`.
 */
export async function listModels(storage: StorageAdapter, userId: string, q: z.output<typeof ListModelsQuery>): Promise<ListModelsResponse> {
  let after: ListPosition | undefined;
  if (q.after !== undefined) {
    const project = await storage.projects.get(userId, q.after);
    if (!project)
      throw PlatformError.invalid(`after: none of your models has the id ${q.after} (give the last_id of a page)`, [{ path: ['after'], code: 'custom', message: 'not one of your models' }]);
    after = { createdAt: project.createdAt, id: project.id };
  }
  const page = await storage.projects.list({ userId, limit: q.limit + 1, ...(after ? { after } : { offset: 0 }) });
  const data = page.items.slice(0, q.limit).map(toModel);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.items.length > q.limit };
}

/** `GET /api/v1/models/{id}`: one project of the user as a model object; `not_found` for any other id. */
export async function getModel(storage: StorageAdapter, userId: string, id: string): Promise<ModelObject> {
  const project = await storage.projects.get(userId, id);
  if (!project) throw PlatformError.notFound(`The model ${id} does not exist: models are the ids of your projects (GET /api/v1/models)`);
  return toModel(project);
}
