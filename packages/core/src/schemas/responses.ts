import { z } from 'zod';
import { CHAT_ID_RULE } from '../ids.js';
import { MODEL_PROVIDER_IDS } from '../registries/model-providers.js';
import { sizedText } from './common.js';
import { IMAGE_URL, partError, ResponseSchema, refusedParts, unknownMember, unsupported, unused } from './completion-parts.js';
import { ToolName, ToolParameters } from './tools.js';

/**
 * The Open Responses request (`POST /api/v1/responses`), member by member, decided one by one
 * as the chat completion request is (docs/RESPONSES.md): supported, forwarded to the model,
 * accepted and not used, or refused with a 400 naming it. A member the specification does not
 * define is a 400 too.
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

/** A function the client runs itself: offered to the model beside the agent's own tools. */
export const FunctionTool = z.strictObject(
  {
    type: z.literal('function', { error: 'only function tools are supported (the agent brings its own tools, knowledge and MCP servers)' }),
    name: ToolName,
    description: sizedText(100_000).nullable().optional(),
    parameters: ToolParameters.nullable().optional().describe('JSON Schema of the arguments object (default: no arguments)'),
    strict: z.boolean().nullable().optional().describe('Ask the model to follow `parameters` exactly, where the provider supports it (else 400)'),
  },
  unknownMember('a function tool'),
);

/**
 * `allowed_tools`: the tools the model may call this turn, among the client's functions, the
 * agent's own tools and its MCP servers' tools (`mcp__<server>__<tool>` as a function name, or
 * OpenAI's `{ type: "mcp", server_label, name? }`: every tool of the server when name is left out).
 */
export const AllowedTools = z.strictObject(
  {
    type: z.literal('allowed_tools'),
    mode: z.enum(['none', 'auto', 'required']).default('auto').describe('auto (default): the model may call one of them; required: it must call one (the first model call); none: no tool'),
    tools: z
      .array(
        z.discriminatedUnion(
          'type',
          [
            z.strictObject({ type: z.literal('function'), name: z.string().min(1).max(200) }, unknownMember('an allowed function')),
            z.strictObject({ type: z.literal('mcp'), server_label: z.string().min(1).max(200), name: z.string().min(1).max(200).nullable().optional() }, unknownMember('an allowed MCP tool')),
          ],
          { error: 'must be {"type":"function","name":...} or {"type":"mcp","server_label":...}' },
        ),
      )
      .min(1)
      .max(128),
  },
  unknownMember('an allowed_tools choice'),
);
export type AllowedTools = z.output<typeof AllowedTools>;
const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.discriminatedUnion('type', [z.strictObject({ type: z.literal('function'), name: ToolName }, unknownMember('a named tool choice')), AllowedTools], {
    error: 'must be none, auto, required, {"type":"function","name":...} or {"type":"allowed_tools","tools":[...]}',
  }),
]);

/** `text.format`: free text, any JSON object, or a JSON value following a schema (checked as on chat completions). */
export const TextFormat = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('text') }),
    z.strictObject({ type: z.literal('json_object') }),
    z.strictObject({
      type: z.literal('json_schema'),
      name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, _ or -' }),
      description: sizedText(10_000).nullable().optional(),
      schema: ResponseSchema,
      strict: z.boolean().nullable().optional().describe('Ask the provider to follow the schema exactly where it can; the answer is checked against it either way'),
    }),
  ],
  { error: 'must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema","name":...,"schema":{...}}' },
);
export type TextFormat = z.output<typeof TextFormat>;

export const Metadata = z
  .record(z.string().max(64), z.string().max(512))
  .refine((m) => Object.keys(m).length <= 16, { message: 'at most 16 keys' })
  .describe('Up to 16 keys (64 characters) and values (512 characters), kept with the response');

export const CreateResponseRequest = z
  .strictObject(
    {
      model: z.string().min(1).max(200).nullable().optional().describe('A project id (the agent), or a model name of `provider`; default: the service default'),
      input: z
        .union([text, z.array(InputItem).min(1, 'at least one item is required').max(1000)])
        .describe('A user message as a string, or input items: messages (input_text, input_image), function_call and function_call_output items'),
      instructions: sizedText(1_000_000).nullable().optional().describe("A system message for this response, after the agent's own instructions; not carried to later responses"),
      previous_response_id: z.string().min(1).max(200).nullable().optional().describe('Continue from this stored response: its input and output come first'),
      tools: z.array(FunctionTool).max(128).nullable().optional().describe("The client's functions: offered beside the agent's tools; a call of one is a function_call item for the client to run"),
      tool_choice: ToolChoice.nullable()
        .optional()
        .describe("Over every tool offered (the agent's and `tools`): none, auto (default), required, or a named function of `tools`; required and a named function bind the first model call"),
      metadata: Metadata.nullable().optional(),
      text: z
        .strictObject(
          {
            format: TextFormat.nullable().optional(),
            verbosity: unsupported("the model's settings are not taken from the request"),
          },
          unknownMember('text'),
        )
        .nullable()
        .optional(),
      temperature: z.number().min(0).max(2).nullable().optional(),
      top_p: z.number().min(0).max(1).nullable().optional().describe('Forwarded to the model'),
      presence_penalty: z.number().min(-2).max(2).nullable().optional().describe('Forwarded to the model'),
      frequency_penalty: z.number().min(-2).max(2).nullable().optional().describe('Forwarded to the model'),
      parallel_tool_calls: z.boolean().nullable().optional().describe('false: at most one tool call per model call, where the provider supports it (else 400)'),
      stream: z.boolean().nullable().optional(),
      stream_options: z
        .strictObject({ include_obfuscation: unused(z.boolean(), 'events carry no obfuscation padding') }, unknownMember('stream_options'))
        .nullable()
        .optional(),
      background: z
        .boolean()
        .nullable()
        .optional()
        .describe(
          'Run in the background: answer at once with the queued response (or with stream, stream it; the client going away does not stop it); read with GET (?stream=true replays its events), stop with cancel',
        ),
      max_output_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
      max_tool_calls: unsupported('the agent runs at most its step limit of model calls'),
      reasoning: z
        .strictObject(
          {
            effort: unsupported("the model's settings are not taken from the request (a project's providerOptions set them)"),
            summary: unused(z.enum(['auto', 'concise', 'detailed']), "the model's reasoning is shown as it streams it, when it does"),
            generate_summary: unused(z.enum(['auto', 'concise', 'detailed']), "the model's reasoning is shown as it streams it, when it does"),
          },
          unknownMember('reasoning'),
        )
        .nullable()
        .optional(),
      store: z.boolean().nullable().optional().describe("Default true: keep the response (and a project's turn in its chat) for GET and previous_response_id"),
      include: z
        .array(z.enum(['reasoning.encrypted_content', 'message.output_text.logprobs']))
        .max(10)
        .nullable()
        .optional()
        .describe('Accepted and not used: nothing more is included'),
      truncation: z
        .enum(['auto', 'disabled'])
        .nullable()
        .optional()
        .describe("Accepted: a project's chat history is always fitted to the history budget, oldest turns first out (auto); a chain of responses of a plain model is sent whole"),
      service_tier: z.enum(['auto', 'default'], { error: 'only "auto" and "default" are supported' }).nullable().optional(),
      safety_identifier: unused(z.string().max(64), "an end-user identifier for OpenAI's abuse monitoring"),
      user: unused(z.string().max(1000), "an end-user identifier for OpenAI's abuse monitoring"),
      prompt_cache_key: unused(z.string().max(64), "a prompt cache hint for OpenAI's servers"),
      prompt_cache_retention: unused(z.string().max(100), "a prompt cache hint for OpenAI's servers"),
      top_logprobs: unsupported('answers carry no log probabilities'),
      conversation: unsupported('continue with previous_response_id (or chatId)'),
      prompt: unsupported('no stored prompts: give instructions and input'),
      chatId: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe(
          `Extension: continue (or start) this chat of the project named by "model": earlier messages are sent, the new ones stored. An id the caller has no chat of makes a new chat, and must then be ${CHAT_ID_RULE}`,
        ),
      provider: z.enum(MODEL_PROVIDER_IDS).optional().describe('Extension: provider of `model` when it is not a project'),
      provider_options: z.record(z.string(), z.unknown()).optional().describe("Extension: the provider's own options for this request, over the project's providerOptions"),
    },
    unknownMember("the Open Responses request or this service's extensions (chatId, provider, provider_options)"),
  )
  .superRefine((body, ctx) => {
    const names = new Set<string>();
    body.tools?.forEach((tool, i) => {
      if (names.has(tool.name)) ctx.addIssue({ code: 'custom', path: ['tools', i, 'name'], message: `duplicate name "${tool.name}"` });
      names.add(tool.name);
    });
    const choice = body.tool_choice;
    if (choice && typeof choice === 'object' && choice.type === 'function' && !names.has(choice.name)) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice', 'name'], message: `"${choice.name}" is not one of the request's tools` });
    }
    if (body.background && body.store === false) ctx.addIssue({ code: 'custom', path: ['background'], message: 'needs store: a background response is read back by its id' });
    if (body.previous_response_id && body.chatId) ctx.addIssue({ code: 'custom', path: ['chatId'], message: 'give previous_response_id or chatId, not both' });
  });
export type CreateResponseRequest = z.input<typeof CreateResponseRequest>;

export const ResponseIdParam = z.object({ id: z.string().min(1).max(200) });

/** `GET /api/v1/responses/{id}/input_items`: a page of the response's input items. */
export const InputItemsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc').describe('desc (default): newest first'),
  after: z.string().min(1).max(200).optional().describe('The id of the last item of the previous page'),
  include: z
    .union([z.string().max(100), z.array(z.string().max(100)).max(10)])
    .optional()
    .describe('Accepted and not used'),
});
export type InputItemsQuery = z.input<typeof InputItemsQuery>;

const QueryList = z
  .union([z.string().max(100), z.array(z.string().max(100)).max(10)])
  .optional()
  .describe('Accepted and not used');

/** `GET /api/v1/responses/{id}`'s query: the resource, or (`stream=true`) its events replayed, after `starting_after`. */
export const GetResponseQuery = z.strictObject({
  include: QueryList,
  exclude: QueryList,
  stream: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().describe("true: the response's events as a stream (recorded, or made from the stored response), live until it ends"),
  starting_after: z.coerce.number({ error: 'must be a sequence number' }).int().min(0).optional().describe('With stream=true: only the events after this sequence_number'),
  include_obfuscation: z.enum(['true', 'false']).optional().describe('Accepted and not used: events carry no obfuscation padding'),
});
export type GetResponseQuery = z.input<typeof GetResponseQuery>;
