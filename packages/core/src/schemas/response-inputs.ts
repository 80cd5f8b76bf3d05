import { z } from 'zod';
import { sizedText } from './common.js';
import { IMAGE_URL, partError, refusedParts, unknownMember, unsupported, unused } from './completion-parts.js';
import { ToolName } from './tools.js';

/**
 * The input items of an Open Responses request (`input`), member by member as the request is
 * (docs/RESPONSES.md): messages and their parts, function calls and their outputs, answers to
 * an earlier response's requests, and that response's output items sent back.
 */

const text = sizedText(10_485_760);

const ItemId = z.string().min(1).max(200).nullable().optional().describe('Accepted and not used: the service gives input items ids of its own');
const ItemStatus = z.enum(['in_progress', 'completed', 'incomplete']).nullable().optional();
/** `type: "message"`, which the specification lets a message leave out. */
const MessageType = z.literal('message').optional();

const InputText = z.strictObject({ type: z.literal('input_text'), text }, unknownMember('an input_text part'));
const InputImage = z.strictObject(
  {
    type: z.literal('input_image'),
    image_url: IMAGE_URL,
    detail: z.enum(['auto', 'low', 'high']).nullable().optional().describe('Accepted and not used: the provider decides the detail'),
    file_id: unsupported('no files API: give image_url (https: or a data: URL)'),
  },
  unknownMember('an input_image part'),
);
/**
 * A file given to the model as text: read by the knowledge base's document readers (txt, md,
 * html, pdf, docx), under their limits, and put into the user message.
 */
export const InputFile = z
  .strictObject(
    {
      type: z.literal('input_file'),
      filename: z.string().min(1).max(255).nullable().optional().describe("The file name (its extension tells the type, else the data: URL's media type)"),
      file_data: z.string().max(33_554_432).nullable().optional().describe('The file as a data: URL (data:application/pdf;base64,...), or its bare base64 with filename'),
      file_url: z.string().max(8192).nullable().optional().describe('An https: or http: URL the service fetches (the outbound policy applies)'),
      file_id: z.string().min(1).max(200).nullable().optional().describe('A knowledge document of the project named by model (the file_id of a file_citation): its text'),
    },
    unknownMember('an input_file part'),
  )
  .superRefine((part, ctx) => {
    const given = (['file_data', 'file_url', 'file_id'] as const).filter((k) => part[k] !== undefined && part[k] !== null);
    if (given.length !== 1) ctx.addIssue({ code: 'custom', path: [], message: 'give exactly one of file_data, file_url or file_id' });
  });
const UserParts = z
  .array(
    z.discriminatedUnion(
      'type',
      [InputText, InputImage, InputFile, refusedParts(['input_video', 'input_audio'], 'here: the model is given text, images and files (as text) only')],
      partError('"input_text", "input_image" or "input_file"'),
    ),
  )
  .max(100);
/** Text only (system and developer messages, function outputs): a part of another type is a 400 saying so. */
const TextParts = z.array(z.strictObject({ type: z.literal('input_text', { error: 'only "input_text" parts are taken here' }), text }, unknownMember('an input_text part'))).max(100);
const OutputText = z.strictObject(
  {
    type: z.literal('output_text'),
    text,
    annotations: z.array(z.unknown()).max(1000).optional().describe('Accepted and not used: the model is given the text'),
    logprobs: z.array(z.unknown()).max(100_000).optional().describe('Accepted and not used'),
  },
  unknownMember('an output_text part'),
);
const Refusal = z.strictObject({ type: z.literal('refusal'), refusal: text }, unknownMember('a refusal part'));
const AssistantParts = z.array(z.discriminatedUnion('type', [OutputText, Refusal], partError('"output_text" or "refusal"'))).max(100);

const messageOf = <R extends string, C extends z.ZodType>(role: R, content: C, extra: Record<string, z.ZodType> = {}) =>
  z.strictObject({ type: MessageType, role: z.literal(role), content: z.union([text, content]), id: ItemId, status: ItemStatus, ...extra }, unknownMember(`a ${role} message`));

/** A message of the input: the user's (text and images), the system's or developer's (text), or an earlier answer. */
export const MessageItem = z.discriminatedUnion(
  'role',
  [
    messageOf('user', UserParts),
    messageOf('system', TextParts),
    messageOf('developer', TextParts),
    messageOf('assistant', AssistantParts, { phase: unused(z.enum(['commentary', 'final_answer']), 'the model is given the text') }),
  ],
  { error: 'must be user, system, developer or assistant' },
);

const CallId = z.string().min(1).max(200);
export const FunctionCallItem = z.strictObject(
  {
    type: z.literal('function_call'),
    call_id: CallId,
    name: ToolName,
    arguments: text,
    id: ItemId,
    status: ItemStatus,
  },
  unknownMember('a function_call item'),
);
export const FunctionCallOutputItem = z.strictObject(
  {
    type: z.literal('function_call_output'),
    call_id: CallId,
    output: z.union([text, TextParts]).describe('The result: text, or input_text parts (joined)'),
    id: ItemId,
    status: ItemStatus,
  },
  unknownMember('a function_call_output item'),
);
/** A person's decision on an `mcp_approval_request` of an earlier response: decides that approval and continues its turn. */
export const McpApprovalResponseItem = z.strictObject(
  {
    type: z.literal('mcp_approval_response'),
    approval_request_id: z.string().min(1).max(200).describe('The id of the mcp_approval_request item (the approval id)'),
    approve: z.boolean(),
    reason: z.string().max(2000).nullable().optional().describe("Why: a denial's reason is given to the model as the call's result"),
    id: ItemId,
  },
  unknownMember('an mcp_approval_response item'),
);
const OutputStatus = z.enum(['in_progress', 'completed', 'failed', 'incomplete']).nullable().optional();
/** A server-run call of an earlier response sent back (`response.output` as input): given to the model as the call and its result. */
export const McpCallItem = z.strictObject(
  {
    type: z.literal('mcp_call'),
    id: ItemId,
    server_label: z.string().min(1).max(200),
    name: z.string().min(1).max(200),
    arguments: text,
    output: text.nullable().optional(),
    error: z
      .union([text, z.record(z.string(), z.unknown())])
      .nullable()
      .optional(),
    status: OutputStatus,
    call_id: CallId.nullable().optional(),
    approval_request_id: z.string().max(200).nullable().optional().describe('Accepted and not used'),
  },
  unknownMember('an mcp_call item'),
);
/** A call of a project tool of an earlier response, sent back: given to the model as the call and its result. */
export const ToolCallItem = z.strictObject(
  {
    type: z.literal('agent_platform:tool_call'),
    id: ItemId,
    call_id: CallId,
    name: z.string().min(1).max(200),
    arguments: text,
    output: text.nullable().optional(),
    error: text.nullable().optional(),
    status: OutputStatus,
  },
  unknownMember('an agent_platform:tool_call item'),
);
/** Requests of an earlier response sent back: accepted and not given to the model (answer them with their response items). */
const RequestItem = z
  .object({ type: z.enum(['mcp_approval_request', 'agent_platform:elicitation_request']) })
  .passthrough()
  .describe('Accepted and not used: a request of an earlier response (answer it with mcp_approval_response or agent_platform:elicitation_response)');
/** The answer to an MCP server's question (`agent_platform:elicitation_request`) of a running response. */
export const ElicitationResponseItem = z.strictObject(
  {
    type: z.literal('agent_platform:elicitation_response'),
    elicitation_request_id: z.string().min(1).max(200).describe('The id of the agent_platform:elicitation_request item (the question id)'),
    action: z.enum(['accept', 'decline', 'cancel']),
    content: z.record(z.string(), z.unknown()).nullable().optional().describe("accept: the form's values, checked against its schema (defaults applied)"),
    reason: z.string().max(2000).nullable().optional(),
    id: ItemId,
  },
  unknownMember('an agent_platform:elicitation_response item'),
);
/** A reasoning item sent back: accepted and not given to the model (reasoning is never replayed). */
const ReasoningItem = z
  .object({ type: z.literal('reasoning') })
  .passthrough()
  .describe("Accepted and not used: a model's earlier reasoning is not given back to it");

/** One input item. */
export const InputItem = z.discriminatedUnion(
  'type',
  [
    MessageItem,
    FunctionCallItem,
    FunctionCallOutputItem,
    McpApprovalResponseItem,
    ReasoningItem,
    McpCallItem,
    ToolCallItem,
    RequestItem,
    ElicitationResponseItem,
    z
      .object({ type: z.enum(['item_reference', 'compaction']) })
      .superRefine((item, ctx) => {
        ctx.addIssue({ code: 'custom', path: ['type'], message: `"${item.type}" items are not supported: send the item itself, or continue with previous_response_id` });
      })
      .describe('Not supported (400): send the item itself, or continue with previous_response_id'),
  ],
  {
    error:
      'must be a message, function_call, function_call_output, mcp_approval_response, agent_platform:elicitation_response item, or an output item of an earlier response (reasoning, mcp_call, agent_platform:tool_call, mcp_approval_request, agent_platform:elicitation_request)',
  },
);
export type InputItem = z.output<typeof InputItem>;
