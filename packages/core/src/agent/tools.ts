import type { Caller } from '../context.js';
import type { ToolProgressListener } from '../tools/progress.js';
import type { ChatMessage, FinishReason, ToolDefinition } from './chat-model.js';
import type { ElicitationAnswer, ElicitationRequest } from './questions.js';

/**
 * A completion a running tool asks of the turn's own model (an MCP server's
 * `sampling/createMessage` during its tool call): plain messages, no tools.
 */
export interface ToolSampleRequest {
  readonly system?: string | undefined;
  readonly messages: readonly ChatMessage[];
  /** The most tokens the tool asks for; the turn's own limit (or `DEFAULT_SAMPLING_MAX_TOKENS`) bounds it. */
  readonly maxTokens: number;
  readonly temperature?: number | undefined;
  readonly stop?: readonly string[] | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** The answer of a `ToolSampleRequest`: the text, the model that gave it and why it stopped. */
export interface ToolSampleResult {
  readonly text: string;
  readonly model: string;
  readonly finishReason: FinishReason;
}

/** What a tool's run gets besides its arguments. */
export interface ToolRunContext {
  readonly signal?: AbortSignal;
  /** The turn's own model, for a tool that asks for a completion; its usage is added to the turn's. */
  readonly sample?: (request: ToolSampleRequest) => Promise<ToolSampleResult>;
  /** Asks the person while the tool runs (an MCP server's elicitation); absent when nobody can be asked. */
  readonly elicit?: (request: ElicitationRequest) => Promise<ElicitationAnswer>;
  /** Told the progress the tool reports while it runs (a project tool's `progress(...)` calls, coalesced); absent when nobody listens. */
  readonly onProgress?: ToolProgressListener;
}

/** Prefix of every MCP function name offered to a model (`mcp__<server>__<tool>`); project tools may not use it. */
export const MCP_TOOL_PREFIX = 'mcp__';

/** A function the agent can call: its definition (offered to the model) and how to run it. */
export interface AgentTool {
  readonly definition: ToolDefinition;
  /** The agent's call of it waits for a person's approval: the turn pauses there (`approval_required`). Default false. */
  readonly requiresApproval?: boolean;
  /**
   * Runs the tool with the arguments the model gave (parsed JSON). Answers the text fed back to
   * the model; throwing reports the error to the model as the tool's result.
   */
  run(args: unknown, context: ToolRunContext): Promise<string>;
}

/**
 * Where an agent's tools come from: the project's own tools, its MCP servers' tools. Several
 * sources are combined; each decides which tools of a project are enabled.
 */
export interface ToolSource {
  tools(caller: Caller, projectId: string): Promise<AgentTool[]>;
}
