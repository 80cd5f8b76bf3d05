import type { z } from 'zod';
import type { CompletionsService } from '../completions/service.js';
import { type Caller, callerProject, type PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { AskArguments, SearchKnowledgeArguments } from '../schemas/agent-mcp.js';
import type { ChatCompletionChunk } from '../schemas/completion-answers.js';
import type { ChatCompletionRequest } from '../schemas/completions.js';
import type { SearchResponse } from '../schemas/knowledge.js';
import type { RunToolResponse } from '../schemas/tools.js';
import type { ProjectRecord, ToolRecord } from '../storage/types.js';
import type { ToolProgressListener } from '../tools/progress.js';
import type { ToolsService } from '../tools/service.js';
import { RunCancellations, type RunKey } from './cancellations.js';
import { SessionLogLevels } from './log-levels.js';

export interface AgentMcpDeps {
  readonly completions: CompletionsService;
  readonly knowledge: KnowledgeService;
  readonly tools: ToolsService;
}

/**
 * What a project's MCP server offers its owner's MCP clients, in the platform's terms: the agent
 * (`ask`, a chat completion of the project), its knowledge search, the project's tools its owner
 * opted in (`exposeOverMcp`), and the cancellation of runs across instances. The MCP protocol
 * itself is `@agent-platform/mcp`'s (`createAgentMcpServer`). Methods take parsed input.
 */
export class AgentMcpService {
  readonly #ctx: PlatformContext;
  readonly #deps: AgentMcpDeps;
  /** Runs under way here, cancelled from any instance. */
  readonly runs: RunCancellations;
  /** The log level of each MCP session, on every instance. */
  readonly logLevels: SessionLogLevels;

  constructor(ctx: PlatformContext, deps: AgentMcpDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
    this.runs = new RunCancellations(ctx.notifier);
    this.logLevels = new SessionLogLevels(ctx.notifier);
  }

  /** The caller's project, or `not_found` (another user's project too). */
  project(caller: Caller, projectId: string): Promise<ProjectRecord> {
    // This instance serves MCP clients from now on: it hears the levels sessions set elsewhere.
    this.logLevels.listen();
    return callerProject(this.#ctx, caller, projectId);
  }

  /** The project's tools offered to MCP clients: enabled and opted in by the owner, oldest first. */
  async tools(caller: Caller, projectId: string): Promise<ToolRecord[]> {
    await callerProject(this.#ctx, caller, projectId);
    const tools = await this.#ctx.storage.tools.enabled(projectId);
    return tools.filter((t) => t.exposeOverMcp && t.userId === caller.userId);
  }

  /**
   * Runs the offered tool of that name in its sandbox (as `POST /api/tools/{id}/run` does),
   * telling `onProgress` the progress its code reports while it runs; `not_found` for a tool
   * that is not offered (absent, disabled or not opted in).
   */
  async runTool(caller: Caller, projectId: string, name: string, args: Record<string, unknown>, signal?: AbortSignal, onProgress?: ToolProgressListener): Promise<RunToolResponse> {
    const tool = (await this.tools(caller, projectId)).find((t) => t.name === name);
    if (!tool) throw PlatformError.notFound(`Tool ${name} is not offered by this project's MCP server`);
    return this.#deps.tools.run(caller, tool.id, { args }, signal, onProgress);
  }

  /**
   * `ask`: the agent's answer to `question` as a streamed chat completion of the project (its
   * instructions, knowledge and tools; the first chunk carries the sources). With `chatId` the
   * chat's earlier turns are the context and the turn is stored in it (a new id starts that
   * chat); a chat of another project is `not_found`.
   */
  async ask(caller: Caller, projectId: string, args: z.output<typeof AskArguments>, signal?: AbortSignal): Promise<AsyncIterable<ChatCompletionChunk>> {
    await callerProject(this.#ctx, caller, projectId);
    const { chatId, question } = args;
    if (chatId) {
      const chat = await this.#ctx.storage.chats.get(caller.userId, chatId);
      if (chat && chat.projectId !== projectId) throw PlatformError.notFound(`Chat ${chatId} not found in this project`);
    }
    const request: z.output<typeof ChatCompletionRequest> = { model: projectId, messages: [{ role: 'user', content: question }], stream: true, ...(chatId ? { chatId } : {}) };
    // The chat-scoped form opens a chat of a new id in the project; without one, no chat.
    const result = await this.#deps.completions.create(caller, request, { form: chatId ? 'ai' : 'v1', signal });
    if (!result.stream) throw new PlatformError('internal', 'A streamed completion answered whole');
    return result.chunks;
  }

  /** `search_knowledge`: the project's knowledge search, as `POST /api/knowledge/search` answers it. */
  searchKnowledge(caller: Caller, projectId: string, args: z.output<typeof SearchKnowledgeArguments>): Promise<SearchResponse> {
    return this.#deps.knowledge.search(caller, { ...args, projectId });
  }

  /** Cancels a run of a project's MCP server wherever it runs. */
  cancel(run: RunKey): Promise<void> {
    return this.runs.cancel(run);
  }

  close(): void {
    this.runs.close();
    this.logLevels.close();
  }
}
