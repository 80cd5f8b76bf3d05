import { z } from 'zod';
import { offsetPaging, Timestamp } from './common.js';

export const ApprovalStateSchema = z.enum(['pending', 'approved', 'denied', 'accepted', 'declined', 'cancelled']);

/** A field of an elicitation's form, read from its schema (what a form shows). */
export const FormField = z.object({
  name: z.string(),
  type: z.enum(['string', 'number', 'integer', 'boolean', 'array']),
  title: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean(),
  default: z.unknown().optional().describe('Applied when the answer leaves the field out'),
  format: z.string().optional().describe('string: email, uri, date or date-time'),
  options: z
    .array(z.object({ value: z.string(), label: z.string() }))
    .optional()
    .describe('The choices of an enum (one, or several for an array)'),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  minLength: z.number().int().optional(),
  maxLength: z.number().int().optional(),
  minItems: z.number().int().optional(),
  maxItems: z.number().int().optional(),
});
export type FormField = z.output<typeof FormField>;

export const ApprovalView = z.object({
  id: z.string(),
  kind: z.enum(['tool', 'elicitation']).describe('tool: a tool call to approve or deny; elicitation: an MCP server asks the person to fill in a form'),
  state: ApprovalStateSchema,
  projectId: z.string(),
  chatId: z.string().nullable(),
  callId: z.string().describe("The model's tool call id"),
  tool: z.string().describe('The function the model called (mcp__<server>__<tool> for an MCP tool)'),
  arguments: z.string().describe('Its arguments, as the model wrote them (JSON text)'),
  message: z.string().nullable().describe('elicitation: what the server asks'),
  fields: z.array(FormField).nullable().describe("elicitation: the form's fields, from its schema"),
  schema: z.record(z.string(), z.unknown()).nullable().describe("elicitation: the form's JSON Schema as the server sent it"),
  reason: z.string().nullable(),
  content: z.record(z.string(), z.unknown()).nullable().describe('elicitation accepted: the answer, defaults applied'),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  decidedAt: Timestamp.nullable(),
});
export type ApprovalView = z.output<typeof ApprovalView>;

export const ApprovalResponse = z.object({ success: z.literal(true), approval: ApprovalView });
export type ApprovalResponse = z.output<typeof ApprovalResponse>;

/** A call of one of the client's functions (`tools`), for the client to run. */
export const ClientToolCallOut = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string().describe('The arguments as the model wrote them (JSON text)') }),
});

export const DecisionResponse = ApprovalResponse.extend({
  pending: z.array(z.string()).describe('Approvals of the same pause still waiting for a decision: the run goes on once none is left'),
  tool_calls: z
    .array(ClientToolCallOut)
    .optional()
    .describe(
      "Every approval is decided, but the paused step also called the client's functions and their results are not in yet: the client's next request with them (tool messages, with chatId) continues the turn",
    ),
});
export type DecisionResponse = z.output<typeof DecisionResponse>;

export const ListApprovalsQuery = z.object({
  chatId: z.string().min(1).max(200).optional(),
  state: ApprovalStateSchema.optional(),
  ...offsetPaging,
});
export type ListApprovalsQuery = z.input<typeof ListApprovalsQuery>;

export const ListApprovalsResponse = z.object({
  success: z.literal(true),
  approvals: z.array(ApprovalView),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int(),
});
export type ListApprovalsResponse = z.output<typeof ListApprovalsResponse>;

export const DecideRequest = z
  .object({
    decision: z.enum(['approve', 'deny', 'accept', 'decline', 'cancel']).describe('A tool call: approve or deny. An elicitation: accept (with content), decline or cancel'),
    reason: z.string().max(2000).optional().describe('Why (deny, decline, cancel): given to the model with the denied call'),
    content: z.record(z.string(), z.unknown()).optional().describe("accept: the form's values, checked against its schema (defaults applied to those left out)"),
    stream: z.boolean().optional().describe('The last decision of a paused turn: answer the continued turn as a stream of chat.completion.chunk events'),
    stream_options: z.object({ include_usage: z.boolean().optional() }).strict().optional(),
    streamId: z.string().min(1).max(200).optional().describe('The last decision of a paused turn: record the continued turn in this resumable stream of the chat too'),
  })
  .strict();
export type DecideRequest = z.input<typeof DecideRequest>;
