import type { ChatContentPart, ChatMessage, FinishReason, ToolSampleRequest, ToolSampleResult } from '@agent-platform/core';
import { type CreateMessageRequest, type CreateMessageResult, McpError, ErrorCode as RpcCode } from '@modelcontextprotocol/sdk/types.js';

/** Answers one `sampling/createMessage` with a model (the project's, through the tool call in flight). */
export type Sampler = (request: ToolSampleRequest) => Promise<ToolSampleResult>;

const STOP_REASONS: Partial<Record<FinishReason, string>> = { stop: 'endTurn', length: 'maxTokens' };

/** A sampling message's content: text, and images in a user message; anything else is refused naming it. */
function contentOf(message: CreateMessageRequest['params']['messages'][number], index: number): string | ChatContentPart[] {
  const blocks = Array.isArray(message.content) ? message.content : [message.content];
  const parts = blocks.map((block): ChatContentPart => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    if (block.type === 'image' && message.role === 'user') return { type: 'image', mediaType: block.mimeType, data: block.data };
    throw new McpError(RpcCode.InvalidParams, `messages[${index}]: ${block.type} content is not supported in sampling here (text, and images in user messages)`);
  });
  return parts.every((p) => p.type === 'text') ? parts.map((p) => (p as { text: string }).text).join('\n') : parts;
}

/**
 * The messages, system prompt, token limit, temperature and stop sequences of a server's
 * `sampling/createMessage`, answered by `sampler`; the server's model preferences and
 * `includeContext` are hints a client may ignore, and are. Tools in sampling are refused (the
 * capability declares none).
 */
export async function answerSampling(params: CreateMessageRequest['params'], sampler: Sampler, signal: AbortSignal): Promise<CreateMessageResult> {
  if (params.tools !== undefined || params.toolChoice !== undefined) throw new McpError(RpcCode.InvalidParams, 'tools: this client does not offer tools in sampling');
  const messages: ChatMessage[] = params.messages.map((m, i) => {
    const content = contentOf(m, i);
    return m.role === 'user' ? { role: 'user', content } : { role: 'assistant', content: typeof content === 'string' ? content : '' };
  });
  const result = await sampler({
    system: params.systemPrompt,
    messages,
    maxTokens: params.maxTokens,
    temperature: params.temperature,
    stop: params.stopSequences,
    signal,
  });
  return { role: 'assistant', content: { type: 'text', text: result.text }, model: result.model, stopReason: STOP_REASONS[result.finishReason] ?? result.finishReason };
}

/** Runs a tool call with `sample` (when given) answering the connection's sampling requests meanwhile. */
export async function whileSampling<T>(samplers: Set<Sampler>, sample: Sampler | undefined, run: () => Promise<T>): Promise<T> {
  if (!sample) return run();
  // The call's own entry: the same function may serve two calls at once.
  const own: Sampler = (request) => sample(request);
  samplers.add(own);
  try {
    return await run();
  } finally {
    samplers.delete(own);
  }
}
