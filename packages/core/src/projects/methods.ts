import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { CreateProjectRequest, ListProjectsQuery, type ListProjectsResponse, type ProjectResponse, UpdateProjectRequest } from '../schemas/projects.js';
import { parseInput } from '../validation.js';
import type { ProjectsService } from './service.js';

/**
 * Projects (agents): `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `ProjectsService`; the server calls the service with the values its routes parsed.
 */
export const projectsMethods = publicMethods<{ projects: ProjectsService }>()({
  /** `POST /api/projects/create`. */
  async createProject(caller: Caller, input: CreateProjectRequest): Promise<ProjectResponse> {
    return this.projects.create(caller, parseInput(CreateProjectRequest, input));
  },

  /**
   * `GET /api/v1/projects`: newest first. With `cursor`, the page starts right after the
   * cursor's project (stable while projects are created); otherwise at `offset`.
   */
  async listProjects(caller: Caller, query: ListProjectsQuery = {}): Promise<ListProjectsResponse> {
    return this.projects.list(caller, parseInput(ListProjectsQuery, query));
  },

  /** `GET /api/v1/projects/{id}`. */
  getProject(caller: Caller, id: string): Promise<ProjectResponse> {
    return this.projects.get(caller, id);
  },

  /** `PATCH /api/v1/projects/{id}`. */
  async updateProject(caller: Caller, id: string, input: UpdateProjectRequest): Promise<ProjectResponse> {
    return this.projects.update(caller, id, parseInput(UpdateProjectRequest, input));
  },

  /** `DELETE /api/v1/projects/{id}`: the project and everything in it (documents, chunks, vectors). */
  deleteProject(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.projects.delete(caller, id);
  },
});
