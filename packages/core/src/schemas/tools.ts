import { z } from 'zod';
import { offsetPaging, sizedText, Timestamp } from './common.js';

export const ToolLanguageSchema = z.enum(['javascript', 'python']);

/** Tool names are offered to models as function names: OpenAI's pattern. */
export const ToolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -');
const description = z.string().max(2000);
const code = sizedText(200_000).min(1).describe('Defines main(args); see docs/TOOLS.md');
/** A tool's arguments, as offered to models: a JSON Schema of an object. */
export const ToolParameters = z
  .record(z.string(), z.unknown())
  .describe('JSON Schema of the arguments object')
  .refine((schema) => schema.type === undefined || schema.type === 'object', { message: 'must describe an object (type: "object")' });
const exposeOverMcp = z.boolean().describe("Offer the tool to MCP clients of the project's MCP server (/api/v1/projects/{id}/mcp) while it is enabled");
const requiresApproval = z.boolean().describe("The agent's calls of it wait for a person's approval (POST /api/v1/approvals/{id})");
const dependencies = z
  .array(z.string().min(1).max(214))
  .max(20)
  .describe('Packages the code imports: npm specs (name or name@range) for javascript, package names for python; readied when the tool is saved');

export const CreateToolRequest = z
  .object({
    projectId: z.string().min(1).max(200),
    name: ToolName,
    description: description.default(''),
    language: ToolLanguageSchema,
    code,
    parameters: ToolParameters.default({ type: 'object', properties: {} }),
    dependencies: dependencies.default([]),
    enabled: z.boolean().default(true),
    exposeOverMcp: exposeOverMcp.default(false),
    requiresApproval: requiresApproval.default(false),
  })
  .strict();
export type CreateToolRequest = z.input<typeof CreateToolRequest>;

export const ToolListItem = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  language: ToolLanguageSchema,
  enabled: z.boolean(),
  exposeOverMcp: z.boolean(),
  requiresApproval: z.boolean(),
  createdAt: Timestamp,
});

export const ToolFull = ToolListItem.extend({
  projectId: z.string(),
  code: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  dependencies: z.array(z.string()),
  updatedAt: Timestamp,
});
export type ToolFull = z.output<typeof ToolFull>;

export const ToolResponse = z.object({ success: z.literal(true), tool: ToolFull });
export type ToolResponse = z.output<typeof ToolResponse>;

export const ListToolsQuery = z.object({
  projectId: z.string().min(1).max(200),
  ...offsetPaging,
});
export type ListToolsQuery = z.input<typeof ListToolsQuery>;

export const ListToolsResponse = z.object({
  success: z.literal(true),
  tools: z.array(ToolListItem),
  total: z.number().int(),
  hasMore: z.boolean(),
  nextOffset: z.number().int(),
  message: z.string(),
});
export type ListToolsResponse = z.output<typeof ListToolsResponse>;

export const UpdateToolRequest = z.object({
  toolId: z.string().min(1).max(200).describe('Must equal the id of the path'),
  tool: z
    .object({
      name: ToolName.optional(),
      description: description.optional(),
      dependencies: dependencies.optional(),
      code: code.optional(),
      parameters: ToolParameters.optional(),
      exposeOverMcp: exposeOverMcp.optional(),
      requiresApproval: requiresApproval.optional(),
    })
    .strict(),
});
export type UpdateToolRequest = z.input<typeof UpdateToolRequest>;

export const ActivateToolRequest = z.object({
  toolId: z.string().min(1).max(200).describe('Must equal the id of the path'),
  activeState: z.boolean(),
});
export type ActivateToolRequest = z.input<typeof ActivateToolRequest>;

export const RunToolRequest = z.object({ args: z.record(z.string(), z.unknown()).default({}) }).strict();
export type RunToolRequest = z.input<typeof RunToolRequest>;

export const RunToolResponse = z.object({
  success: z.boolean(),
  result: z.unknown().optional(),
  message: z.string().optional().describe("The tool's error when success is false"),
  error: z.object({ kind: z.enum(['timeout', 'out_of_memory', 'thrown', 'invalid_result', 'invalid_code']) }).optional(),
  logs: z.array(z.string()),
  durationMs: z.number(),
});
export type RunToolResponse = z.output<typeof RunToolResponse>;
