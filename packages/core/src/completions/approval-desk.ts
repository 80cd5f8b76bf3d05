import type { ChatMessage, ToolCall } from '../agent/chat-model.js';
import type { DecidedCall, ElicitationAnswer, ElicitationRequest, PendingApproval, PendingQuestion } from '../agent/questions.js';
import type { Caller } from '../context.js';

/** Where a run's questions to a person are kept (the approvals area implements it). */
export interface ApprovalDesk {
  /** Stores the calls a paused turn holds for approval; `resume` is what continuing it needs besides its chat. */
  pause(caller: Caller, run: { projectId: string; chatId: string; calls: readonly ToolCall[]; resume: Record<string, unknown> }): Promise<PendingApproval[]>;
  /**
   * The decisions of a chat's waiting calls (`conflict` while one is pending, expired ones
   * denied; calls without an approval are left out) and the continuation's claim of the turn
   * (`conflict` while another continuation holds it): end `hold` when the turn is stored or failed.
   */
  settle(caller: Caller, chatId: string, callIds: readonly string[]): Promise<{ calls: { callId: string; denied?: string }[]; hold: { end(succeeded: boolean): void } }>;
  /** Of a chat's waiting calls, the approvals still pending (expired ones denied now) and the calls without an approval (the client's). */
  waiting(caller: Caller, chatId: string, callIds: readonly string[]): Promise<{ pending: PendingApproval[]; unapproved: string[] }>;
  /** Stores an MCP server's question of a running call; `answer` settles with the person's answer. */
  ask(
    caller: Caller,
    run: { projectId: string; chatId: string | null },
    call: ToolCall,
    request: ElicitationRequest,
    signal: AbortSignal | undefined,
  ): Promise<{ question: PendingQuestion; answer: Promise<ElicitationAnswer> }>;
}

/** The request members a paused turn keeps to continue as it was asked (everything but its messages and whether it streamed). */
const KEPT = [
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'stop',
  'response_format',
  'provider_options',
  'maxTokens',
  // The recorded stream of the paused completion: the continuation is appended to it.
  'streamId',
] as const;

/** What a paused turn keeps of its request, as JSON. */
export function resumeSettings(request: object): Record<string, unknown> {
  const kept = Object.fromEntries(KEPT.flatMap((k) => (k in request && (request as Record<string, unknown>)[k] !== undefined ? [[k, (request as Record<string, unknown>)[k]]] : [])));
  return JSON.parse(JSON.stringify(kept)) as Record<string, unknown>;
}

/** The calls of the chat's waiting assistant message (`pending` of the history) that no message answers yet. */
export function waitingCalls(pending: readonly ChatMessage[], input: readonly ChatMessage[]): ToolCall[] {
  const answered = new Set([...pending, ...input].flatMap((m) => (m.role === 'tool' ? [m.toolCallId] : [])));
  const assistant = pending.find((m) => m.role === 'assistant');
  return assistant?.role === 'assistant' ? (assistant.toolCalls ?? []).filter((c) => !answered.has(c.id)) : [];
}

/** The decided calls to continue from, in the order the model made them. */
export function decidedCalls(waiting: readonly ToolCall[], settled: readonly { callId: string; denied?: string }[]): DecidedCall[] {
  const byId = new Map(settled.map((s) => [s.callId, s]));
  return waiting.flatMap((call) => {
    const s = byId.get(call.id);
    if (!s) return [];
    return [s.denied !== undefined ? { call, denied: s.denied } : { call }];
  });
}
