import { type Api, fillPath, type ResultOf } from '../../api/client';
import type { paths } from '../../api/schema';

type StreamChunk = paths['/api/v1/ai/chat/completions']['post']['responses'][200]['content']['text/event-stream'];
type Listed = ResultOf<'/api/v1/approvals', 'get'>['approvals'][number];
/** A field of an MCP server's question, read from its schema (name, type, default, choices, bounds). */
export type QuestionField = NonNullable<StreamChunk['elicitation']>['fields'][number];

/**
 * What waits for the person in a chat: a tool call to approve or deny (the turn paused), or an
 * MCP server's question (`elicitation`: its tool waits, the answer's stream still open).
 */
export interface Waiting {
  readonly id: string;
  readonly kind: 'tool' | 'elicitation';
  /** The tool call that waits (its step in the answer). */
  readonly callId: string;
  /** The function the model called (`mcp__<server>__<tool>` for an MCP tool). */
  readonly tool: string;
  /** The call's arguments as the model wrote them (JSON text; empty for a question). */
  readonly arguments: string;
  /** A question's text and the fields of its form. */
  readonly message?: string;
  readonly fields?: readonly QuestionField[];
}

/** What a chunk of an answer adds to what waits: an `approval` or an `elicitation` member. */
export function waitingOf(chunk: Partial<StreamChunk>): Waiting | undefined {
  if (chunk.approval) return { id: chunk.approval.id, kind: 'tool', callId: chunk.approval.callId, tool: chunk.approval.tool, arguments: chunk.approval.arguments };
  const q = chunk.elicitation;
  return q ? { id: q.id, kind: 'elicitation', callId: q.callId, tool: q.tool, arguments: '', message: q.message, fields: q.fields } : undefined;
}

/** `list` with `more` added (each once, by id), leaving out those already decided. */
export function mergeWaiting(list: readonly Waiting[], more: readonly Waiting[], decided: ReadonlySet<string>): readonly Waiting[] {
  const added = more.filter((w) => !decided.has(w.id) && !list.some((l) => l.id === w.id));
  return added.length ? [...list, ...added] : list;
}

/** What waits in a chat, as the service lists it (oldest first): shown when a chat is opened or the page reloaded. */
export async function listWaiting(api: Api, chatId: string): Promise<Waiting[]> {
  const { approvals } = await api.call('get', '/api/v1/approvals', { query: { chatId, state: 'pending', limit: 100 } });
  return approvals.reverse().map((a: Listed) => ({
    id: a.id,
    kind: a.kind,
    callId: a.callId,
    tool: a.tool,
    arguments: a.arguments,
    ...(a.message !== null ? { message: a.message } : {}),
    ...(a.fields !== null ? { fields: a.fields } : {}),
  }));
}

/** A decision on a tool call, or an answer to a question. */
export type Decision = { decision: 'approve' | 'deny'; reason?: string } | { decision: 'accept'; content: Record<string, unknown> } | { decision: 'decline' | 'cancel' };

/**
 * Decides one waiting item (`POST /api/v1/approvals/{id}`). A tool decision asks for a stream:
 * the last decision of a pause answers the continued turn as chunks (the Response is returned
 * to be read; recorded in the chat's stream `streamId` too, when given), any other the approval
 * as JSON (null: the pause still waits for other calls).
 * A question's answer is JSON: the tool goes on in the stream that asked. Throws ApiError with
 * the service's words (409 already decided or expired, 400 naming the form's fields).
 */
export async function decide(api: Api, id: string, decision: Decision, signal?: AbortSignal, streamId?: string): Promise<Response | null> {
  const stream = decision.decision === 'approve' || decision.decision === 'deny';
  const res = await api.fetch('post', fillPath('/api/v1/approvals/{id}', { id }), { body: { ...decision, ...(stream ? { stream: true, ...(streamId ? { streamId } : {}) } : {}) }, signal });
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
  await res.body?.cancel();
  return null;
}
