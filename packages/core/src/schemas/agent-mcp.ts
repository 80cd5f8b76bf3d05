import { z } from 'zod';
import { sizedText } from './common.js';
import { CompletionSource } from './completion-answers.js';
import { SearchRequest } from './knowledge.js';

/** The arguments of the `ask` tool of a project's MCP server. */
export const AskArguments = z
  .object({
    question: sizedText(100_000)
      .refine((s) => s.trim().length > 0, { message: 'must not be empty' })
      .describe("What to ask the agent: it answers with the project's instructions, knowledge and tools"),
    chatId: z.string().min(1).max(200).optional().describe('Continue this chat of the project (its earlier turns are the context, and this turn is stored in it); an unused chat id starts that chat'),
  })
  .strict();
export type AskArguments = z.input<typeof AskArguments>;

/** The arguments of the `search_knowledge` tool: those of the knowledge search route, less the project. */
export const SearchKnowledgeArguments = SearchRequest.pick({ query: true, topK: true, searchType: true }).strict();
export type SearchKnowledgeArguments = z.input<typeof SearchKnowledgeArguments>;

/** The structured result of `ask`. */
export const AskResult = z.object({
  answer: z.string().describe("The agent's answer"),
  sources: z.array(CompletionSource).describe('The knowledge the answer was given, numbered as the answer cites it ([1], [2], ...)'),
  chatId: z.string().optional().describe('The chat the turn was stored in (when chatId was given)'),
  finishReason: z.string().describe('stop, length, content_filter or tool_calls, as the model ended'),
});
export type AskResult = z.output<typeof AskResult>;

/** The structured result of `search_knowledge`. */
export const SearchKnowledgeResult = z.object({
  results: z.array(
    z.object({
      document: z.object({ id: z.string(), fileName: z.string() }),
      chunkId: z.string(),
      score: z.number().describe('0..1, higher is more relevant'),
      text: z.string().describe("The chunk's text"),
    }),
  ),
});
export type SearchKnowledgeResult = z.output<typeof SearchKnowledgeResult>;
