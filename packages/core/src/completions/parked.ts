import type { ChatMessage, ToolCall } from '../agent/chat-model.js';
import type { AgentEvent } from '../agent/events.js';
import type { PendingApproval } from '../agent/questions.js';
import { checkToolResults } from '../agent/tool-results.js';
import type { Caller, PlatformContext } from '../context.js';
import { randomString } from '../ids.js';
import type { ChatRecord } from '../storage/types.js';
import type { ApprovalDesk } from './approval-desk.js';
import type { CompletionPlan } from './types.js';

type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/**
 * A step that called both the client's functions and tools a person approves waits for two
 * things: the decisions and the client's results. The client's results may come first (its next
 * request, with `chatId`): they are stored in the chat at once, and the answer is the pause again
 * (the approvals still pending, no `tool_calls`); the last decision then continues the turn.
 *
 * `parkResults` does that for a request whose messages (new to the chat) are only tool messages
 * answering every one of the client's waiting calls while approvals of the step are pending: it
 * answers the approvals still pending after the results are stored (read after the store, so a
 * decision stored meanwhile is seen: then none, and the request continues the turn itself).
 * Undefined, and nothing stored, for any other request (it goes on as usual).
 */
export async function parkResults(
  ctx: PlatformContext,
  desk: ApprovalDesk,
  caller: Caller,
  chat: ChatRecord,
  turn: { pending: readonly ChatMessage[]; input: readonly ChatMessage[]; requested: readonly ChatMessage[]; waiting: readonly ToolCall[] },
): Promise<PendingApproval[] | undefined> {
  const own = turn.input.filter((m) => m.role !== 'system');
  const results = own.filter((m): m is ToolMessage => m.role === 'tool');
  if (results.length === 0 || results.length !== own.length || turn.waiting.length === 0) return undefined;
  const ids = turn.waiting.map((c) => c.id);
  const open = await desk.waiting(caller, chat.id, ids);
  // The client's calls must all be answered (else the usual 400 says which is not), and some decision must still be missing.
  if (open.unapproved.length > 0 || open.pending.length === 0) return undefined;
  // Each result answers a call of the waiting step, once (the held calls count as answered here).
  checkToolResults(turn.pending, [...own, ...ids.map((id): ToolMessage => ({ role: 'tool', toolCallId: id, content: '' }))], turn.requested);
  const createdAt = ctx.clock.now();
  await ctx.storage.transaction(async (tx) => {
    await ctx.caps.reserve(tx, caller.userId, 'messages', results.length);
    await tx.chats.appendMessages(
      chat.userId,
      chat.id,
      results.map((m) => ({ role: 'tool', content: m.content, toolCalls: null, toolCallId: m.toolCallId, createdAt })),
    );
  });
  await ctx.storage.chats.touch(chat.userId, chat.id, createdAt);
  return (await desk.waiting(caller, chat.id, ids)).pending;
}

/** The plan of a request that leaves the turn waiting for decisions: its pending approvals, then the finish (`tool_calls`, nothing for the client to run). */
export function stillPaused(now: Date, responseModel: string, chat: ChatRecord | undefined, approvals: readonly PendingApproval[]): CompletionPlan {
  async function* events(): AsyncGenerator<AgentEvent> {
    yield { type: 'approval_required', approvals };
    yield { type: 'finish', reason: 'tool_calls', usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, messages: [] };
  }
  return { id: `chatcmpl-${randomString(24)}`, created: Math.floor(now.getTime() / 1000), responseModel, chat, sources: [], events: events() };
}
