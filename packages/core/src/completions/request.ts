import type { ChatContentPart, ChatMessage, ChatModel, ResponseFormat, ToolDefinition } from '../agent/chat-model.js';
import type { AgentTurn } from '../agent/loop.js';
import { PlatformError } from '../errors.js';
import type { ChatCompletionRequest, CompletionMessage } from '../schemas/completions.js';
import type { LoadedImage } from './images.js';
import type { OperatorKeyLimits } from './options.js';

/** A content's text: the string, or its text (and an assistant's refusal) parts joined. */
const textOf = (content: CompletionMessage['content']): string =>
  typeof content === 'string' ? content : (content ?? []).map((p) => (p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '')).join('');

/** A user's content: its text, or with images (`images`, by URL) its parts; without `images` its text only. */
const userContent = (content: Extract<CompletionMessage, { role: 'user' }>['content'], images: ReadonlyMap<string, LoadedImage> | undefined): string | ChatContentPart[] => {
  if (typeof content === 'string' || !images || !content.some((p) => p.type === 'image_url')) return textOf(content);
  return content.flatMap((p): ChatContentPart[] => {
    if (p.type === 'text') return [{ type: 'text', text: p.text }];
    const image = p.type === 'image_url' ? images.get(p.image_url.url) : undefined;
    return image ? [{ type: 'image', mediaType: image.mediaType, data: image.data }] : [];
  });
};

/**
 * OpenAI-format request messages to ours (`developer` is a system message). A user's images
 * come from `images` (keyed by URL); without it a user message is its text.
 */
export function toChatMessages(messages: readonly CompletionMessage[], images?: ReadonlyMap<string, LoadedImage>): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOf(m.content), ...(m.name ? { name: m.name } : {}) };
      case 'user':
        return { role: 'user', content: userContent(m.content, images), ...(m.name ? { name: m.name } : {}) };
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content === null || m.content === undefined ? (m.refusal ?? null) : textOf(m.content) || (m.refusal ?? ''),
          ...(m.tool_calls ? { toolCalls: m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) } : {}),
          ...(m.name ? { name: m.name } : {}),
        };
      default:
        return { role: 'tool', toolCallId: m.tool_call_id, content: textOf(m.content) };
    }
  });
}

/** What a request asks of the model beyond its messages (the completion request's members, parsed). */
export type CompletionSettings = Pick<
  ChatCompletionRequest,
  'tools' | 'tool_choice' | 'parallel_tool_calls' | 'temperature' | 'top_p' | 'frequency_penalty' | 'presence_penalty' | 'seed' | 'stop' | 'response_format' | 'provider_options'
> & {
  readonly maxTokens?: number | null | undefined;
};

/** The answer's shape a request asks (`response_format`), in the model's terms; none for free text. */
export function responseFormatOf(format: CompletionSettings['response_format']): ResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = format.json_schema;
  return { type: 'json_schema', name, schema, ...(description !== undefined ? { description } : {}), ...(strict !== undefined && strict !== null ? { strict } : {}) };
}

/** The request's settings for the agent turn, the model's members named. */
export function turnSettings(request: CompletionSettings): Pick<AgentTurn, 'clientTools' | 'toolChoice' | 'temperature' | 'maxTokens' | 'modelSettings'> {
  const defined = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;
  const choice = request.tool_choice;
  const clientTools = (request.tools ?? []).map(
    ({ function: f }): ToolDefinition => ({
      name: f.name,
      description: f.description ?? '',
      parameters: f.parameters ?? { type: 'object', properties: {} },
      ...(defined(f.strict) ? { strict: f.strict } : {}),
    }),
  );
  return {
    ...(clientTools.length > 0 ? { clientTools } : {}),
    ...(choice !== undefined ? { toolChoice: typeof choice === 'object' ? { name: choice.function.name } : choice } : {}),
    ...(defined(request.temperature) ? { temperature: request.temperature } : {}),
    ...(defined(request.maxTokens) ? { maxTokens: request.maxTokens } : {}),
    modelSettings: {
      ...(defined(request.top_p) ? { topP: request.top_p } : {}),
      ...(defined(request.frequency_penalty) ? { frequencyPenalty: request.frequency_penalty } : {}),
      ...(defined(request.presence_penalty) ? { presencePenalty: request.presence_penalty } : {}),
      ...(defined(request.seed) ? { seed: request.seed } : {}),
      ...(defined(request.stop) ? { stop: typeof request.stop === 'string' ? [request.stop] : request.stop } : {}),
      ...(defined(request.parallel_tool_calls) ? { parallelToolCalls: request.parallel_tool_calls } : {}),
    },
  };
}

/**
 * The settings of a call on the operator's own key (`limits`; none: as they are): a model the
 * operator did not allow, or more `max_tokens` than the operator's most, is refused naming how
 * the operator sets it; a request asking no `max_tokens` gets that most.
 */
export function operatorLimited<T extends { readonly maxTokens?: number }>(settings: T, modelName: string, provider: string, limits: OperatorKeyLimits | undefined): T {
  if (!limits) return settings;
  const hint = (member: 'maxTokens' | 'models') => limits.hints?.[member] ?? `agent.operatorKey.${provider}.${member}`;
  if (limits.models?.length && !limits.models.includes(modelName)) {
    throw PlatformError.invalid(
      `model: "${modelName}" is not allowed on the server's own ${provider} key (allowed: ${limits.models.join(', ')}; ${hint('models')}); add a credential of your own for other models`,
      [{ path: ['model'], code: 'custom', message: `not allowed on the server's own ${provider} key` }],
    );
  }
  if (limits.maxTokens === undefined) return settings;
  if (settings.maxTokens !== undefined && settings.maxTokens > limits.maxTokens) {
    throw PlatformError.invalid(`max_tokens: at most ${limits.maxTokens} on the server's own ${provider} key (${hint('maxTokens')}); ask fewer, or add a credential of your own`, [
      { path: ['max_tokens'], code: 'too_big', message: `at most ${limits.maxTokens} on the server's own key` },
    ]);
  }
  return settings.maxTokens === undefined ? { ...settings, maxTokens: limits.maxTokens } : settings;
}

/**
 * Refuses, before any model call, what the turn could not honour: a client function named like
 * one of the agent's tools, and tool settings the model does not support (`capabilities`).
 */
export function checkTools(model: ChatModel, agentTools: readonly string[], settings: ReturnType<typeof turnSettings>): void {
  const agent = new Set(agentTools);
  const clientTools = settings.clientTools ?? [];
  clientTools.forEach((tool, i) => {
    if (agent.has(tool.name)) {
      throw PlatformError.invalid(`tools.${i}.function.name: "${tool.name}" is the name of one of the agent's tools; give your function another name`, [
        { path: ['tools', i, 'function', 'name'], code: 'custom', message: "the name of one of the agent's tools" },
      ]);
    }
  });
  const refuse = (path: string, message: string) => {
    throw PlatformError.invalid(`${path}: ${message}`, [{ path: path.split('.'), code: 'custom', message }]);
  };
  const can = model.capabilities ?? {};
  const offered = agent.size + clientTools.length > 0 && settings.toolChoice !== 'none';
  const choice = settings.toolChoice;
  if (choice === 'required' && !offered) refuse('tool_choice', '"required" needs a tool to call: the agent has none and the request gives none');
  if ((choice === 'required' || typeof choice === 'object') && !can.toolChoice) {
    refuse('tool_choice', `provider ${model.provider} cannot be made to call a tool ("required" or a named function): use "auto" or "none"`);
  }
  if (offered && settings.modelSettings?.parallelToolCalls === false && !can.parallelToolCalls) {
    refuse('parallel_tool_calls', `provider ${model.provider} cannot be limited to one tool call at a time: leave it out`);
  }
  const strict = clientTools.findIndex((t) => t.strict === true);
  if (strict >= 0 && !can.strictTools) refuse(`tools.${strict}.function.strict`, `provider ${model.provider} does not support strict function schemas: leave it out`);
}
