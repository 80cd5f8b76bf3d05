import { z } from 'zod';
import { offsetPaging, Timestamp } from './common.js';

export const McpTransportSchema = z.enum(['stdio', 'http', 'sse']);

/** Server names become part of the function names the model sees (`mcp__<server>__<tool>`). */
const serverName = z
  .string()
  .regex(/^[a-zA-Z0-9-]+(_[a-zA-Z0-9-]+)*$/, 'must be letters, digits, - and single _ (no __), starting and ending with a letter or digit')
  .max(32);
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2000);
/** HTTP header names (RFC 9110 tokens); values may be secrets (stored encrypted, never shown). */
const headers = z
  .record(
    z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be a header name'),
    z
      .string()
      .max(8000)
      .regex(/^[^\r\n]*$/, 'must not contain line breaks'),
  )
  .refine((h) => Object.keys(h).length <= 20, 'at most 20 headers');
const env = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/, 'must be an environment variable name'), z.string().max(8000))
  .refine((e) => Object.keys(e).length <= 50, 'at most 50 variables');

/** Which of a server's tools wait for a person's approval: all (`true`), none (`false`), or those named. */
export const McpRequiresApproval = z
  .union([z.boolean(), z.array(z.string().min(1).max(200)).max(200)])
  .describe("true: every call of the server's tools waits for a person's approval; a list: calls of the tools named (the server's own tool names); false: none");

/**
 * The setting as requests take it: a list names at least one tool. An empty list would read as
 * "the tools named" and mean none, which is `false`: it is refused rather than guessed.
 */
const RequiresApprovalInput = z
  .union([z.boolean(), z.array(z.string().min(1).max(200)).max(200)])
  .refine((v) => !Array.isArray(v) || v.length > 0, { message: 'name at least one tool (or false for none, true for all)' })
  .describe("true: every call of the server's tools waits for a person's approval; a list (at least one name): calls of the tools named (the server's own tool names); false: none");

export const AddMcpServerRequest = z
  .object({
    projectId: z.string().min(1).max(200),
    name: serverName,
    transport: McpTransportSchema,
    url: httpUrl.optional().describe('http and sse: the endpoint, e.g. http://host:3001/mcp or .../sse'),
    headers: headers.optional().describe('http and sse: headers sent with every request (stored encrypted)'),
    command: z.string().min(1).max(500).optional().describe('stdio: the program to start (only where the operator allows stdio servers)'),
    args: z.array(z.string().max(2000)).max(50).optional().describe('stdio: its arguments'),
    env: env.optional().describe('stdio: environment variables of the program (stored encrypted)'),
    allowSampling: z
      .boolean()
      .optional()
      .describe("Let the server ask the project's model for completions (sampling/createMessage) during its tool calls, within the turn's max_tokens and counted in its usage. Default false"),
    requiresApproval: RequiresApprovalInput.default(false),
  })
  .strict()
  .superRefine((body, ctx) => {
    const remote = body.transport !== 'stdio';
    const need = (field: 'url' | 'command') => ctx.addIssue({ code: 'custom', path: [field], message: `required when transport is ${body.transport}` });
    const refuse = (field: string) => ctx.addIssue({ code: 'custom', path: [field], message: `not used when transport is ${body.transport}` });
    if (remote && !body.url) need('url');
    if (!remote && !body.command) need('command');
    if (remote) for (const field of ['command', 'args', 'env'] as const) if (body[field] !== undefined) refuse(field);
    if (!remote) for (const field of ['url', 'headers'] as const) if (body[field] !== undefined) refuse(field);
  });
export type AddMcpServerRequest = z.input<typeof AddMcpServerRequest>;

export const McpServerView = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  transport: McpTransportSchema,
  url: z.string().nullable().describe('Without any credentials it held'),
  command: z.string().nullable(),
  args: z.array(z.string()),
  headerNames: z.array(z.string()).describe('Names of the stored headers (values are never shown)'),
  envNames: z.array(z.string()).describe('Names of the stored environment variables (values are never shown)'),
  allowSampling: z.boolean().describe("Whether the server may ask the project's model for completions during its tool calls"),
  requiresApproval: McpRequiresApproval,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type McpServerView = z.output<typeof McpServerView>;

export const McpToolView = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});

export const AddMcpServerResponse = z.object({
  success: z.literal(true),
  server: McpServerView,
  tools: z.array(McpToolView).describe('What the server offered when it was added'),
});
export type AddMcpServerResponse = z.output<typeof AddMcpServerResponse>;

export const UpdateMcpServerRequest = z.object({ requiresApproval: RequiresApprovalInput }).strict();
export type UpdateMcpServerRequest = z.input<typeof UpdateMcpServerRequest>;

export const McpServerResponse = z.object({ success: z.literal(true), server: McpServerView });
export type McpServerResponse = z.output<typeof McpServerResponse>;

export const ListMcpServersQuery = z.object({ projectId: z.string().min(1).max(200), ...offsetPaging });
export type ListMcpServersQuery = z.input<typeof ListMcpServersQuery>;

export const ListMcpServersResponse = z.object({
  success: z.literal(true),
  servers: z.array(McpServerView),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int(),
  message: z.string(),
});
export type ListMcpServersResponse = z.output<typeof ListMcpServersResponse>;

export const McpToolsResponse = z.object({
  success: z.literal(true),
  tools: z.array(McpToolView),
  message: z.string(),
});
export type McpToolsResponse = z.output<typeof McpToolsResponse>;

export const DeleteMcpServerResponse = z.object({ success: z.literal(true), message: z.string() });

export const DetectTransportRequest = z.object({ url: httpUrl.describe('The MCP server address to probe') }).strict();
export type DetectTransportRequest = z.input<typeof DetectTransportRequest>;

export const DetectTransportResponse = z.object({
  success: z.boolean(),
  message: z.string(),
  supportedTypes: z.array(McpTransportSchema),
  recommended: McpTransportSchema.nullable().describe('http when it answered, else sse; null when neither did'),
});
export type DetectTransportResponse = z.output<typeof DetectTransportResponse>;
