import { formFields } from '../agent/form-fields.js';
import type { ElicitationAnswer, PendingApproval } from '../agent/questions.js';
import type { ApprovalView } from '../schemas/approvals.js';
import type { ApprovalRecord } from '../storage/types.js';

/** How approvals and questions are shown: to clients (`ApprovalView`), to a paused turn's answer, to a waiting tool. */

export const iso = (d: Date) => d.toISOString();

export function toView(r: ApprovalRecord): ApprovalView {
  return {
    id: r.id,
    kind: r.kind,
    state: r.state,
    projectId: r.projectId,
    chatId: r.chatId,
    callId: r.callId,
    tool: r.tool,
    arguments: r.arguments,
    message: r.message,
    fields: r.schema ? formFields(r.schema) : null,
    schema: r.schema,
    reason: r.reason,
    content: r.content,
    createdAt: iso(r.createdAt),
    expiresAt: iso(r.expiresAt),
    decidedAt: r.decidedAt ? iso(r.decidedAt) : null,
  };
}

/** A stored tool call's approval as a paused turn announces it. */
export const pendingOf = (r: ApprovalRecord): PendingApproval => ({ id: r.id, chatId: r.chatId ?? '', callId: r.callId, tool: r.tool, arguments: r.arguments, expiresAt: iso(r.expiresAt) });

export const answerOf = (r: ApprovalRecord): ElicitationAnswer =>
  r.state === 'accepted' ? { action: 'accept', content: r.content ?? {} } : { action: r.state === 'cancelled' ? 'cancel' : 'decline' };
