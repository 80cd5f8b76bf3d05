import { z } from 'zod';
import { CHAT_ID_RULE } from '../ids.js';
import { MODEL_PROVIDER_IDS } from '../registries/model-providers.js';
import { sizedText } from './common.js';
import { ResponseSchema, unknownMember, unsupported, unused } from './completion-parts.js';
import { InputItem } from './response-inputs.js';
import { ToolName, ToolParameters } from './tools.js';

/**
 * The Open Responses request (`POST /api/v1/responses`), member by member, decided one by one
 * as the chat completion request is (docs/RESPONSES.md): supported, forwarded to the model,
 * accepted and not used, or refused with a 400 naming it. A member the specification does not
 * define is a 400 too.
 */

const text = sizedText(10_485_760);

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
