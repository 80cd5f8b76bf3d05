import type { ErrorCode } from '@agent-platform/core';
import { DeleteLocalModelRequest, DeleteLocalModelResponse, ListLocalModelsQuery, ListLocalModelsResponse } from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** The local model runtime may be down, slow or broken. */
const LOCAL_MODEL_ERRORS: readonly ErrorCode[] = ['upstream_error', 'unavailable', 'timeout'];

/** The local model runtime (Ollama): their routes, in the order of the table (routes/index.ts). */
export const localModelsRoutes: readonly ApiRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/localmodel/list-models',
    summary: 'List the models installed in the local model runtime (Ollama) at baseUrl',
    tag: 'Local models',
    query: ListLocalModelsQuery,
    response: ListLocalModelsResponse,
    kind: 'raw',
    errors: LOCAL_MODEL_ERRORS,
    failure: { models: [] },
    handler: (p, i) => p.localModels.list(i.caller, i.query),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/localmodel/delete-model',
    summary: 'Delete one model (exact name with tag) from the local model runtime; irreversible',
    tag: 'Local models',
    body: DeleteLocalModelRequest,
    response: DeleteLocalModelResponse,
    kind: 'raw',
    errors: ['not_found', ...LOCAL_MODEL_ERRORS],
    audit: { resource: 'local-model', action: 'delete', id: 'body.modelName', scope: 'server' },
    handler: (p, i) => p.localModels.delete(i.caller, i.body),
  }),
];
