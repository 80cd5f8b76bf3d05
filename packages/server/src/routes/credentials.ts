import type { ErrorCode } from '@agent-platform/core';
import {
  CreateCredentialRequest,
  CredentialResponse,
  CredentialTestResponse,
  DefaultModelsQuery,
  IdParam,
  ListCredentialsResponse,
  MessageResponse,
  ProviderModelsResponse,
  UpdateCredentialRequest,
} from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** A model list asks an upstream, which may refuse the key, be down or slow. */
const PROVIDER_MODELS_ERRORS: readonly ErrorCode[] = ['not_found', 'upstream_error', 'unavailable', 'timeout', 'unsupported'];

/** Provider credentials: their routes, in the order of the table (routes/index.ts). */
export const credentialsRoutes: readonly ApiRoute[] = [
  route({
    method: 'POST',
    path: '/api/v1/credentials',
    summary: 'Store a provider credential (the key is encrypted and never returned; the address is checked against the outbound policy)',
    tag: 'Credentials',
    errors: ['unavailable'],
    body: CreateCredentialRequest,
    response: CredentialResponse,
    status: 201,
    audit: { resource: 'credential', action: 'create', id: 'result.credential.id' },
    handler: (p, i) => p.credentials.create(i.caller, i.body),
  }),
  route({
    method: 'GET',
    path: '/api/v1/credentials',
    summary: "List the caller's credentials (no secrets)",
    tag: 'Credentials',
    response: ListCredentialsResponse,
    handler: (p, i) => p.credentials.list(i.caller),
  }),
  route({
    method: 'GET',
    path: '/api/v1/credentials/{id}',
    summary: 'Get a credential (no secret)',
    tag: 'Credentials',
    params: IdParam,
    response: CredentialResponse,
    handler: (p, i) => p.credentials.get(i.caller, i.params.id),
  }),
  ...(['/api/v1/credentials/{id}', '/api/credentials/{id}'] as const).map((path) =>
    route({
      method: 'PATCH',
      path,
      summary:
        path === '/api/credentials/{id}'
          ? 'Same as PATCH /api/v1/credentials/{id} (the path the spec writes without /v1)'
          : 'Change name, apiKey, baseUrl, isValid, proxy or default of a credential (only the members given)',
      tag: 'Credentials',
      errors: ['unavailable'],
      params: IdParam,
      body: UpdateCredentialRequest,
      response: MessageResponse,
      audit: { resource: 'credential', action: 'update', id: 'params.id', fields: 'body.data' },
      handler: (p, i) => p.credentials.update(i.caller, i.params.id, i.body),
    }),
  ),
  route({
    method: 'GET',
    path: '/api/v1/credentials/{id}/models',
    summary: "List the models the credential's upstream offers, asked with its key at its address (10 s at most; an upstream failure answers its reason)",
    tag: 'Credentials',
    params: IdParam,
    errors: PROVIDER_MODELS_ERRORS,
    response: ProviderModelsResponse,
    handler: (p, i) => p.credentials.models(i.caller, i.params.id, i.signal),
  }),
  route({
    method: 'GET',
    path: '/api/v1/credentials/default/models',
    summary: 'List the models of the upstream a project of the provider that names no credential calls (your credential chosen for it, else the server environment)',
    tag: 'Credentials',
    query: DefaultModelsQuery,
    errors: PROVIDER_MODELS_ERRORS,
    response: ProviderModelsResponse,
    handler: (p, i) => p.credentials.defaultModels(i.caller, i.query, i.signal),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/credentials/{id}',
    summary: 'Delete a credential (409 while projects use it: by name, or as their default)',
    tag: 'Credentials',
    errors: ['conflict'],
    params: IdParam,
    response: MessageResponse,
    audit: { resource: 'credential', action: 'delete', id: 'params.id' },
    handler: (p, i) => p.credentials.delete(i.caller, i.params.id),
  }),
  route({
    method: 'POST',
    path: '/api/v1/credentials/{id}/test',
    summary: "Test a credential with one cheap call to its provider's models route; answers ok or the provider's reason and records it in isValid",
    tag: 'Credentials',
    errors: ['unsupported'],
    params: IdParam,
    response: CredentialTestResponse,
    audit: { resource: 'credential', action: 'test', id: 'params.id', fields: ['isValid'] },
    handler: (p, i) => p.credentials.test(i.caller, i.params.id, i.signal),
  }),
];
