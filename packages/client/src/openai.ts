/**
 * Adds Agent Platform's members to the `openai` package's chat completion types, so that a
 * request may name `chatId` (and `streamId`, `provider`) and an answer has `sources`, `chatId`,
 * the model's `reasoning_content` and, on streamed chunks, the agent's tool steps. Import it once anywhere in a program:
 *
 * @example
 * import OpenAI from 'openai';
 * import '@agent-platform/client/openai';
 *
 * const client = new OpenAI({ apiKey: KEY, baseURL: 'http://127.0.0.1:3000/api/v1' });
 * const answer = await client.chat.completions.create({ model: 'proj_...', messages, chatId: 'chat_...' });
 * answer.sources; // CompletionSource[] | undefined
 *
 * The members are optional on OpenAI's types, as other servers a program talks to send none.
 * Everything else (messages, tools, `tool_calls`, `finish_reason`) stays OpenAI's.
 */
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions/completions';
import type { CompletionChunkFields, CompletionFields, CompletionMessageFields, CompletionRequestFields } from './index.js';

export type { CompletionChunkFields, CompletionFields, CompletionMessageFields, CompletionRequestFields, CompletionSource, ToolStepCall, ToolStepProgress, ToolStepResult } from './index.js';

/** OpenAI's answer with the members Agent Platform always sends (`sources`) required. */
export type AgentChatCompletion = ChatCompletion & CompletionFields;

/** OpenAI's streamed chunk with Agent Platform's members. */
export type AgentChatCompletionChunk = ChatCompletionChunk & CompletionChunkFields;

declare module 'openai/resources/chat/completions/completions' {
  interface ChatCompletionCreateParamsBase extends CompletionRequestFields {}
  interface ChatCompletion extends Partial<CompletionFields> {}
  interface ChatCompletionChunk extends CompletionChunkFields {}
  interface ChatCompletionMessage extends CompletionMessageFields {}
  namespace ChatCompletionChunk.Choice {
    interface Delta extends CompletionMessageFields {}
  }
}
