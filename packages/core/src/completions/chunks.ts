import type { ToolCall, Usage } from '../agent/chat-model.js';
import { formFields } from '../agent/form-fields.js';
import type { Source } from '../agent/loop.js';
import { PlatformError } from '../errors.js';
import type { ChatCompletionChunk, ChatCompletionResponse } from '../schemas/completion-answers.js';
import type { MessageSource } from '../storage/types.js';
import type { CompletionPlan } from './types.js';

const usageOut = (u: Usage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens });

/** The sources as answers and stored messages give them: the chunk's place and first words, not its text. */
export const sourcesOut = (sources: readonly Source[]): MessageSource[] =>
  sources.map((s) => ({ index: s.index, chunkId: s.chunkId, documentId: s.documentId, fileName: s.fileName, score: s.score, excerpt: s.excerpt }));

const toolCallsOut = (calls: readonly ToolCall[]) => calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));

/**
 * A completion's chunks folded into OpenAI's `chat.completion` object (plus `sources` and
 * `chatId`): the text, the client's tool calls, the finish reason and usage. The one assembly
 * of an answer: the chunks of a plan and those recorded into a stream give the same answer.
 */
export async function collectCompletion(chunks: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionResponse> {
  let first: ChatCompletionChunk | undefined;
  let content = '';
  let reasoning: string | undefined;
  const toolCalls: ReturnType<typeof toolCallsOut> = [];
  let finishReason: ChatCompletionResponse['choices'][number]['finish_reason'] | undefined;
  let usage: ChatCompletionResponse['usage'] | undefined;
  const approvals: NonNullable<ChatCompletionResponse['approvals']> = [];
  for await (const chunk of chunks) {
    if (chunk.approval) approvals.push(chunk.approval);
    first ??= chunk;
    const choice = chunk.choices[0];
    content += choice?.delta.content ?? '';
    if (choice?.delta.reasoning_content !== undefined) reasoning = (reasoning ?? '') + choice.delta.reasoning_content;
    for (const { id, type, function: f } of choice?.delta.tool_calls ?? []) toolCalls.push({ id, type, function: f });
    finishReason = choice?.finish_reason ?? finishReason;
    usage = chunk.usage ?? usage;
  }
  if (!first || !finishReason) throw new PlatformError('upstream_error', 'The model stream ended without an answer');
  return {
    id: first.id,
    object: 'chat.completion',
    created: first.created,
    model: first.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: toolCalls.length > 0 && content === '' ? null : content,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          ...(reasoning !== undefined ? { reasoning_content: reasoning } : {}),
        },
        finish_reason: finishReason,
      },
    ],
    usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    sources: first.sources ?? [],
    ...(first.chatId ? { chatId: first.chatId } : {}),
    ...(approvals.length > 0 ? { approvals } : {}),
  };
}

/**
 * Runs a plan as OpenAI's chunk stream: a role chunk (with `sources`, sent with the run's first
 * event), content deltas (and the
 * model's reasoning as `delta.reasoning_content`, as DeepSeek and vLLM stream it) and the
 * agent's tool steps (`toolCall` when a tool starts, `toolProgress` as it reports progress, `toolResult` when it answered), the
 * client's tool calls (`delta.tool_calls`, one whole call per chunk), the finish, optionally usage.
 */
export async function* completionChunks(plan: CompletionPlan, includeUsage: boolean): AsyncGenerator<ChatCompletionChunk> {
  const base = { id: plan.id, object: 'chat.completion.chunk' as const, created: plan.created, model: plan.responseModel };
  const role: ChatCompletionChunk = {
    ...base,
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    sources: sourcesOut(plan.sources),
    ...(plan.chat ? { chatId: plan.chat.id } : {}),
  };
  // The role chunk comes with the run's first event, not before: a run that fails before the
  // model said anything yields nothing, so a streamed request can be answered with the
  // failure's status (the server holds its headers until the first chunk).
  let opened = false;
  for await (const event of plan.events) {
    if (!opened) {
      opened = true;
      yield role;
    }
    if (event.type === 'text' && event.delta) {
      yield { ...base, choices: [{ index: 0, delta: { content: event.delta }, finish_reason: null }] };
    } else if (event.type === 'reasoning' && event.delta) {
      yield { ...base, choices: [{ index: 0, delta: { reasoning_content: event.delta }, finish_reason: null }] };
    } else if (event.type === 'tool_call') {
      // The agent's steps, as extensions on an empty delta: never `delta.tool_calls`, which
      // would ask an OpenAI client to run a tool the service runs itself.
      const { id, name, arguments: args } = event.call;
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], toolCall: { id, name, arguments: args } };
    } else if (event.type === 'tool_result') {
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], toolResult: { id: event.callId, name: event.name, content: event.content, isError: event.isError } };
    } else if (event.type === 'tool_progress') {
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], toolProgress: { id: event.callId, name: event.name, ...event.progress } };
    } else if (event.type === 'approval_required') {
      // Never `delta.tool_calls`: the service runs the call once a person approves it.
      for (const approval of event.approvals) yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], approval: { ...approval } };
    } else if (event.type === 'elicitation') {
      const { id, callId, tool, message, schema, expiresAt } = event.question;
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], elicitation: { id, callId, tool, message, fields: formFields(schema), expiresAt } };
    } else if (event.type === 'finish') {
      // The client's own functions to run: OpenAI's `delta.tool_calls`.
      const calls = toolCallsOut(event.toolCalls ?? []);
      for (const [index, call] of calls.entries()) yield { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }] };
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: event.reason }] };
      if (includeUsage) yield { ...base, choices: [], usage: usageOut(event.usage) };
    }
  }
  if (!opened) yield role;
}
