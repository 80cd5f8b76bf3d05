import { PlatformError } from '../errors.js';
import type { ListModelsResponse, ModelObject } from '../schemas/models.js';
import type { ListPosition, ProjectRecord, StorageAdapter } from '../storage/types.js';

/** `owned_by` of every model object. */
export const MODEL_OWNER = 'agent-platform';

/** Projects read per storage call while listing. */
const PAGE = 100;

const toModel = (project: ProjectRecord): ModelObject => ({
  id: project.id,
  object: 'model',
  created: Math.floor(project.createdAt.getTime() / 1000),
  owned_by: MODEL_OWNER,
  name: project.name,
});

/**
 * `GET /api/v1/models`: every project of the user as an OpenAI model object, newest first, so
 * OpenAI-compatible front ends can pick an agent (its id is what `/api/v1/chat/completions`
 * takes as `model`). OpenAI's list has no paging: all of them, read from storage a page at a time.
 */
export async function listModels(storage: StorageAdapter, userId: string): Promise<ListModelsResponse> {
  const data: ModelObject[] = [];
  let after: ListPosition | undefined;
  for (;;) {
    const page = await storage.projects.list({ userId, limit: PAGE, ...(after ? { after } : { offset: 0 }) });
    data.push(...page.items.map(toModel));
    const last = page.items.at(-1);
    if (page.items.length < PAGE || !last) return { object: 'list', data };
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** `GET /api/v1/models/{id}`: one project of the user as a model object; `not_found` for any other id. */
export async function getModel(storage: StorageAdapter, userId: string, id: string): Promise<ModelObject> {
  const project = await storage.projects.get(userId, id);
  if (!project) throw PlatformError.notFound(`The model ${id} does not exist: models are the ids of your projects (GET /api/v1/models)`);
  return toModel(project);
}
