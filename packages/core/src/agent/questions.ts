import type { ToolCall } from './chat-model.js';

/** A tool call of the agent held for a person's approval (stored; `id` is what `POST /api/v1/approvals/{id}` decides). */
export interface PendingApproval {
  readonly id: string;
  /** The chat the paused turn is stored in. */
  readonly chatId: string;
  readonly callId: string;
  /** The function name the model called. */
  readonly tool: string;
  /** Its arguments, as the model wrote them (JSON text). */
  readonly arguments: string;
  /** When it counts as denied if nobody decides it (ISO 8601). */
  readonly expiresAt: string;
}

/** What an MCP server asks the person during a tool call (`elicitation/create`, form mode). */
export interface ElicitationRequest {
  readonly message: string;
  /** The form: a JSON Schema of an object of primitive fields (`requestedSchema`). */
  readonly schema: Record<string, unknown>;
}

/** The person's answer to an elicitation, as MCP's `ElicitResult` says it. */
export interface ElicitationAnswer {
  readonly action: 'accept' | 'decline' | 'cancel';
  /** `accept`: the form's content, checked against its schema, defaults applied. */
  readonly content?: Record<string, unknown>;
}

/** An elicitation waiting for the person (stored; `id` is what `POST /api/v1/approvals/{id}` answers). */
export interface PendingQuestion {
  readonly id: string;
  readonly callId: string;
  /** The function name of the tool call that asks. */
  readonly tool: string;
  readonly message: string;
  readonly schema: Record<string, unknown>;
  /** When it is declined if nobody answers (ISO 8601). */
  readonly expiresAt: string;
}

/** How a turn asks a person while a tool runs (the planner stores the question and waits for its answer). */
export interface QuestionAsker {
  /** Stores the question; `answer` settles when the person answers it, or it times out (declined) or `signal` fires. */
  ask(call: ToolCall, request: ElicitationRequest, signal: AbortSignal | undefined): Promise<{ question: PendingQuestion; answer: Promise<ElicitationAnswer> }>;
}

/** A tool call decided by a person, for the turn that goes on from it. */
export interface DecidedCall {
  readonly call: ToolCall;
  /** Undefined: approved (the tool runs); else the reason given to the model for not running it. */
  readonly denied?: string;
}

/** The tool's result the model gets for a call a person denied. */
export const deniedResult = (reason: string | undefined): string => `The user denied this tool call${reason ? `: ${reason}` : ''}. It was not run.`;
