import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, queryInt, Timestamp } from './common.js';

export const AuditOutcomeSchema = z
  .enum(['pending', 'succeeded', 'failed'])
  .describe(
    'succeeded or failed: what the request answered. pending: the event was written before the change and nothing settled it since: the request is still running, or its process stopped before it answered (the change may or may not have happened)',
  );

export const AuditEventView = z.object({
  id: z.string(),
  at: Timestamp.describe('When the request was received'),
  workspaceId: z.string().nullable().describe("The workspace changed; null for an operator's action on the server itself (the local model runtime)"),
  userId: z.string().describe('Who made the change'),
  keyId: z.string().nullable().describe('The API key the request came with; null for a change made with the agent-platform keys command'),
  action: z.string().describe('create, update, delete, or a named action: approve, deny, accept, decline, cancel, test, reindex, upload, key.create, key.revoke, ...'),
  resource: z.string().describe('The kind of resource: project, chat, stream, tool, mcp-server, credential, document, knowledge-settings, approval, response, key, local-model, ...'),
  resourceId: z.string().nullable().describe("The resource's id; null where the change names none (an upload of several files)"),
  fields: z.array(z.string()).describe('Names of the fields the request set (never their values)'),
  outcome: AuditOutcomeSchema,
  address: z.string().nullable().describe("The address the request came from (its connection's peer); null for the agent-platform keys command"),
  userAgent: z.string().nullable().describe("The request's User-Agent, at most 256 characters"),
});
export type AuditEventView = z.output<typeof AuditEventView>;

const id = () => z.string().min(1).max(200);

export const ListAuditQuery = z.object({
  workspaceId: id().optional().describe("The workspace whose events to list; default the caller's personal workspace"),
  userId: id().optional().describe('Only changes made by this user'),
  resource: z.string().min(1).max(100).optional().describe('Only changes of this kind of resource (project, credential, ...)'),
  resourceId: id().optional().describe('Only changes of this resource'),
  action: z.string().min(1).max(100).optional().describe('Only this action (create, update, delete, key.revoke, ...)'),
  outcome: AuditOutcomeSchema.optional(),
  from: z.iso.datetime({ offset: true }).optional().describe('Only events at or after this instant (ISO 8601)'),
  to: z.iso.datetime({ offset: true }).optional().describe('Only events before this instant (ISO 8601)'),
  limit: queryInt().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
  cursor: z.string().max(500).optional().describe('nextCursor of the previous page'),
});
export type ListAuditQuery = z.input<typeof ListAuditQuery>;

export const ListAuditResponse = z.object({
  success: z.literal(true),
  events: z.array(AuditEventView).describe('Newest first'),
  hasMore: z.boolean(),
  nextCursor: z.string().nullable().describe('Cursor of the next page (the cursor query parameter); null when there is none'),
});
export type ListAuditResponse = z.output<typeof ListAuditResponse>;
