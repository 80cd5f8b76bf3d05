import { z } from 'zod';
import { AskArguments, AskResult, SearchKnowledgeArguments, SearchKnowledgeResult } from '../schemas/agent-mcp.js';
import type { SearchResponse } from '../schemas/knowledge.js';
import type { ToolRecord } from '../storage/types.js';

/** A tool as an MCP server lists it (`tools/list`): JSON Schemas of its arguments and, when known, of its structured result. */
export interface AgentMcpTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: { type: 'object'; [key: string]: unknown };
  readonly outputSchema?: { type: 'object'; [key: string]: unknown };
}

/** The names of the tools every project's MCP server offers; a project tool of one of these names is not offered. */
export const AGENT_MCP_TOOL_NAMES = ['ask', 'search_knowledge'] as const;

const objectSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as Record<string, unknown>;
  return { ...json, type: 'object' as const };
};

/** `ask` and `search_knowledge`, with the schemas of their arguments and results (from the zod schemas that check them). */
export const AGENT_MCP_TOOLS: readonly AgentMcpTool[] = [
  {
    name: 'ask',
    title: 'Ask the agent',
    description:
      "Asks this project's agent a question. It answers with its instructions, its knowledge base and its tools, and gives the knowledge it used as sources (cited [1], [2], ... in the answer). With chatId, continues that chat.",
    inputSchema: objectSchema(AskArguments, 'input'),
    outputSchema: objectSchema(AskResult, 'output'),
  },
  {
    name: 'search_knowledge',
    title: "Search the agent's knowledge",
    description: "Searches this project's knowledge base and answers the best passages, each with its document and score (0..1).",
    inputSchema: objectSchema(SearchKnowledgeArguments, 'input'),
    outputSchema: objectSchema(SearchKnowledgeResult, 'output'),
  },
];

/** A project tool as its MCP server lists it: its name, description and parameters (a JSON Schema of an object). */
export function projectToolForMcp(tool: ToolRecord): AgentMcpTool {
  return { name: tool.name, description: tool.description, inputSchema: { ...tool.parameters, type: 'object' } };
}

/** A knowledge search's answer as `search_knowledge`'s structured result. */
export function searchKnowledgeResult(response: SearchResponse): SearchKnowledgeResult {
  return {
    results: response.documents.map((hit) => ({
      document: { id: String(hit.metadata.documentId ?? ''), fileName: String(hit.metadata.fileName ?? '') },
      chunkId: hit.id,
      score: hit.score,
      text: hit.content,
    })),
  };
}
