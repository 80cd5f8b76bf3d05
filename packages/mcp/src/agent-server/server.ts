import { type AgentPlatform, type Caller, isPlatformError, type ProjectRecord } from '@agent-platform/core';
import { AGENT_MCP_TOOL_NAMES, AGENT_MCP_TOOLS, type AgentMcpTool, projectToolForMcp, type RunKey, searchKnowledgeResult } from '@agent-platform/core/internal';
import type { AskResult } from '@agent-platform/core/schemas';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type CallToolResult, CancelledNotificationSchema, ErrorCode, ListToolsRequestSchema, McpError, SetLevelRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { logTo, progressReporter, type SendNotification, toolProgressTo } from './progress.js';

export interface AgentMcpServerOptions {
  readonly caller: Caller;
  readonly project: ProjectRecord;
  /** The client's `Mcp-Session-Id`, if it has one: with the request id, it names a run to cancel. */
  readonly sessionId?: string | undefined;
  /** The server's version, as `initialize` answers it. */
  readonly version?: string;
}

/** A failure as a tool's result (`isError`), so the client's model can read it and try again. */
const failed = (error: unknown): CallToolResult => ({
  content: [{ type: 'text', text: isPlatformError(error) ? `${error.code}: ${error.message}` : 'Internal error' }],
  isError: true,
});

const isAbort = (error: unknown) => (error as { name?: unknown } | null)?.name === 'AbortError' || (isPlatformError(error) && error.code === 'aborted');

/** The answer with its sources listed, for clients that read text only. */
function askText({ answer, sources }: AskResult): string {
  if (sources.length === 0) return answer;
  return `${answer}\n\nSources:\n${sources.map((s) => `[${s.index}] ${s.fileName} (score ${s.score.toFixed(2)})`).join('\n')}`;
}

/**
 * The MCP server of one project for one request of its owner (the official SDK's low-level
 * `Server`): `tools/list` and `tools/call` of `ask`, `search_knowledge` and the project's tools
 * its owner opted in (`exposeOverMcp`), progress and log notifications during `ask` and a
 * project tool's run (its own progress reports and console lines), and
 * `notifications/cancelled` cancelling the run wherever it runs. Connect it to a transport
 * (`handleAgentMcpRequest` does, over streamable HTTP).
 *
 * @example
 * const server = createAgentMcpServer(platform, { caller, project });
 * await server.connect(new StdioServerTransport());
 */
export function createAgentMcpServer(platform: AgentPlatform, options: AgentMcpServerOptions): Server {
  const { caller, project, sessionId } = options;
  const server = new Server(
    { name: `agent-platform/${project.name}`, title: project.name, version: options.version ?? '0.1.0' },
    {
      capabilities: { tools: {}, logging: {} },
      instructions: `The agent "${project.name}"${project.description ? `: ${project.description}` : ''}. Call ask with a question; search_knowledge searches its knowledge base.`,
    },
  );
  const session = { userId: caller.userId, projectId: project.id, sessionId };
  const runKey = (requestId: string | number): RunKey => ({ ...session, requestId });
  const allows = (level: 'info' | 'warning') => platform.agentMcp.logLevels.allows(session, level);

  const builtIn = new Set<string>(AGENT_MCP_TOOL_NAMES);
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const own = (await platform.agentMcp.tools(caller, project.id)).filter((t) => !builtIn.has(t.name)).map(projectToolForMcp);
    return { tools: [...AGENT_MCP_TOOLS, ...own] as AgentMcpTool[] };
  });

  async function ask(args: unknown, signal: AbortSignal, send: SendNotification, token: string | number | undefined): Promise<CallToolResult> {
    const progress = progressReporter(token, send);
    const log = logTo(send, allows);
    progress.step('Thinking');
    const chunks = await platform.askAgent(caller, project.id, args as { question: string }, { signal });
    const result: AskResult = { answer: '', sources: [], finishReason: 'stop' };
    for await (const chunk of chunks) {
      if (chunk.sources) result.sources = chunk.sources;
      if (chunk.chatId) result.chatId = chunk.chatId;
      if (chunk.toolCall) {
        progress.step(`Calling ${chunk.toolCall.name}`);
        log('info', `Calling ${chunk.toolCall.name}`);
      }
      if (chunk.toolProgress) {
        // A project tool's own report, e.g. `slow_tool 50/100: half way`.
        const { name, progress: done, total, message } = chunk.toolProgress;
        progress.step(`${name} ${done}${total !== undefined ? `/${total}` : ''}${message ? `: ${message}` : ''}`);
      }
      if (chunk.toolResult) {
        const { name, isError } = chunk.toolResult;
        progress.step(isError ? `${name} failed` : `${name} answered`);
        log(isError ? 'warning' : 'info', isError ? `${name} failed` : `${name} answered`);
      }
      const choice = chunk.choices[0];
      if (choice?.delta.content) {
        result.answer += choice.delta.content;
        progress.text(result.answer.length);
      }
      if (choice?.finish_reason) result.finishReason = choice.finish_reason;
    }
    return { content: [{ type: 'text', text: askText(result) }], structuredContent: result };
  }

  async function searchKnowledge(args: unknown): Promise<CallToolResult> {
    const found = searchKnowledgeResult(await platform.searchAgentKnowledge(caller, project.id, args as { query: string }));
    const text = found.results.length === 0 ? 'Nothing found' : found.results.map((r, i) => `[${i + 1}] ${r.document.fileName} (score ${r.score.toFixed(2)})\n${r.text}`).join('\n\n');
    return { content: [{ type: 'text', text }], structuredContent: found };
  }

  async function projectTool(name: string, args: Record<string, unknown>, signal: AbortSignal, send: SendNotification, token: string | number | undefined): Promise<CallToolResult> {
    // The tool's progress reports, relayed while it runs.
    const run = await platform.agentMcp.runTool(caller, project.id, name, args, signal, toolProgressTo(token, send));
    // The tool's console output, as log messages.
    const log = logTo(send, allows);
    for (const line of run.logs) log('info', line);
    if (!run.success) return { content: [{ type: 'text', text: run.message ?? 'The tool failed' }], isError: true };
    return { content: [{ type: 'text', text: typeof run.result === 'string' ? run.result : JSON.stringify(run.result ?? null) }] };
  }

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args = {} } = request.params;
    if (!builtIn.has(name) && !(await platform.agentMcp.tools(caller, project.id)).some((t) => t.name === name)) {
      // An unknown tool is a protocol error (the spec's); everything after is the tool's result.
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    }
    const { signal, release } = platform.agentMcp.runs.track(runKey(extra.requestId), extra.signal);
    const send: SendNotification = (n) => extra.sendNotification(n);
    const token = request.params._meta?.progressToken;
    try {
      if (name === 'ask') return await ask(args, signal, send, token);
      if (name === 'search_knowledge') return await searchKnowledge(args);
      return await projectTool(name, args, signal, send, token);
    } catch (error) {
      if (signal.aborted && isAbort(error)) throw new McpError(ErrorCode.InternalError, 'Cancelled by the client');
      return failed(error);
    } finally {
      release();
    }
  });

  // The level holds for the session's later requests, whichever instance answers them.
  server.setRequestHandler(SetLevelRequestSchema, async (request) => {
    await platform.agentMcp.logLevels.set(session, request.params.level);
    return {};
  });

  // A cancel may reach another instance than the run's (each request of the streamable HTTP
  // transport is its own): cancelled through the platform, which tells every instance.
  server.setNotificationHandler(CancelledNotificationSchema, async (notification) => {
    const { requestId } = notification.params;
    if (requestId !== undefined) await platform.agentMcp.cancel(runKey(requestId)).catch(() => {});
  });
  return server;
}
