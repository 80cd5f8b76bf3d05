import {
  type AgentPlatform,
  type Caller,
  CreateKeyRequest,
  CreateKeyResponse,
  CreateProjectRequest,
  IdParam,
  ListKeysResponse,
  ListProjectsQuery,
  ListProjectsResponse,
  MessageResponse,
  ProjectResponse,
  UpdateProjectRequest,
} from '@agent-platform/core';
import { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** What a handler gets: the authenticated caller and the request parts, not yet validated. */
export interface RouteInput {
  readonly caller: Caller;
  readonly params: Record<string, string>;
  readonly query: Record<string, string | string[]>;
  readonly body: unknown;
}

/**
 * One API route. The schemas document the route (OpenAPI); validation itself happens in the
 * `AgentPlatform` method the handler calls, with the same schemas.
 */
export interface ApiRoute {
  readonly method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v1/projects/{id}`. */
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly response: z.ZodType;
  /** Success status, 200 unless said. */
  readonly status?: number;
  readonly handler: (platform: AgentPlatform, input: RouteInput) => Promise<unknown>;
}

const param = (input: RouteInput, name: string): string => input.params[name] ?? '';

/** Every authenticated route of the API. Public routes live in `app.ts`. */
export const apiRoutes: readonly ApiRoute[] = [
  {
    method: 'POST',
    path: '/api/auth/create-key',
    summary: 'Create another API key for the caller (shown once)',
    tag: 'Access keys',
    body: CreateKeyRequest,
    response: CreateKeyResponse,
    status: 201,
    handler: (p, i) => p.createKey(i.caller, i.body as CreateKeyRequest),
  },
  {
    method: 'GET',
    path: '/api/auth/keys',
    summary: "List the caller's API keys (no secrets)",
    tag: 'Access keys',
    response: ListKeysResponse,
    handler: (p, i) => p.listKeys(i.caller),
  },
  {
    method: 'DELETE',
    path: '/api/auth/keys/{id}',
    summary: 'Revoke an API key',
    tag: 'Access keys',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteKey(i.caller, param(i, 'id')),
  },
  {
    method: 'POST',
    path: '/api/projects/create',
    summary: 'Create a project (an agent)',
    tag: 'Projects',
    body: CreateProjectRequest,
    response: ProjectResponse,
    status: 201,
    handler: (p, i) => p.createProject(i.caller, i.body as CreateProjectRequest),
  },
  {
    method: 'GET',
    path: '/api/v1/projects',
    summary: "List the caller's projects, newest first (offset or cursor pagination)",
    tag: 'Projects',
    query: ListProjectsQuery,
    response: ListProjectsResponse,
    handler: (p, i) => p.listProjects(i.caller, i.query as ListProjectsQuery),
  },
  {
    method: 'GET',
    path: '/api/v1/projects/{id}',
    summary: 'Get a project',
    tag: 'Projects',
    params: IdParam,
    response: ProjectResponse,
    handler: (p, i) => p.getProject(i.caller, param(i, 'id')),
  },
  {
    method: 'PATCH',
    path: '/api/v1/projects/{id}',
    summary: 'Change fields of a project',
    tag: 'Projects',
    params: IdParam,
    body: UpdateProjectRequest,
    response: ProjectResponse,
    handler: (p, i) => p.updateProject(i.caller, param(i, 'id'), i.body as UpdateProjectRequest),
  },
  {
    method: 'DELETE',
    path: '/api/v1/projects/{id}',
    summary: 'Delete a project and everything in it',
    tag: 'Projects',
    params: IdParam,
    response: MessageResponse,
    handler: (p, i) => p.deleteProject(i.caller, param(i, 'id')),
  },
];

export const HealthResponse = z.object({ status: z.literal('ok') });
