import type { ChatContentPart, ChatMessage, ResponseFormat, ToolChoice, ToolDefinition } from '@agent-platform/core';
import type OpenAI from 'openai';

/** Our request's parts in the shapes of OpenAI's `POST /chat/completions`. */

type OpenAIMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type OpenAITool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

/** A participant's name, where the message has one. */
const named = (message: { readonly name?: string }) => (message.name ? { name: message.name } : {});

/** A user message's parts as OpenAI takes them: images as `image_url` parts with a `data:` URL. */
function toOpenAIContent(content: string | readonly ChatContentPart[]): string | OpenAI.Chat.Completions.ChatCompletionContentPart[] {
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? { type: 'text' as const, text: part.text } : { type: 'image_url' as const, image_url: { url: `data:${part.mediaType};base64,${part.data}` } }));
}

export function toOpenAIResponseFormat(format: ResponseFormat): OpenAI.Chat.Completions.ChatCompletionCreateParams['response_format'] {
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      ...(format.description !== undefined ? { description: format.description } : {}),
      schema: format.schema,
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
    },
  };
}

export function toOpenAIMessage(message: ChatMessage): OpenAIMessage {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content, ...named(message) };
    case 'user':
      return { role: 'user', content: toOpenAIContent(message.content), ...named(message) };
    case 'assistant': {
      const calls = message.toolCalls ?? [];
      if (calls.length === 0) return { role: 'assistant', content: message.content ?? '', ...named(message) };
      return {
        role: 'assistant',
        ...named(message),
        content: message.content,
        tool_calls: calls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })),
      };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  }
}

export function toOpenAITool(tool: ToolDefinition): OpenAITool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      parameters: tool.parameters,
      ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
    },
  };
}

export function toOpenAIToolChoice(choice: ToolChoice): OpenAI.Chat.Completions.ChatCompletionToolChoiceOption {
  return typeof choice === 'object' ? { type: 'function', function: { name: choice.name } } : choice;
}
