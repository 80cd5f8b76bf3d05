import type { z } from 'zod';
import type { Caller } from '../context.js';
import { isPlatformError, PlatformError } from '../errors.js';
import type { ApprovalResponse } from '../schemas/approvals.js';
import type { CreateResponseRequest } from '../schemas/responses.js';
import type { ResponseRecord } from '../storage/types.js';

type Body = z.output<typeof CreateResponseRequest>;

/** The approvals area: the approvals an `mcp_approval_response` decides and the questions an `agent_platform:elicitation_response` answers. */
export interface ApprovalDecider {
  get(caller: Caller, id: string): Promise<ApprovalResponse>;
  decideCall(caller: Caller, id: string, decision: { approve: boolean; reason?: string | null | undefined }, param: string): Promise<unknown>;
  /** `POST /api/v1/approvals/{id}`'s decision (an MCP server's question: accept with content, decline, cancel). */
  decide(caller: Caller, id: string, body: { decision: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown>; reason?: string }): Promise<unknown>;
}

export const invalid = (param: string, message: string) => PlatformError.invalid(`${param}: ${message}`, [{ path: param.split('.'), code: 'custom', message }]);

/**
 * Decides the approvals the input's `mcp_approval_response` items answer (all checked first:
 * the caller's, of one chat, the previous response's), so the response continues their turn:
 * the request with that chat as `chatId` when it names none.
 */
export async function decideApprovals(approvals: ApprovalDecider, caller: Caller, body: Body, previous: ResponseRecord | undefined): Promise<Body> {
  const answers = typeof body.input === 'string' ? [] : body.input.flatMap((item, i) => (item.type === 'mcp_approval_response' ? [{ item, param: `input.${i}.approval_request_id` }] : []));
  if (answers.length === 0) return body;
  const found = await Promise.all(answers.map(({ item }) => approvals.get(caller, item.approval_request_id)));
  const chatId = found[0]?.approval.chatId;
  for (const [i, { approval }] of found.entries()) {
    const param = answers[i]?.param ?? 'input';
    const other = approval.chatId !== chatId ? `approval ${found[0]?.approval.id}` : previous?.chatId && previous.chatId !== chatId ? `previous_response_id ${previous.id}` : undefined;
    if (other || (body.chatId && body.chatId !== chatId)) throw invalid(param, `approval ${approval.id} belongs to chat ${approval.chatId}, not the chat of ${other ?? `chatId ${body.chatId}`}`);
  }
  for (const { item, param } of answers) await approvals.decideCall(caller, item.approval_request_id, { approve: item.approve, reason: item.reason }, param);
  return body.chatId || previous?.chatId || !chatId ? body : { ...body, chatId };
}

/** Whether the input answers MCP servers' questions (`agent_platform:elicitation_response` items). */
export const answersQuestions = (body: Body): boolean => typeof body.input !== 'string' && body.input.some((item) => item.type === 'agent_platform:elicitation_response');

/**
 * Answers the questions of the running response `previous` (`agent_platform:elicitation_response`
 * items, alone in the input), through the approvals' own decision: each must be a question of
 * the caller's, of that response's chat, still waiting (409 once answered). A form's content
 * that does not fit its schema is a 400 naming the item.
 */
export async function answerQuestions(approvals: ApprovalDecider, caller: Caller, body: Body, previous: ResponseRecord | undefined): Promise<void> {
  if (typeof body.input === 'string') return;
  if (!previous) throw invalid('previous_response_id', 'an agent_platform:elicitation_response answers a question of a running response: give that response id');
  const items = body.input.map((item, i) => ({ item, param: `input.${i}` }));
  const other = items.find(({ item }) => item.type !== 'agent_platform:elicitation_response');
  if (other) throw invalid(other.param, "a request that answers an MCP server's question takes only agent_platform:elicitation_response items: the running response goes on");
  const answers = items.flatMap(({ item, param }) => (item.type === 'agent_platform:elicitation_response' ? [{ item, param }] : []));
  for (const { item, param } of answers) {
    const { approval } = await approvals.get(caller, item.elicitation_request_id);
    if (approval.kind !== 'elicitation') throw invalid(`${param}.elicitation_request_id`, `${approval.id} is a tool call to approve: answer it with an mcp_approval_response item`);
    // A question of a chat made with its turn belongs to the project alone (the chat was not stored yet).
    if (approval.projectId !== previous.projectId || (approval.chatId !== null && approval.chatId !== previous.chatId)) {
      throw invalid(`${param}.elicitation_request_id`, `question ${approval.id} is not one of response ${previous.id}`);
    }
  }
  for (const { item, param } of answers) {
    const decision = { decision: item.action, ...(item.content ? { content: item.content } : {}), ...(item.reason ? { reason: item.reason } : {}) };
    try {
      await approvals.decide(caller, item.elicitation_request_id, decision);
    } catch (error) {
      // The decision's own 400 (a form that does not fit) names the item's member.
      if (isPlatformError(error) && error.code === 'invalid_request') {
        const path = error.issues?.[0]?.path ?? [];
        throw invalid([param, ...path].join('.'), error.message.replace(/^[a-z_.]+: /, ''));
      }
      throw error;
    }
  }
}
