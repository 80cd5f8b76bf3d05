import { ApprovalResponse, ChatCompletionChunk, ChatCompletionResponse, DecideRequest, DecisionResponse, IdParam, ListApprovalsQuery, ListApprovalsResponse } from '@agent-platform/core/schemas';
import { z } from 'zod';
import { type ApiRoute, route } from '../route.js';

/** Tool calls a person approves and MCP servers' questions: their routes, in the order of the table (routes/index.ts). */
export const approvalsRoutes: readonly ApiRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/approvals',
    summary: "List the caller's approvals and questions, newest first (chatId and state narrow it: state=pending for those waiting)",
    tag: 'Approvals',
    query: ListApprovalsQuery,
    response: ListApprovalsResponse,
    handler: (p, i) => p.approvals.list(i.caller, i.query),
  }),
  route({
    method: 'GET',
    path: '/api/v1/approvals/{id}',
    summary: 'Get an approval or question (one left undecided past its expiry shows as denied, or declined)',
    tag: 'Approvals',
    params: IdParam,
    response: ApprovalResponse,
    handler: (p, i) => p.approvals.get(i.caller, i.params.id),
  }),
  route({
    method: 'POST',
    path: '/api/v1/approvals/{id}',
    summary:
      "Decide a tool call (approve or deny, with a reason) or answer an MCP server's question (accept with content, decline, cancel), once (409 after). The last decision of a paused turn continues it on this instance and answers the continuation as a chat completion (chunks with stream: true); any other decision answers the approval and what its pause still waits for",
    tag: 'Approvals',
    params: IdParam,
    body: DecideRequest,
    response: z.union([ChatCompletionResponse, DecisionResponse]),
    events: ChatCompletionChunk,
    kind: 'openai',
    errors: ['conflict', 'rate_limited', 'upstream_error', 'unavailable', 'timeout'],
    audit: { resource: 'approval', action: (i: { body: { decision: string } }) => i.body.decision, id: 'params.id' },
    handler: (p, i) => p.approvals.decide(i.caller, i.params.id, i.body, i.signal),
  }),
];
