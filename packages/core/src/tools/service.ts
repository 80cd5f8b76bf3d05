import type { z } from 'zod';
import { type Caller, callerProject, type PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { offsetPageFields } from '../paging.js';
import type { ActivateToolRequest, CreateToolRequest, ListToolsQuery, ListToolsResponse, RunToolRequest, RunToolResponse, ToolFull, ToolResponse, UpdateToolRequest } from '../schemas/tools.js';
import type { ToolRecord } from '../storage/types.js';
import { samePathId } from '../validation.js';
import type { ToolProgressListener } from './progress.js';
import type { ToolRunner } from './project-tools.js';

type CreateBody = z.output<typeof CreateToolRequest>;
type ListQuery = z.output<typeof ListToolsQuery>;
type UpdateBody = z.output<typeof UpdateToolRequest>;
type ActivateBody = z.output<typeof ActivateToolRequest>;
type RunBody = z.output<typeof RunToolRequest>;

export interface ToolsDeps {
  /** The sandboxes' runner; without it, tool calls answer `unsupported`. */
  readonly runner: ToolRunner | undefined;
  /**
   * Project tools and MCP tools share the model's function names: a name starting with this
   * belongs to MCP servers (`MCP_TOOL_PREFIX`), and a project tool may not take it.
   */
  readonly reservedPrefix: string;
}

function toTool(t: ToolRecord): ToolFull {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    language: t.language,
    enabled: t.enabled,
    exposeOverMcp: t.exposeOverMcp,
    requiresApproval: t.requiresApproval,
    createdAt: t.createdAt.toISOString(),
    projectId: t.projectId,
    code: t.code,
    parameters: t.parameters,
    dependencies: [...t.dependencies],
    updatedAt: t.updatedAt.toISOString(),
  };
}

/** A project's tools: code run in a sandbox, offered to the agent's model and run on their own (`run`). */
export class ToolsService {
  readonly #ctx: PlatformContext;
  readonly #deps: ToolsDeps;

  constructor(ctx: PlatformContext, deps: ToolsDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
  }

  #runner(): ToolRunner {
    if (!this.#deps.runner) throw new PlatformError('unsupported', 'Tools are not configured: construct AgentPlatform with `tools: { sandboxes }`');
    return this.#deps.runner;
  }

  /** Project tools and MCP tools share the model's function names: `mcp__` belongs to MCP servers. */
  #checkName(name: string): void {
    const prefix = this.#deps.reservedPrefix;
    if (name.startsWith(prefix)) {
      throw PlatformError.invalid(`name: must not start with ${prefix} (the names of MCP servers' tools)`, [{ path: ['name'], code: 'custom', message: `must not start with ${prefix}` }]);
    }
  }

  async #tool(caller: Caller, id: string): Promise<ToolRecord> {
    const tool = await this.#ctx.storage.tools.get(caller.userId, id);
    if (!tool) throw PlatformError.notFound('Tool not found');
    return tool;
  }

  /** `POST /api/tools/create`. */
  async create(caller: Caller, body: CreateBody): Promise<ToolResponse> {
    const { storage, clock, ids, caps } = this.#ctx;
    const runner = this.#runner();
    await callerProject(this.#ctx, caller, body.projectId);
    // Refused before its packages are installed; decided when it is written.
    await caps.check(storage, caller.userId, 'tools');
    runner.sandbox(body.language);
    this.#checkName(body.name);
    await runner.compileParameters(caller.userId, body.parameters);
    await runner.prepare(caller.userId, body);
    const now = clock.now();
    const record: ToolRecord = { id: ids.next('tool'), userId: caller.userId, ...body, createdAt: now, updatedAt: now };
    await storage.transaction(async (tx) => {
      await caps.reserve(tx, caller.userId, 'tools');
      await tx.tools.insert(record);
    });
    return { success: true, tool: toTool(record) };
  }

  /** `GET /api/tools`: a project's tools, newest first. */
  async list(caller: Caller, q: ListQuery): Promise<ListToolsResponse> {
    await callerProject(this.#ctx, caller, q.projectId);
    const page = await this.#ctx.storage.tools.list({ userId: caller.userId, projectId: q.projectId, limit: q.limit, offset: q.offset });
    return {
      success: true,
      tools: page.items.map((t) => {
        const { id, name, description, language, enabled, exposeOverMcp, requiresApproval, createdAt } = toTool(t);
        return { id, name, description, language, enabled, exposeOverMcp, requiresApproval, createdAt };
      }),
      ...offsetPageFields(q.offset, page),
      message: page.total === 0 ? 'No tools found' : `Found ${page.total} tool${page.total === 1 ? '' : 's'}`,
    };
  }

  /** `GET /api/tools/{id}`. */
  async get(caller: Caller, id: string): Promise<ToolResponse> {
    return { success: true, tool: toTool(await this.#tool(caller, id)) };
  }

  /** `PUT /api/tools/{id}`: `toolId` must equal the path id; changes the members of `tool` given. */
  async update(caller: Caller, id: string, { toolId, tool }: UpdateBody): Promise<{ success: true; message: string }> {
    if (toolId !== id) throw samePathId('toolId', 'tool');
    if (tool.name) this.#checkName(tool.name);
    if (tool.parameters) await this.#runner().compileParameters(caller.userId, tool.parameters);
    const current = await this.#tool(caller, id);
    // New code or dependencies are readied (and refused) before anything is written.
    if (tool.dependencies || tool.code) await this.#runner().prepare(caller.userId, { ...current, ...tool });
    const updated = await this.#ctx.storage.tools.update(caller.userId, id, { ...tool, updatedAt: this.#ctx.clock.now() });
    if (!updated) throw PlatformError.notFound('Tool not found');
    return { success: true, message: 'Tool updated' };
  }

  /** `POST /api/tools/{id}/activate`: enables (`activeState: true`) or disables the tool. */
  async activate(caller: Caller, id: string, { toolId, activeState }: ActivateBody): Promise<{ success: true; message: string }> {
    if (toolId !== id) throw samePathId('toolId', 'tool');
    const updated = await this.#ctx.storage.tools.update(caller.userId, id, { enabled: activeState, updatedAt: this.#ctx.clock.now() });
    if (!updated) throw PlatformError.notFound('Tool not found');
    return { success: true, message: activeState ? 'Tool activated' : 'Tool deactivated' };
  }

  /** `DELETE /api/tools/{id}`. */
  async delete(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.#ctx.storage.tools.delete(caller.userId, id))) throw PlatformError.notFound('Tool not found');
    return { success: true, message: 'Tool deleted' };
  }

  /**
   * `POST /api/tools/{id}/run`: runs the tool in its sandbox; a failing tool answers `success:
   * false` with its error. `onProgress` is told the progress its code reports while it runs.
   */
  async run(caller: Caller, id: string, { args }: RunBody, signal?: AbortSignal, onProgress?: ToolProgressListener): Promise<RunToolResponse> {
    const tool = await this.#tool(caller, id);
    const outcome = await this.#runner().run(tool, args, signal, onProgress);
    return outcome.ok
      ? { success: true, result: outcome.result, logs: [...outcome.logs], durationMs: outcome.durationMs }
      : { success: false, message: outcome.error.message, error: { kind: outcome.error.kind }, logs: [...outcome.logs], durationMs: outcome.durationMs };
  }
}
