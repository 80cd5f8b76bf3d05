/**
 * What Agent Platform's chat completions (`POST /api/v1/chat/completions`, and the chat-scoped
 * `POST /api/v1/ai/chat/completions`) add to OpenAI's request and answers. Plain types, for any
 * client; `@agent-platform/client/openai` adds them to the `openai` package's own types.
 * The server's schemas are the source: a test checks these types against them.
 */

/** A knowledge excerpt the agent was given, cited in the answer as `[index]`. */
export interface CompletionSource {
  /** The number the answer cites it by, from 1. */
  index: number;
  chunkId: string;
  documentId: string;
  fileName: string;
  /** Relevance, 0 to 1. */
  score: number;
  /** The excerpt's first words (at most 160 characters, `…` when cut). */
  excerpt: string;
}

/**
 * The agent started one of its own tools (a project tool, or an MCP server's tool named
 * `mcp__<server>__<tool>`): told on a streamed chunk whose `delta` is empty. The agent runs it
 * itself; it is not one of the `tool_calls` a client is asked to run.
 */
export interface ToolStepCall {
  /** The call's id, as the model gave it; the result carries the same. */
  id: string;
  /** The function name the model called. */
  name: string;
  /** The arguments as the model wrote them (JSON text). */
  arguments: string;
}

/** What one of the agent's own tools answered: told on a streamed chunk whose `delta` is empty. */
export interface ToolStepResult {
  /** The id of the call this answers. */
  id: string;
  name: string;
  /** What the model was given: the tool's result (JSON text for project tools), or `Error: ...`. */
  content: string;
  /** Whether the tool failed (threw, timed out, was refused its arguments, or does not exist). */
  isError: boolean;
}

/** How far one of the agent's running project tools has come, as its code reported it: told on a streamed chunk whose `delta` is empty. */
export interface ToolStepProgress {
  /** The id of the running call. */
  id: string;
  name: string;
  /** Work done so far, in the tool's own unit (what its code gave `progress(done, total, message)`). */
  progress: number;
  /** Work in all, when the tool said. */
  total?: number;
  /** What the tool is doing (at most 500 characters). */
  message?: string;
}

/**
 * A call of the agent's own tools waiting for a person's approval: the turn paused (its
 * `finish_reason` is `tool_calls`, with no `tool_calls` to run). Decide it with
 * `POST /api/v1/approvals/{id}`; the last decision continues the turn.
 */
export interface PendingApprovalOut {
  /** The approval to decide. */
  id: string;
  /** The chat the paused turn is stored in (a new one when the request named none). */
  chatId: string;
  callId: string;
  /** The function the model called. */
  tool: string;
  /** Its arguments, as the model wrote them (JSON text). */
  arguments: string;
  /** Undecided by then, it counts as denied (ISO 8601). */
  expiresAt: string;
}

/** A field of an MCP server's form, from its schema. */
export interface FormField {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array';
  title?: string | undefined;
  description?: string | undefined;
  required: boolean;
  /** Applied when the answer leaves the field out. */
  default?: unknown;
  /** string: email, uri, date or date-time. */
  format?: string | undefined;
  /** The choices of an enum (one, or several for an array). */
  options?: { value: string; label: string }[] | undefined;
  minimum?: number | undefined;
  maximum?: number | undefined;
  minLength?: number | undefined;
  maxLength?: number | undefined;
  minItems?: number | undefined;
  maxItems?: number | undefined;
}

/** An MCP server asks the person something while one of its tools runs: answer with `POST /api/v1/approvals/{id}`. */
export interface ElicitationOut {
  id: string;
  callId: string;
  /** The tool call that asks. */
  tool: string;
  /** What the server asks. */
  message: string;
  /** The form's fields, with their defaults. */
  fields: FormField[];
  /** Unanswered by then, it is declined (ISO 8601). */
  expiresAt: string;
}

/** Request members beside OpenAI's. */
export interface CompletionRequestFields {
  /** Keeps the conversation: the chat's earlier messages are sent, the new ones stored. */
  chatId?: string;
  /** Also write the events to this stream of the chat, which a client can replay (needs `chatId`). */
  streamId?: string;
  /** The provider of `model` when `model` is a model name, not a project id. */
  provider?: 'openai' | 'ollama' | 'local' | 'anthropic' | 'azure' | 'bedrock' | 'google';
  /** The provider's own options for this request (e.g. Anthropic's `thinking`), over the project's `providerOptions`; a key the provider does not take is a 400. */
  provider_options?: Record<string, unknown>;
}

/** Members of a whole (non-streamed) answer beside OpenAI's. */
export interface CompletionFields {
  /** Always `true`, on the chat-scoped route only. */
  success?: true;
  /** The knowledge excerpts the agent was given; empty when none was relevant. */
  sources: CompletionSource[];
  /** The chat the turn was stored in, when the request named one. */
  chatId?: string;
  /** The agent's calls waiting for a person's approval: the turn paused. */
  approvals?: PendingApprovalOut[];
}

/** Members of a streamed chunk beside OpenAI's. */
export interface CompletionChunkFields {
  /** On the first chunk: the knowledge excerpts the agent was given. */
  sources?: CompletionSource[];
  chatId?: string;
  /** The agent is running one of its tools. */
  toolCall?: ToolStepCall;
  /** What a tool the agent ran answered. */
  toolResult?: ToolStepResult;
  /** How far a running project tool has come (at most one per 100 ms per call). */
  toolProgress?: ToolStepProgress;
  /** A call of the agent's waiting for a person's approval (one per chunk, before the finish). */
  approval?: PendingApprovalOut;
  /** A running tool asks the person; the stream goes on once it is answered. */
  elicitation?: ElicitationOut;
}

/**
 * Members of an answer's message, and of a streamed chunk's `delta`, beside OpenAI's: the
 * model's reasoning, named as OpenAI-compatible reasoning servers (DeepSeek, vLLM) name it.
 */
export interface CompletionMessageFields {
  /** The model's reasoning, where its provider streams it; never part of `content`, never stored with a chat. */
  reasoning_content?: string;
}
