import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { ActivateToolRequest, CreateToolRequest, ListToolsQuery, type ListToolsResponse, RunToolRequest, type RunToolResponse, type ToolResponse, UpdateToolRequest } from '../schemas/tools.js';
import { parseInput } from '../validation.js';
import type { ToolProgressListener } from './progress.js';
import type { ToolsService } from './service.js';

/**
 * Projects' tools: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `ToolsService`; the server calls the service with the values its routes parsed.
 */
export const toolsMethods = publicMethods<{ tools: ToolsService }>()({
  /** `POST /api/tools/create`. */
  async createTool(caller: Caller, input: CreateToolRequest): Promise<ToolResponse> {
    return this.tools.create(caller, parseInput(CreateToolRequest, input));
  },

  /** `GET /api/tools`: a project's tools, newest first. */
  async listTools(caller: Caller, query: ListToolsQuery): Promise<ListToolsResponse> {
    return this.tools.list(caller, parseInput(ListToolsQuery, query));
  },

  /** `GET /api/tools/{id}`. */
  getTool(caller: Caller, id: string): Promise<ToolResponse> {
    return this.tools.get(caller, id);
  },

  /** `PUT /api/tools/{id}`: `toolId` must equal the path id; changes the members of `tool` given. */
  async updateTool(caller: Caller, id: string, input: UpdateToolRequest): Promise<{ success: true; message: string }> {
    return this.tools.update(caller, id, parseInput(UpdateToolRequest, input));
  },

  /** `POST /api/tools/{id}/activate`: enables (`activeState: true`) or disables the tool. */
  async activateTool(caller: Caller, id: string, input: ActivateToolRequest): Promise<{ success: true; message: string }> {
    return this.tools.activate(caller, id, parseInput(ActivateToolRequest, input));
  },

  /** `DELETE /api/tools/{id}`. */
  deleteTool(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.tools.delete(caller, id);
  },

  /**
   * `POST /api/tools/{id}/run`: runs the tool in its sandbox; a failing tool answers `success:
   * false` with its error. `onProgress` is told the progress the tool's code reports
   * (`progress(done, total, message)`) while it runs: at most one report per 100 ms, the last
   * always before the answer.
   */
  async runTool(caller: Caller, id: string, input: RunToolRequest, signal?: AbortSignal, onProgress?: ToolProgressListener): Promise<RunToolResponse> {
    return this.tools.run(caller, id, parseInput(RunToolRequest, input), signal, onProgress);
  },
});
