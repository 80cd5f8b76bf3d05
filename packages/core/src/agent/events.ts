import type { ToolProgress } from '../tools/progress.js';
import type { ChatMessage, FinishReason, ToolCall, Usage } from './chat-model.js';
import type { PendingApproval, PendingQuestion } from './questions.js';

/** What an agent turn yields, in order. */
export type AgentEvent =
  | { readonly type: 'text'; readonly delta: string }
  /** Reasoning text the model streamed (never stored, never part of the answer). */
  | { readonly type: 'reasoning'; readonly delta: string }
  | { readonly type: 'tool_call'; readonly call: ToolCall }
  | { readonly type: 'tool_result'; readonly callId: string; readonly name: string; readonly content: string; readonly isError: boolean }
  /** How far a running tool has come, as it reported it (a project tool's `progress(...)`, coalesced), between its `tool_call` and `tool_result`. */
  | { readonly type: 'tool_progress'; readonly callId: string; readonly name: string; readonly progress: ToolProgress }
  /**
   * The turn paused: these calls of the agent wait for a person's approval (stored; the planner
   * turns the loop's `finish` with `approvals` into this event, then the finish). Decided ones
   * continue the turn (`POST /api/v1/approvals/{id}`).
   */
  | { readonly type: 'approval_required'; readonly approvals: readonly PendingApproval[] }
  /** A running tool asks the person (an MCP server's elicitation); the tool waits for the answer. */
  | { readonly type: 'elicitation'; readonly question: PendingQuestion }
  | {
      readonly type: 'finish';
      readonly reason: FinishReason;
      readonly usage: Usage;
      readonly messages: readonly ChatMessage[];
      /** Calls of the client's functions (`clientTools`) for the client to run (reason `tool_calls`). */
      readonly toolCalls?: readonly ToolCall[];
      /** Calls of the agent's tools that wait for a person's approval (reason `tool_calls`): the turn pauses. */
      readonly approvals?: readonly ToolCall[];
      /** The results of the decided calls the turn went on from (`AgentTurn.resume`), which come before the request's messages. */
      readonly resumed?: readonly ChatMessage[];
    };
