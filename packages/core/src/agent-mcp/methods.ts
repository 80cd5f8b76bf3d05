import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { AskArguments, SearchKnowledgeArguments } from '../schemas/agent-mcp.js';
import type { ChatCompletionChunk } from '../schemas/completion-answers.js';
import type { SearchResponse } from '../schemas/knowledge.js';
import { parseInput } from '../validation.js';
import type { AgentMcpService } from './service.js';

/**
 * The tools of projects' MCP servers that take a client's arguments: `AgentPlatform`'s public
 * methods of the area (installed on its prototype, src/methods.ts). Each parses the arguments an
 * MCP client sent (`invalid_request` naming the argument) and hands them to `AgentMcpService`.
 */
export const agentMcpMethods = publicMethods<{ agentMcp: AgentMcpService }>()({
  /** The `ask` tool: the agent's answer as a streamed chat completion of the project (see `AgentMcpService.ask`). */
  async askAgent(caller: Caller, projectId: string, input: AskArguments, options: { signal?: AbortSignal } = {}): Promise<AsyncIterable<ChatCompletionChunk>> {
    return this.agentMcp.ask(caller, projectId, parseInput(AskArguments, input), options.signal);
  },

  /** The `search_knowledge` tool: the project's knowledge search with `query`, `topK` and `searchType`. */
  async searchAgentKnowledge(caller: Caller, projectId: string, input: SearchKnowledgeArguments): Promise<SearchResponse> {
    return this.agentMcp.searchKnowledge(caller, projectId, parseInput(SearchKnowledgeArguments, input));
  },
});
