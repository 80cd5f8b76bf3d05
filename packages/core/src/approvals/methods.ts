import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { type ApprovalResponse, DecideRequest, ListApprovalsQuery, type ListApprovalsResponse } from '../schemas/approvals.js';
import { parseInput } from '../validation.js';
import type { ApprovalsService, DecideResult } from './service.js';

/**
 * Tool calls a person approves and MCP servers' questions: `AgentPlatform`'s public methods of
 * the area (installed on its prototype, src/methods.ts). Each parses what a library caller passes
 * and hands the parsed value to `ApprovalsService`; the server calls the service with the values
 * its routes parsed.
 */
export const approvalsMethods = publicMethods<{ approvals: ApprovalsService }>()({
  /** `GET /api/v1/approvals`: the caller's questions, newest first (`chatId`, `state` filter). */
  async listApprovals(caller: Caller, query: ListApprovalsQuery = {}): Promise<ListApprovalsResponse> {
    return this.approvals.list(caller, parseInput(ListApprovalsQuery, query));
  },

  /** `GET /api/v1/approvals/{id}`. */
  getApproval(caller: Caller, id: string): Promise<ApprovalResponse> {
    return this.approvals.get(caller, id);
  },

  /**
   * `POST /api/v1/approvals/{id}`: approves or denies a tool call, or answers an MCP server's
   * question, once. The last decision of a paused turn answers its continuation (as a chat
   * completion; chunks with `stream: true`).
   */
  async decideApproval(caller: Caller, id: string, input: DecideRequest, signal?: AbortSignal): Promise<DecideResult> {
    return this.approvals.decide(caller, id, parseInput(DecideRequest, input), signal);
  },
});
