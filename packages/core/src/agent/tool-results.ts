import { PlatformError } from '../errors.js';
import type { ChatMessage } from './chat-model.js';

/** The calls of the last assistant message that made any, without a tool message answering them yet. */
function unanswered(messages: readonly ChatMessage[]): Map<string, string> {
  const open = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'assistant' && m.toolCalls?.length) {
      open.clear();
      for (const call of m.toolCalls) open.set(call.id, call.name);
    } else if (m.role === 'tool') {
      open.delete(m.toolCallId);
    }
  }
  return open;
}

/**
 * The request's messages that are new to a chat. A turn that ended with calls of the client's
 * functions leaves the chat waiting for their results; the client continues it with tool
 * messages, and usually resends the conversation before them too (OpenAI's API keeps nothing,
 * so clients send everything). What it resent, up to and including its copy of the assistant
 * message that made the calls, is in the chat already and is dropped (its system messages are
 * kept: they are never stored). A chat that waits for nothing takes the request as it is.
 */
export function newToChat(history: readonly ChatMessage[], input: readonly ChatMessage[]): ChatMessage[] {
  const open = unanswered(history);
  if (open.size === 0) return [...input];
  const at = input.findLastIndex((m) => m.role === 'assistant' && (m.toolCalls ?? []).some((c) => open.has(c.id)));
  if (at < 0) return [...input];
  return [...input.slice(0, at).filter((m) => m.role === 'system'), ...input.slice(at + 1)];
}

/**
 * Refuses (400) a conversation a model would refuse: every tool call must be answered by a tool
 * message right after the assistant message that made it (other messages may come only once all
 * are answered), and every tool message must answer such a call. `history` (a chat's, valid as
 * stored) comes first; paths name the message of `requested` (the request as sent) at fault.
 */
export function checkToolResults(history: readonly ChatMessage[], input: readonly ChatMessage[], requested: readonly ChatMessage[]): void {
  const fail = (m: ChatMessage | undefined, member: string | undefined, message: string): never => {
    const at = m ? requested.indexOf(m) : -1;
    const path = at >= 0 ? ['messages', at, ...(member ? [member] : [])] : ['messages'];
    throw PlatformError.invalid(`${path.join('.')}: ${message}`, [{ path, code: 'custom', message }]);
  };
  const missing = (open: Map<string, string>) => {
    const [id, name] = [...open][0] as [string, string];
    return `tool call ${id} (${name}) has no result: a tool message with tool_call_id "${id}" must follow the assistant message that made it`;
  };
  const open = new Map<string, string>();
  for (const m of [...history, ...input.filter((x) => x.role !== 'system')]) {
    if (m.role === 'tool') {
      if (!open.delete(m.toolCallId)) fail(m, 'tool_call_id', `"${m.toolCallId}" answers no tool call of the assistant message before it`);
      continue;
    }
    if (open.size > 0) fail(m, undefined, missing(open));
    if (m.role === 'assistant') for (const call of m.toolCalls ?? []) open.set(call.id, call.name);
  }
  if (open.size > 0) fail(undefined, undefined, missing(open));
}
