import { z } from 'zod';
import { CHAT_ID_RULE } from '../ids.js';
import { MODEL_PROVIDER_IDS } from '../registries/model-providers.js';
import { sizedText } from './common.js';
import { ImagePart, partError, ResponseFormatIn, refusedParts, unknownMember, unsupported, unused } from './completion-parts.js';
import { ToolName, ToolParameters } from './tools.js';

const text = sizedText(1_000_000);

/**
 * OpenAI's chat completion request, member by member, decided one by one (docs/AGENT.md, "What
 * the request may carry"): supported; forwarded to the model; accepted and not used because it
 * cannot change the answer (identifiers and hints for OpenAI's own services); or refused. A
 * refused member, a value this service cannot honour, and a member OpenAI does not define are
 * 400 naming it, never dropped without a word: an OpenAI client does not retry a 400.
 */

/** An object OpenAI defines whose members do not matter here (it is not used). */
const anyObject = z.record(z.string(), z.unknown());

const TextPart = z.strictObject(
  {
    type: z.literal('text'),
    text,
    prompt_cache_breakpoint: unused(anyObject, "a prompt cache hint for OpenAI's servers"),
  },
  unknownMember('a text content part'),
);
const RefusalPart = z.strictObject({ type: z.literal('refusal'), refusal: text }, unknownMember('a refusal content part'));
/** OpenAI's other parts: named in the document, refused with a 400 that says so (images only in user messages). */
const RefusedPart = refusedParts(['image_url', 'input_audio', 'file'], 'in this message: images are taken in user messages only, audio and files nowhere');
const UserRefusedPart = refusedParts(['input_audio', 'file'], 'here: the model is given text and images only');

/** OpenAI's content: a string, or text parts (other parts are refused, not dropped). */
const Content = z.union([text, z.array(z.discriminatedUnion('type', [TextPart, RefusedPart], partError('"text"'))).max(100)]);
/** A user's content may hold images too. */
const UserContent = z.union([text, z.array(z.discriminatedUnion('type', [TextPart, ImagePart, UserRefusedPart], partError('"text" or "image_url"'))).max(100)]);
/** An assistant's content may hold its refusal too (as OpenAI answered it). */
const AssistantContent = z.union([text, z.array(z.discriminatedUnion('type', [TextPart, RefusalPart, RefusedPart], partError('"text" or "refusal"'))).max(100)]);

const ToolCallIn = z.strictObject(
  {
    id: z.string().min(1).max(200),
    type: z.literal('function', { error: 'only function tool calls are supported' }).optional(),
    function: z.strictObject({ name: z.string().min(1).max(200), arguments: sizedText(1_000_000) }, unknownMember('a function call')),
  },
  unknownMember('a tool call'),
);

/** A participant's name (the spec's optional `name`), passed to the model as OpenAI defines it. */
const ParticipantName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: 'must be 1 to 64 letters, digits, _ or - (as OpenAI takes it)' })
  .optional()
  .describe("The participant's name, given to the model to tell participants of one role apart (not stored with a chat's messages)");

export const CompletionMessage = z.discriminatedUnion(
  'role',
  [
    z.strictObject({ role: z.literal('system'), content: Content, name: ParticipantName }, unknownMember('a system message')),
    z.strictObject({ role: z.literal('developer'), content: Content, name: ParticipantName }, unknownMember('a developer message')),
    z.strictObject({ role: z.literal('user'), content: UserContent, name: ParticipantName }, unknownMember('a user message')),
    z.strictObject(
      {
        role: z.literal('assistant'),
        content: AssistantContent.nullable().optional(),
        tool_calls: z.array(ToolCallIn).max(128).optional(),
        refusal: text.nullable().optional().describe('A refusal the model gave; used as the text when there is no content'),
        name: ParticipantName,
        audio: unsupported('answers are text only'),
        function_call: unsupported('the deprecated form of tool calls: use tool_calls'),
      },
      unknownMember('an assistant message'),
    ),
    z.strictObject({ role: z.literal('tool'), content: Content, tool_call_id: z.string().min(1).max(200) }, unknownMember('a tool message')),
  ],
  { error: 'must be system, developer, user, assistant or tool (the deprecated function messages are not supported: use tool)' },
);
export type CompletionMessage = z.input<typeof CompletionMessage>;

/** A function the client runs itself (`tools`): offered to the model beside the agent's own tools. */
export const ClientTool = z.strictObject(
  {
    type: z.literal('function', { error: 'only function tools are supported' }),
    function: z.strictObject(
      {
        name: ToolName,
        description: sizedText(100_000).optional(),
        parameters: ToolParameters.optional().describe('JSON Schema of the arguments object (default: no arguments)'),
        strict: z.boolean().nullable().optional().describe('Ask the model to follow `parameters` exactly, where the provider supports it (else 400)'),
      },
      unknownMember('a function definition'),
    ),
  },
  unknownMember('a tool'),
);

export const ToolChoiceIn = z.union([
  z.enum(['none', 'auto', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: ToolName }, unknownMember('a named tool choice')) }, unknownMember('a tool choice')),
]);

/**
 * The body of both chat completion routes: OpenAI's request plus `chatId`, `streamId` and
 * `provider`. Every member OpenAI defines is listed with what it does here; any other member is
 * a 400.
 */
export const ChatCompletionRequest = z
  .strictObject(
    {
      model: z.string().min(1).max(200).optional().describe('A project id (the agent), or a model name of `provider`; default: the service default'),
      messages: z.array(CompletionMessage).min(1, 'at least one message is required').max(1000),
      stream: z.boolean().nullable().optional(),
      stream_options: z
        .strictObject(
          {
            include_usage: z.boolean().nullable().optional(),
            include_obfuscation: unused(z.boolean(), 'streams carry no obfuscation padding'),
          },
          unknownMember('stream_options'),
        )
        .nullable()
        .optional(),
      temperature: z.number().min(0).max(2).nullable().optional(),
      max_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
      max_completion_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
      top_p: z.number().min(0).max(1).nullable().optional().describe('Forwarded to the model'),
      frequency_penalty: z.number().min(-2).max(2).nullable().optional().describe('Forwarded to the model'),
      presence_penalty: z.number().min(-2).max(2).nullable().optional().describe('Forwarded to the model'),
      seed: z.number().int().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullable().optional().describe('Forwarded to the model'),
      stop: z
        .union([z.string().min(1).max(1000), z.array(z.string().min(1).max(1000)).max(4)])
        .nullish()
        .describe('Forwarded to the model (up to 4 sequences)'),
      tools: z.array(ClientTool).max(128).optional().describe("The client's functions: offered beside the agent's tools; a call of one ends the answer with tool_calls"),
      tool_choice: ToolChoiceIn.optional().describe(
        "Over every tool offered (the agent's and `tools`): `none`, `auto` (default), `required`, or a named function of `tools`; `required` and a named function bind the first model call",
      ),
      parallel_tool_calls: z.boolean().nullable().optional().describe('false: at most one tool call per model call, where the provider supports it (else 400)'),
      n: z.literal(1, { error: 'only 1 is supported (one answer per request)' }).nullable().optional(),
      response_format: ResponseFormatIn.nullable().optional().describe('text, json_object or json_schema: the answer is checked against it (docs/AGENT.md, "Structured outputs")'),
      logprobs: z.literal(false, { error: 'not supported: answers carry no log probabilities' }).nullable().optional(),
      top_logprobs: unsupported('answers carry no log probabilities'),
      logit_bias: z
        .strictObject({}, { error: (issue) => (issue.code === 'unrecognized_keys' ? 'not supported: token biases are not passed to the model (token ids differ between models)' : undefined) })
        .nullable()
        .optional(),
      audio: unsupported('answers are text only'),
      modalities: z
        .array(z.literal('text', { error: 'only "text" is supported: answers are text only' }))
        .max(10)
        .nullable()
        .optional(),
      functions: unsupported('the deprecated form of tools: use tools'),
      function_call: unsupported('the deprecated form of tool_choice: use tool_choice'),
      reasoning_effort: unsupported("the model's settings are not taken from the request"),
      verbosity: unsupported("the model's settings are not taken from the request"),
      web_search_options: unsupported('the agent does not search the web (give it a tool or knowledge)'),
      moderation: unsupported('no moderation is run'),
      store: z.literal(false, { error: 'not supported: completions are not kept for retrieval by id (a chat, chatId, keeps a conversation)' }).nullable().optional(),
      service_tier: z.enum(['auto', 'default'], { error: 'only "auto" and "default" are supported' }).nullable().optional(),
      user: unused(z.string().max(1000), "an end-user identifier for OpenAI's abuse monitoring"),
      safety_identifier: unused(z.string().max(1000), "an end-user identifier for OpenAI's abuse monitoring"),
      prompt_cache_key: unused(z.string().max(1000), "a prompt cache hint for OpenAI's servers"),
      prompt_cache_retention: unused(z.string().max(100), "a prompt cache hint for OpenAI's servers"),
      prompt_cache_options: unused(anyObject, "a prompt cache hint for OpenAI's servers"),
      metadata: unused(z.record(z.string().max(64), z.string().max(512)), 'tags of stored completions (none are stored)'),
      prediction: unused(anyObject, 'a latency hint: the answer is the same without it'),
      chatId: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe(
          `Keeps the conversation: earlier messages are sent, the new ones stored. Chat ids are the caller's own (another user's chat of the same id is a different chat); on /api/v1/ai/chat/completions an id the caller has no chat of makes a new chat when "model" is one of their projects, and must then be ${CHAT_ID_RULE}`,
        ),
      streamId: z.string().min(1).max(200).optional().describe('Also write the events to this stream of the chat (resumable)'),
      provider: z.enum(MODEL_PROVIDER_IDS).optional().describe('Provider of `model` when it is not a project'),
      provider_options: anyObject.optional().describe("The provider's own options for this request, over the project's providerOptions (a key the provider does not take is a 400 naming it)"),
    },
    unknownMember("OpenAI's chat completion request or this service's extensions (chatId, streamId, provider, provider_options)"),
  )
  .superRefine((body, ctx) => {
    const names = new Set<string>();
    body.tools?.forEach((tool, i) => {
      if (names.has(tool.function.name)) ctx.addIssue({ code: 'custom', path: ['tools', i, 'function', 'name'], message: `duplicate name "${tool.function.name}"` });
      names.add(tool.function.name);
    });
    const choice = body.tool_choice;
    if (typeof choice === 'object' && !names.has(choice.function.name)) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice', 'function', 'name'], message: `"${choice.function.name}" is not one of the request's tools` });
    }
  });
export type ChatCompletionRequest = z.input<typeof ChatCompletionRequest>;
