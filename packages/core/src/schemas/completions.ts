import { z } from 'zod';
import { sizedText } from './common.js';

const text = sizedText(1_000_000);
/** OpenAI's content: a string, or parts of which the text parts are used. */
const Content = z.union([
  text,
  z.array(z.looseObject({ type: z.string(), text: text.optional() })).max(100),
]);

const ToolCallIn = z.looseObject({
  id: z.string().min(1).max(200),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().min(1).max(200), arguments: sizedText(1_000_000) }),
});

export const CompletionMessage = z.discriminatedUnion('role', [
  z.looseObject({ role: z.literal('system'), content: Content }),
  z.looseObject({ role: z.literal('developer'), content: Content }),
  z.looseObject({ role: z.literal('user'), content: Content }),
  z.looseObject({ role: z.literal('assistant'), content: Content.nullable().optional(), tool_calls: z.array(ToolCallIn).max(100).optional() }),
  z.looseObject({ role: z.literal('tool'), content: Content, tool_call_id: z.string().min(1).max(200) }),
]);
export type CompletionMessage = z.input<typeof CompletionMessage>;

/**
 * The body of both chat completion routes: OpenAI's request (unknown members such as `top_p`
 * or `user` are accepted and ignored) plus `chatId`, `streamId` and `provider`.
 */
export const ChatCompletionRequest = z.looseObject({
  model: z.string().min(1).max(200).optional().describe('A project id (the agent), or a model name of `provider`; default: the service default'),
  messages: z.array(CompletionMessage).min(1, 'at least one message is required').max(1000),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().min(1).max(1_000_000).optional(),
  max_completion_tokens: z.number().int().min(1).max(1_000_000).optional(),
  chatId: z.string().min(1).max(200).optional().describe('Keeps the conversation: earlier messages are sent, the new ones stored'),
  streamId: z.string().min(1).max(200).optional().describe('Also write the events to this stream of the chat (resumable)'),
  provider: z.enum(['openai', 'ollama', 'local']).optional().describe('Provider of `model` when it is not a project'),
});
export type ChatCompletionRequest = z.input<typeof ChatCompletionRequest>;

export const CompletionSource = z.object({
  index: z.number().int(),
  chunkId: z.string(),
  documentId: z.string(),
  fileName: z.string(),
  score: z.number(),
});

const UsageOut = z.object({ prompt_tokens: z.number().int(), completion_tokens: z.number().int(), total_tokens: z.number().int() });

export const ChatCompletionResponse = z.object({
  success: z.literal(true).optional().describe('On the chat-scoped form'),
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      message: z.object({ role: z.literal('assistant'), content: z.string() }),
      finish_reason: z.enum(['stop', 'length', 'tool_calls']),
    }),
  ),
  usage: UsageOut,
  sources: z.array(CompletionSource),
  chatId: z.string().optional(),
});
export type ChatCompletionResponse = z.output<typeof ChatCompletionResponse>;

/**
 * A step of the agent, told in the stream so a client can show it: the agent's own tools and
 * its MCP servers' tools (`mcp__<server>__<tool>`) run inside the service, so an OpenAI client
 * never sees them as `delta.tool_calls` (which would ask the client to run them). These members
 * are extensions, like `sources`, on chunks with an empty `delta`: OpenAI clients ignore them.
 */
export const ToolStepCall = z.object({
  id: z.string().describe("The call's id, as the model gave it; the result carries the same"),
  name: z.string().describe('The function name the model called'),
  arguments: z.string().describe('The arguments as the model wrote them (JSON text)'),
});

export const ToolStepResult = z.object({
  id: z.string().describe('The id of the call this answers'),
  name: z.string(),
  content: z.string().describe("What the model was given: the tool's result (JSON text for project tools), or `Error: ...`"),
  isError: z.boolean().describe('Whether the tool failed (threw, timed out, was refused its arguments, or does not exist)'),
});

export const ChatCompletionChunk = z.object({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.object({
      index: z.number().int(),
      delta: z.object({ role: z.literal('assistant').optional(), content: z.string().optional() }),
      finish_reason: z.enum(['stop', 'length', 'tool_calls']).nullable(),
    }),
  ),
  usage: UsageOut.optional(),
  sources: z.array(CompletionSource).optional().describe('On the first chunk'),
  chatId: z.string().optional(),
  toolCall: ToolStepCall.optional().describe('The agent is running one of its tools (on a chunk whose delta is empty)'),
  toolResult: ToolStepResult.optional().describe('What a tool the agent ran answered (on a chunk whose delta is empty)'),
});
export type ChatCompletionChunk = z.output<typeof ChatCompletionChunk>;
