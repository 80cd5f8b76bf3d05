import { CreateProjectRequest, IdParam, ListProjectsQuery, ListProjectsResponse, MessageResponse, ProjectResponse, UpdateProjectRequest } from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** Projects: their routes, in the order of the table (routes/index.ts). */
export const projectsRoutes: readonly ApiRoute[] = [
  route({
    method: 'POST',
    path: '/api/projects/create',
    summary: 'Create a project (an agent)',
    tag: 'Projects',
    body: CreateProjectRequest,
    response: ProjectResponse,
    status: 201,
    audit: { resource: 'project', action: 'create', id: 'result.project.id' },
    handler: (p, i) => p.projects.create(i.caller, i.body),
  }),
  route({
    method: 'GET',
    path: '/api/v1/projects',
    summary: "List the caller's projects, newest first (offset or cursor pagination)",
    tag: 'Projects',
    query: ListProjectsQuery,
    response: ListProjectsResponse,
    handler: (p, i) => p.projects.list(i.caller, i.query),
  }),
  route({
    method: 'GET',
    path: '/api/v1/projects/{id}',
    summary: 'Get a project',
    tag: 'Projects',
    params: IdParam,
    response: ProjectResponse,
    handler: (p, i) => p.projects.get(i.caller, i.params.id),
  }),
  route({
    method: 'PATCH',
    path: '/api/v1/projects/{id}',
    summary: 'Change fields of a project',
    tag: 'Projects',
    params: IdParam,
    body: UpdateProjectRequest,
    response: ProjectResponse,
    audit: { resource: 'project', action: 'update', id: 'params.id' },
    handler: (p, i) => p.projects.update(i.caller, i.params.id, i.body),
  }),
  route({
    method: 'DELETE',
    path: '/api/v1/projects/{id}',
    summary: 'Delete a project and everything in it',
    tag: 'Projects',
    params: IdParam,
    response: MessageResponse,
    audit: { resource: 'project', action: 'delete', id: 'params.id' },
    handler: (p, i) => p.projects.delete(i.caller, i.params.id),
  }),
];
