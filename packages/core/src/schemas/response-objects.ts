import { z } from 'zod';
import { FormField } from './approvals.js';
import { CompletionSource } from './completion-answers.js';

/**
 * What the responses routes answer: the Open Responses response resource, its output items and
 * streaming events, with this service's extensions (docs/RESPONSES.md, "Extensions"): the
 * agent's own tool calls as output items, knowledge sources as `file_citation` annotations and
 * `sources`, and the `chatId` a project's response is kept in.
 */

const ItemStatus = z.enum(['in_progress', 'completed', 'incomplete']);

/** A knowledge excerpt cited in the text (`[n]`): OpenAI's `file_citation`, the document as the file. */
export const FileCitation = z.object({
  type: z.literal('file_citation'),
  file_id: z.string().describe('The id of the knowledge document'),
  filename: z.string(),
  index: z.number().int().describe('Where in the text the citation [n] ends (characters)'),
  chunk_id: z.string().describe('Extension: the cited chunk'),
  source_index: z.number().int().describe('Extension: n of [n], the source in `sources`'),
});

export const OutputText = z.object({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(FileCitation),
  logprobs: z.array(z.unknown()).describe('Always empty'),
});
export const ReasoningText = z.object({ type: z.literal('reasoning_text'), text: z.string() });

export const MessageOut = z.object({
  type: z.literal('message'),
  id: z.string(),
  status: ItemStatus,
  role: z.literal('assistant'),
  content: z.array(OutputText),
});
export const FunctionCallOut = z.object({
  type: z.literal('function_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string().describe('The arguments as the model wrote them (JSON text)'),
  status: ItemStatus,
});
/** A call of a tool of one of the project's MCP servers, run by the service: OpenAI's `mcp_call`. */
export const McpCallOut = z.object({
  type: z.literal('mcp_call'),
  id: z.string(),
  server_label: z.string().describe('The MCP server, as its tools are offered to the model'),
  name: z.string().describe("The tool's name on its server"),
  arguments: z.string(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  status: z.enum(['in_progress', 'completed', 'failed']),
  call_id: z.string().describe("Extension: the model's id of the call"),
});
/** Extension item: a call of one of the agent's own tools (a project tool), run by the service. */
export const ToolCallOut = z.object({
  type: z.literal('agent_platform:tool_call'),
  id: z.string(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  output: z.string().nullable(),
  error: z.string().nullable(),
  status: z.enum(['in_progress', 'completed', 'failed']),
});
/** A call of the agent that waits for a person's approval (the response ends with it): OpenAI's `mcp_approval_request`. */
export const McpApprovalRequestOut = z.object({
  type: z.literal('mcp_approval_request'),
  id: z.string().describe('The approval id: answer with an mcp_approval_response item, or POST /api/v1/approvals/{id}'),
  server_label: z.string().describe("The MCP server of the tool; 'agent_platform' for the project's own tools"),
  name: z.string().describe("The tool's name (on its server)"),
  arguments: z.string(),
  call_id: z.string().describe("Extension: the model's id of the call"),
  expires_at: z.number().int().describe('Extension: when the request is denied undecided (Unix seconds)'),
});
/** Extension item: an MCP server asks the person during a running tool call (the call waits for the answer). */
export const ElicitationRequestOut = z.object({
  type: z.literal('agent_platform:elicitation_request'),
  id: z.string().describe('The question id: answer with an agent_platform:elicitation_response item (and previous_response_id), or POST /api/v1/approvals/{id}'),
  server_label: z.string().describe('The MCP server that asks'),
  name: z.string().describe('The tool (on its server) whose call asks'),
  call_id: z.string().describe("The model's id of the call that asks"),
  message: z.string().describe('What the server asks'),
  fields: z.array(FormField).describe("The form's fields, from its schema"),
  schema: z.record(z.string(), z.unknown()).describe("The form's JSON Schema as the server sent it"),
  expires_at: z.number().int().describe('When it is declined unanswered (Unix seconds)'),
});
export const ReasoningOut = z.object({
  type: z.literal('reasoning'),
  id: z.string(),
  status: ItemStatus,
  summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string() })).describe('Always empty: the model streams its reasoning as it is (content)'),
  content: z.array(ReasoningText),
});

export const OutputItem = z.discriminatedUnion('type', [MessageOut, FunctionCallOut, McpCallOut, ToolCallOut, McpApprovalRequestOut, ElicitationRequestOut, ReasoningOut]);
export type OutputItem = z.output<typeof OutputItem>;

export const ResponseUsage = z.object({
  input_tokens: z.number().int(),
  input_tokens_details: z.object({ cached_tokens: z.number().int() }),
  output_tokens: z.number().int(),
  output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
  total_tokens: z.number().int(),
});

const TextFormatOut = z.union([
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), name: z.string(), description: z.string().nullable(), schema: z.record(z.string(), z.unknown()), strict: z.boolean() }),
]);

export const FunctionToolOut = z.object({
  type: z.literal('function'),
  name: z.string(),
  description: z.string().nullable(),
  parameters: z.record(z.string(), z.unknown()).nullable(),
  strict: z.boolean().nullable(),
});

export const ResponseStatus = z.enum(['queued', 'in_progress', 'completed', 'failed', 'incomplete', 'cancelled']);
export type ResponseStatus = z.output<typeof ResponseStatus>;

/** The response resource: every member the specification requires, and the extensions. */
export const ResponseResource = z.object({
  id: z.string(),
  object: z.literal('response'),
  created_at: z.number().int(),
  completed_at: z.number().int().nullable(),
  status: ResponseStatus,
  incomplete_details: z.object({ reason: z.string() }).nullable(),
  model: z.string().describe('The project id for an agent, else the model name'),
  previous_response_id: z.string().nullable(),
  instructions: z.string().nullable(),
  output: z.array(OutputItem),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  tools: z.array(FunctionToolOut).describe("The client's functions (the agent's own tools are not listed)"),
  tool_choice: z.union([
    z.enum(['none', 'auto', 'required']),
    z.object({ type: z.literal('function'), name: z.string() }),
    z.object({
      type: z.literal('allowed_tools'),
      mode: z.enum(['none', 'auto', 'required']),
      tools: z.array(z.union([z.object({ type: z.literal('function'), name: z.string() }), z.object({ type: z.literal('mcp'), server_label: z.string(), name: z.string().nullable().optional() })])),
    }),
  ]),
  truncation: z.enum(['auto', 'disabled']),
  parallel_tool_calls: z.boolean(),
  text: z.object({ format: TextFormatOut }),
  top_p: z.number(),
  presence_penalty: z.number(),
  frequency_penalty: z.number(),
  top_logprobs: z.number().int(),
  temperature: z.number(),
  reasoning: z.object({ effort: z.null(), summary: z.string().nullable() }).nullable(),
  usage: ResponseUsage.nullable(),
  max_output_tokens: z.number().int().nullable(),
  max_tool_calls: z.number().int().nullable(),
  store: z.boolean(),
  background: z.boolean(),
  service_tier: z.string(),
  metadata: z.record(z.string(), z.string()),
  safety_identifier: z.string().nullable(),
  prompt_cache_key: z.string().nullable(),
  sources: z.array(CompletionSource).describe('Extension: the knowledge excerpts the agent was given ([n] in the text cites sources[n-1])'),
  chatId: z.string().nullable().describe("Extension: the project's chat that keeps this turn (readable on the chat and completions routes); null for a plain model or store: false"),
});
export type ResponseResource = z.output<typeof ResponseResource>;

/**
 * One streaming event: its `type` (also the SSE `event:`), `sequence_number` from 0, and the
 * members of that type (docs/RESPONSES.md, "Streaming").
 */
export const ResponseStreamEvent = z
  .object({
    type: z.string().describe('response.created, response.in_progress, response.output_item.added, response.content_part.added, response.output_text.delta, ...'),
    sequence_number: z.number().int(),
  })
  .catchall(z.unknown());
export type ResponseStreamEvent = { readonly type: string; readonly sequence_number: number; readonly [key: string]: unknown };

/** A stored input item, with the id the service gave it. */
export const InputItemOut = z
  .object({
    type: z.enum(['message', 'function_call', 'function_call_output', 'mcp_approval_response', 'mcp_call', 'agent_platform:tool_call', 'agent_platform:elicitation_response']),
    id: z.string(),
    status: z.string().optional(),
  })
  .catchall(z.unknown())
  .describe("An input item as sent, with its id (a data: image's URL is not kept: image_url null)");

export const InputItemList = z.object({
  object: z.literal('list'),
  data: z.array(InputItemOut),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});
export type InputItemList = z.output<typeof InputItemList>;

export const DeletedResponse = z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) });
