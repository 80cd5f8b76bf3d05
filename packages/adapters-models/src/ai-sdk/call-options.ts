import type { ChatContentPart, ChatMessage, ChatModelCapabilities, ChatRequest, ResponseFormat, ToolChoice } from '@agent-platform/core';
import type { LanguageModelV3CallOptions, LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolChoice, SharedV3ProviderOptions } from '@ai-sdk/provider';

/** What shapes a request's call options beyond the request itself: the provider's ways. */
export interface CallShaping {
  /** The key of the provider's options in `providerOptions` (`anthropic`, `google`, `bedrock`, ...). */
  readonly providerOptionsKey: string;
  readonly capabilities: ChatModelCapabilities;
  /** The provider's own option for `parallelToolCalls` (e.g. Anthropic's `{ disableParallelToolUse: !parallel }`). */
  readonly parallelToolCalls?: ((parallel: boolean) => Record<string, unknown>) | undefined;
  /** Send an assistant message's reasoning blocks back (`AiSdkChatModelOptions.sendReasoning`). */
  readonly sendReasoning?: boolean | undefined;
  /** Send each call's provider metadata back with it (`AiSdkChatModelOptions.callMetadata`). */
  readonly callMetadata?: boolean | undefined;
}

/** What of an assistant message's provider data goes back (`CallShaping`). */
type SendBack = Pick<CallShaping, 'sendReasoning' | 'callMetadata'>;

/** A tool call's arguments as the AI SDK wants them: the JSON value (an unreadable text becomes `{}`, as no provider takes it). */
function argumentsOf(text: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : {};
  } catch {
    return {};
  }
}

function userContent(content: string | readonly ChatContentPart[]): Extract<LanguageModelV3Message, { role: 'user' }>['content'] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'file', mediaType: part.mediaType, data: part.data }));
}

/** A message as the AI SDK's prompt has it; `toolNames` (call id → tool) is filled from assistant messages for the tool results after them. */
function toMessage(message: ChatMessage, toolNames: Map<string, string>, send: SendBack): LanguageModelV3Message {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: userContent(message.content) };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      for (const call of calls) toolNames.set(call.id, call.name);
      return {
        role: 'assistant',
        content: [
          // The answer's reasoning first, with the provider's data it needs back (Anthropic's signed thinking block).
          ...(send.sendReasoning ? (message.reasoning ?? []) : []).map((block) => ({
            type: 'reasoning' as const,
            text: block.text,
            ...(block.metadata ? { providerOptions: block.metadata as SharedV3ProviderOptions } : {}),
          })),
          ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
          ...calls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.name,
            input: argumentsOf(call.arguments),
            // The provider's data of the call as it gave it (Gemini's thought signature).
            ...(send.callMetadata && call.metadata ? { providerOptions: call.metadata as SharedV3ProviderOptions } : {}),
          })),
        ],
      };
    }
    case 'tool':
      return {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: message.toolCallId, toolName: toolNames.get(message.toolCallId) ?? '', output: { type: 'text', value: message.content } }],
      };
  }
}

/**
 * Our messages as the AI SDK's prompt: the system prompt, user text and images, the assistant's
 * reasoning and its calls' data (where the provider takes them back), text and tool calls, and tool results (each naming its call's tool, which some providers need).
 */
export function toPrompt(messages: readonly ChatMessage[], send: SendBack = {}): LanguageModelV3Prompt {
  const toolNames = new Map<string, string>();
  return messages.map((message) => toMessage(message, toolNames, send));
}

function toolChoiceOf(choice: ToolChoice): LanguageModelV3ToolChoice {
  return typeof choice === 'object' ? { type: 'tool', toolName: choice.name } : { type: choice };
}

function responseFormatOf(format: ResponseFormat): LanguageModelV3CallOptions['responseFormat'] {
  if (format.type === 'json_object') return { type: 'json' };
  return { type: 'json', schema: format.schema as never, name: format.name, ...(format.description !== undefined ? { description: format.description } : {}) };
}

/** Our request as `doStream`'s call options (the signal is the caller's to add). */
export function toCallOptions(request: ChatRequest, shaping: CallShaping): LanguageModelV3CallOptions {
  const tools = request.tools && request.tools.length > 0 ? request.tools : undefined;
  const own = { ...((request.providerOptions ?? {}) as Record<string, unknown>) };
  if (tools && request.parallelToolCalls !== undefined && shaping.parallelToolCalls) Object.assign(own, shaping.parallelToolCalls(request.parallelToolCalls));
  return {
    prompt: toPrompt(request.messages, shaping),
    ...(tools
      ? {
          tools: tools.map((tool) => ({
            type: 'function' as const,
            name: tool.name,
            ...(tool.description ? { description: tool.description } : {}),
            inputSchema: tool.parameters as never,
            ...(tool.strict !== undefined && shaping.capabilities.strictTools ? { strict: tool.strict } : {}),
          })),
        }
      : {}),
    ...(tools && request.toolChoice ? { toolChoice: toolChoiceOf(request.toolChoice) } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
    ...(request.topP !== undefined ? { topP: request.topP } : {}),
    ...(request.frequencyPenalty !== undefined ? { frequencyPenalty: request.frequencyPenalty } : {}),
    ...(request.presencePenalty !== undefined ? { presencePenalty: request.presencePenalty } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(request.stop !== undefined ? { stopSequences: [...request.stop] } : {}),
    ...(request.responseFormat !== undefined ? { responseFormat: responseFormatOf(request.responseFormat) } : {}),
    ...(Object.keys(own).length > 0 ? { providerOptions: { [shaping.providerOptionsKey]: own as never } } : {}),
  };
}
