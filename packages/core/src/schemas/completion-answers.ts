import { z } from 'zod';
import { ClientToolCallOut, FormField } from './approvals.js';

/**
 * What the chat completion routes answer: OpenAI's `chat.completion` and `chat.completion.chunk`
 * with this service's extensions (`sources`, `chatId`, the agent's tool steps) and the members
 * OpenAI-compatible servers add (`reasoning_content`, finish reason `content_filter`).
 */

/** A knowledge excerpt the answer was given; `[index]` in the text cites it. */
export const CompletionSource = z.object({
  index: z.number().int().describe('Citation number, from 1'),
  chunkId: z.string(),
  documentId: z.string(),
  fileName: z.string(),
  score: z.number().describe('Search score, 0..1'),
  excerpt: z.string().describe("The excerpt's first words (at most 160 characters, … when cut)"),
});

const UsageOut = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });
/** Why the answer ended: `content_filter` when the provider's safety system cut or refused it. */
const FinishReasonOut = z.enum(['stop', 'length', 'tool_calls', 'content_filter']);
/** Reasoning text the model streamed (DeepSeek's and vLLM's `reasoning_content`): never part of `content`, never stored with a chat. */
const ReasoningOut = z.string().optional().describe("The model's reasoning, where its provider streams it (never part of content)");

/**
 * A call of the agent's own tools that waits for a person's approval: the turn paused there
 * (finish_reason tool_calls, with no `tool_calls` for the client to run). Decide it with
 * `POST /api/v1/approvals/{id}`: the last decision continues the turn.
 */
export const PendingApprovalOut = z.object({
  id: z.string().describe('The approval to decide: POST /api/v1/approvals/{id}'),
  chatId: z.string().describe('The chat the paused turn is stored in (a new one when the request named none)'),
  callId: z.string(),
  tool: z.string().describe('The function the model called'),
  arguments: z.string().describe('Its arguments, as the model wrote them (JSON text)'),
  expiresAt: z.iso.datetime().describe('Undecided by then, it counts as denied'),
});

/** An MCP server asks the person something while one of its tools runs (the tool waits): answer with POST /api/v1/approvals/{id}. */
export const ElicitationOut = z.object({
  id: z.string().describe('The question to answer: POST /api/v1/approvals/{id} with accept (and content), decline or cancel'),
  callId: z.string(),
  tool: z.string().describe('The tool call that asks'),
  message: z.string().describe('What the server asks'),
  fields: z.array(FormField).describe("The form's fields, from the server's schema, with their defaults"),
  expiresAt: z.iso.datetime().describe('Unanswered by then, it is declined'),
});

export const ChatCompletionResponse = z.object({
  success: z.literal(true).optional().describe('On the chat-scoped form'),
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({
        role: z.literal('assistant'),
        content: z.string().nullable().describe('null when the answer is only tool calls'),
        tool_calls: z.array(ClientToolCallOut).optional().describe("Calls of the client's functions (`tools`) to run; finish_reason is tool_calls"),
        reasoning_content: ReasoningOut,
      }),
      finish_reason: FinishReasonOut,
    }),
  ),
  usage: UsageOut,
  sources: z.array(CompletionSource),
  chatId: z.string().optional(),
  approvals: z.array(PendingApprovalOut).optional().describe("The agent's calls waiting for a person's approval: the turn paused (finish_reason tool_calls, no tool_calls)"),
});
export type ChatCompletionResponse = z.output<typeof ChatCompletionResponse>;

/**
 * A step of the agent, told in the stream so a client can show it: the agent's own tools and
 * its MCP servers' tools (`mcp__<server>__<tool>`) run inside the service, so an OpenAI client
 * never sees them as `delta.tool_calls` (which would ask the client to run them). These members
 * are extensions, like `sources`, on chunks with an empty `delta`: OpenAI clients ignore them.
 */
export const ToolStepCall = z.object({
  id: z.string().describe("The call's id, as the model gave it; the result carries the same"),
  name: z.string().describe('The function name the model called'),
  arguments: z.string().describe('The arguments as the model wrote them (JSON text)'),
});

export const ToolStepResult = z.object({
  id: z.string().describe('The id of the call this answers'),
  name: z.string(),
  content: z.string().describe("What the model was given: the tool's result (JSON text for project tools), or `Error: ...`"),
  isError: z.boolean().describe('Whether the tool failed (threw, timed out, was refused its arguments, or does not exist)'),
});

export const ToolStepProgress = z.object({
  id: z.string().describe('The id of the running call'),
  name: z.string(),
  progress: z.number().describe("Work done so far, in the tool's own unit (what its code gave `progress(done, total, message)`)"),
  total: z.number().optional().describe('Work in all, when the tool said'),
  message: z.string().optional().describe('What the tool is doing (at most 500 characters)'),
});

export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({
        role: z.literal('assistant').optional(),
        content: z.string().optional(),
        tool_calls: z
          .array(ClientToolCallOut.extend({ index: z.number().int() }))
          .optional()
          .describe("A call of the client's functions (`tools`), whole in one chunk; never the agent's own tools"),
        reasoning_content: ReasoningOut,
      }),
      finish_reason: FinishReasonOut.nullable(),
    }),
  ),
  usage: UsageOut.optional(),
  sources: z.array(CompletionSource).optional().describe('On the first chunk'),
  chatId: z.string().optional(),
  toolCall: ToolStepCall.optional().describe('The agent is running one of its tools (on a chunk whose delta is empty)'),
  toolResult: ToolStepResult.optional().describe('What a tool the agent ran answered (on a chunk whose delta is empty)'),
  toolProgress: ToolStepProgress.optional().describe('How far a running project tool has come, as its code reported it (on a chunk whose delta is empty; at most one per 100 ms per call)'),
  approval: PendingApprovalOut.optional().describe("A call of the agent's waiting for a person's approval, one per chunk before the finish (on a chunk whose delta is empty)"),
  elicitation: ElicitationOut.optional().describe('A running tool asks the person (on a chunk whose delta is empty); the stream goes on once it is answered'),
});
export type ChatCompletionChunk = z.output<typeof ChatCompletionChunk>;
