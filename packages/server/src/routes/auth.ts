import { CreateKeyRequest, CreateKeyResponse, IdParam, ListKeysQuery, ListKeysResponse, MessageResponse } from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** The caller's API keys: their routes, in the order of the table (routes/index.ts). */
export const authRoutes: readonly ApiRoute[] = [
  route({
    method: 'POST',
    path: '/api/auth/create-key',
    summary: 'Create another API key for the caller (shown once)',
    tag: 'Access keys',
    body: CreateKeyRequest,
    response: CreateKeyResponse,
    status: 201,
    audit: { resource: 'key', action: 'key.create', id: 'result.id' },
    handler: (p, i) => p.auth.createKey(i.caller, i.body),
  }),
  route({
    method: 'GET',
    path: '/api/auth/keys',
    summary: "List the caller's API keys (no secrets)",
    tag: 'Access keys',
    query: ListKeysQuery,
    response: ListKeysResponse,
    handler: (p, i) => p.auth.listKeys(i.caller, i.query),
  }),
  route({
    method: 'DELETE',
    path: '/api/auth/keys/{id}',
    summary: 'Revoke an API key',
    tag: 'Access keys',
    params: IdParam,
    response: MessageResponse,
    audit: { resource: 'key', action: 'key.revoke', id: 'params.id' },
    handler: (p, i) => p.auth.deleteKey(i.caller, i.params.id),
  }),
];
