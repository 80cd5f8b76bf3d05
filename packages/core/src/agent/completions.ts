import { randomString } from '../ids.js';
import { PlatformError } from '../errors.js';
import type { KnowledgeBase } from '../knowledge/service.js';
import type { Caller } from '../context.js';
import type { ByteLimit } from '../net/upstream-limits.js';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatCompletionResponse, CompletionMessage } from '../schemas/completions.js';
import { AGENT_MIN_SCORE } from '../schemas/knowledge.js';
import type { ChatMessageRecord, ChatRecord, MessageSource, ProjectRecord, StorageAdapter } from '../storage/types.js';
import type { UserCapGuard } from '../user-caps.js';
import { countMessageTokens, DEFAULT_HISTORY_TOKENS, fitHistory, readRecentTurns } from './history.js';
import type { ChatMessage, ChatModel, ToolCall, ToolDefinition, Usage } from './chat-model.js';
import { type AgentEvent, type AgentTurn, runAgentTurn, type Source, systemContext } from './loop.js';
import { checkToolResults, newToChat } from './tool-results.js';
import type { DefaultBaseUrl, UsableCredential } from './provider-credentials.js';
import type { ToolSource } from './tools.js';

/** What a provider call needs: the provider and, when the caller has one, their credential. */
export interface ProviderConfig {
  readonly provider: string;
  readonly apiKey?: string;
  readonly baseUrl?: string;
  readonly proxy?: boolean;
}

/** Makes the chat model of a provider (the server applies environment fallbacks and the URL policy). */
export type ChatModelResolver = (config: ProviderConfig) => ChatModel;

export interface AgentOptions {
  readonly models: ChatModelResolver;
  /** `provider:model` used when a request names no model. Default `openai:gpt-4o-mini`. */
  readonly defaultModel?: string;
  /** Model calls per turn at most. Default 8. */
  readonly stepLimit?: number;
  /**
   * Most bytes of one message a turn stores in a chat (the model's text and tool calls of one
   * step, one tool's result), and the setting that raises it, named in the error. Default 1 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.messageBytes`).
   */
  readonly messageLimit?: ByteLimit;
  /** Where agents' tools come from (project tools, MCP servers). */
  readonly toolSources?: readonly ToolSource[];
  /**
   * Where a provider's calls go when the credential names no `baseUrl` (or there is none): the
   * server's environment (OPENAI_BASE_URL, OLLAMA_HOST). Only shown, in a project's `resolved`.
   */
  readonly defaultBaseUrl?: DefaultBaseUrl;
  /**
   * Knowledge hits scoring below this are neither given to the model nor returned as sources,
   * for projects whose settings set no `minScore`. Default `AGENT_MIN_SCORE` (0.27).
   */
  readonly minScore?: number;
  /**
   * Token budget of a model call's messages with a chat (o200k_base tokens, as chunking counts):
   * the system context (instructions and knowledge excerpts) and the request's own messages are
   * always sent; the chat's earlier turns fill what is left, newest first, whole (oldest turns
   * first out; a tool call is never sent without its results). Default `DEFAULT_HISTORY_TOKENS`.
   */
  readonly historyTokens?: number;
  /**
   * Limits of provider calls that use no credential of the caller's, by provider: they go out on
   * the operator's own account (the server's OPENAI_API_KEY for `openai`). Default: none.
   */
  readonly operatorKey?: Readonly<Record<string, OperatorKeyLimits>>;
}

/** What calls on the operator's own key may ask (`AgentOptions.operatorKey`). */
export interface OperatorKeyLimits {
  /** Most `max_tokens` a request may ask (more is refused); sent as its `max_tokens` when it asks none. */
  readonly maxTokens?: number;
  /** The only model names allowed; absent or empty: any. */
  readonly models?: readonly string[];
  /** How the operator sets each, named in the refusals (e.g. the server's flags). Default `agent.operatorKey.<provider>.<member>`. */
  readonly hints?: { readonly maxTokens?: string; readonly models?: string };
}

export interface CompletionPlan {
  readonly id: string;
  readonly created: number;
  /** The `model` of the response: the project id for an agent, else the model name. */
  readonly responseModel: string;
  readonly chat: ChatRecord | undefined;
  readonly sources: readonly Source[];
  readonly events: AsyncIterable<AgentEvent>;
}

const splitModel = (value: string): { provider: string; model: string } => {
  const at = value.indexOf(':');
  return at > 0 && ['openai', 'ollama', 'local'].includes(value.slice(0, at))
    ? { provider: value.slice(0, at), model: value.slice(at + 1) }
    : { provider: 'openai', model: value };
};

/** A content's text: the string, or its text (and an assistant's refusal) parts joined. */
const textOf = (content: CompletionMessage['content']): string =>
  typeof content === 'string' ? content : (content ?? []).map((p) => (p.type === 'text' ? p.text : p.type === 'refusal' ? p.refusal : '')).join('');

/** OpenAI-format request messages to ours (`developer` is a system message). */
export function toChatMessages(messages: readonly CompletionMessage[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOf(m.content), ...(m.name ? { name: m.name } : {}) };
      case 'user':
        return { role: 'user', content: textOf(m.content), ...(m.name ? { name: m.name } : {}) };
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

const toRecord = (m: ChatMessage, createdAt: Date, sources?: readonly MessageSource[]): Omit<ChatMessageRecord, 'chatId' | 'position'> => ({
  role: m.role,
  content: m.content,
  toolCalls: m.role === 'assistant' && m.toolCalls ? [...m.toolCalls] : null,
  toolCallId: m.role === 'tool' ? m.toolCallId : null,
  ...(sources && sources.length > 0 ? { sources } : {}),
  createdAt,
});

export const usageOut = (u: Usage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens });

/** The sources as answers and stored messages give them: the chunk's place and first words, not its text. */
export const sourcesOut = (sources: readonly Source[]): MessageSource[] =>
  sources.map((s) => ({ index: s.index, chunkId: s.chunkId, documentId: s.documentId, fileName: s.fileName, score: s.score, excerpt: s.excerpt }));

const lastUserText = (messages: readonly ChatMessage[]): string | undefined => messages.findLast((m) => m.role === 'user')?.content ?? undefined;

const toolCallsOut = (calls: readonly ToolCall[]) => calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } }));

/** What a request asks of the model beyond its messages (the completion request's members, parsed). */
export type CompletionSettings = Pick<
  ChatCompletionRequest,
  'tools' | 'tool_choice' | 'parallel_tool_calls' | 'temperature' | 'top_p' | 'frequency_penalty' | 'presence_penalty' | 'seed' | 'stop'
> & { readonly maxTokens?: number | null | undefined };

/** The request's settings for the agent turn, the model's members named. */
function turnSettings(request: CompletionSettings): Pick<AgentTurn, 'clientTools' | 'toolChoice' | 'temperature' | 'maxTokens' | 'modelSettings'> {
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
function operatorLimited<T extends { readonly maxTokens?: number }>(settings: T, modelName: string, provider: string, limits: OperatorKeyLimits | undefined): T {
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
    throw PlatformError.invalid(
      `max_tokens: at most ${limits.maxTokens} on the server's own ${provider} key (${hint('maxTokens')}); ask fewer, or add a credential of your own`,
      [{ path: ['max_tokens'], code: 'too_big', message: `at most ${limits.maxTokens} on the server's own key` }],
    );
  }
  return settings.maxTokens === undefined ? { ...settings, maxTokens: limits.maxTokens } : settings;
}

/**
 * Refuses, before any model call, what the turn could not honour: a client function named like
 * one of the agent's tools, and tool settings the model does not support (`capabilities`).
 */
function checkTools(model: ChatModel, agentTools: readonly string[], settings: ReturnType<typeof turnSettings>): void {
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

/**
 * Plans and runs a chat completion: picks the agent (a project) or a plain model, loads the
 * chat's history, searches the knowledge base, gathers the tools, runs the agent turn, and
 * stores the turn in the chat when it completes (nothing when it fails or is aborted).
 */
export class Agents {
  constructor(
    private readonly o: AgentOptions & {
      readonly storage: StorageAdapter;
      readonly knowledge: KnowledgeBase | undefined;
      /** The per-user caps (chat messages). */
      readonly caps: UserCapGuard;
      /** The credential of a call: the project's (`credentialId`), else the caller's default of the provider, else none. */
      readonly credential: (caller: Caller, provider: string, credentialId: string | null) => Promise<UsableCredential | undefined>;
      readonly clock: () => Date;
    },
  ) {}

  /** The model of a call, and the operator's limits when it runs on the operator's key (no credential of the caller's). */
  async #model(caller: Caller, provider: string, credentialId: string | null): Promise<{ model: ChatModel; operator: OperatorKeyLimits | undefined }> {
    if (provider === 'local') {
      throw new PlatformError('unsupported', 'The local provider has no bundled model in this version; use openai or ollama');
    }
    const credential = await this.o.credential(caller, provider, credentialId);
    const model = this.o.models({
      provider,
      ...(credential ? { apiKey: credential.apiKey, proxy: credential.proxy } : {}),
      ...(credential?.baseUrl ? { baseUrl: credential.baseUrl } : {}),
    });
    return { model, operator: credential ? undefined : this.o.operatorKey?.[provider] };
  }

  async plan(
    caller: Caller,
    request: CompletionSettings & { model?: string | undefined; messages: readonly CompletionMessage[]; provider?: string | undefined },
    target: { project: ProjectRecord | undefined; chat: ChatRecord | undefined },
    signal: AbortSignal | undefined,
  ): Promise<CompletionPlan> {
    const requested = toChatMessages(request.messages);
    const { project, chat } = target;
    let modelName: string;
    let provider: string;
    if (project) {
      modelName = project.model;
      provider = project.provider;
    } else {
      const chosen = request.model ? { provider: request.provider ?? 'openai', model: request.model } : splitModel(this.o.defaultModel ?? 'openai:gpt-4o-mini');
      modelName = chosen.model;
      provider = chosen.provider;
    }
    // The turn's inputs do not depend on each other: the credential, the chat's history, the
    // knowledge hits and each source's tools are read at once. A request with no question of its
    // own (tool results continuing the chat's last turn) searches with the chat's last question.
    // The chat is read from its end only as far as the budget reaches.
    const budget = this.o.historyTokens ?? DEFAULT_HISTORY_TOKENS;
    const history = chat ? readRecentTurns(this.o.storage, chat.userId, chat.id, budget) : Promise.resolve(undefined);
    const question = project && this.o.knowledge ? (lastUserText(requested) ?? (chat ? history.then((h) => h?.question) : undefined)) : undefined;
    const knowledge = this.o.knowledge;
    // A turn whose messages could not be stored is refused before the model is called.
    const room = chat ? this.o.caps.check(this.o.storage, caller.userId, 'messages', requested.filter((m) => m.role !== 'system').length + 1) : undefined;
    const [{ model, operator }, recent, hits, toolLists] = await Promise.all([
      this.#model(caller, provider, project?.credentialId ?? null),
      history,
      // Below the relevance floor a hit is noise: neither context for the model nor a source.
      Promise.resolve(question).then((query) =>
        project && knowledge && query?.trim() ? knowledge.search(caller, project.id, { query, defaultMinScore: this.o.minScore ?? AGENT_MIN_SCORE }) : [],
      ),
      project ? Promise.all((this.o.toolSources ?? []).map((source) => source.tools(caller, project.id))) : [],
      room,
    ]);
    const { system, sources } = project ? systemContext(project.instructions, hits) : { system: undefined, sources: [] as Source[] };
    const tools = toolLists.flat();
    const settings = operatorLimited(turnSettings(request), modelName, provider, operator);
    checkTools(
      model,
      tools.map((t) => t.definition.name),
      settings,
    );
    // With a chat, what the client resent of it is not new (see newToChat: only a chat waiting
    // for tool results has any, and its pending calls are always read); every tool call of the
    // conversation must have its result before the model is asked again. The history is what
    // the budget leaves after the system context and the request's own messages.
    const input = recent ? newToChat(recent.pending, requested) : requested;
    const earlier = recent ? fitHistory(recent, await countMessageTokens([...(system ? [{ role: 'system' as const, content: system }] : []), ...input], budget)) : [];
    checkToolResults(earlier, input, requested);

    const createdAt = this.o.clock();
    const storage = this.o.storage;
    const caps = this.o.caps;
    const stored = sourcesOut(sources);
    const turn = runAgentTurn({
      model,
      modelName,
      ...(system ? { system } : {}),
      history: earlier,
      input,
      tools,
      ...settings,
      ...(this.o.stepLimit ? { stepLimit: this.o.stepLimit } : {}),
      ...(this.o.messageLimit ? { messageLimit: this.o.messageLimit } : {}),
      ...(signal ? { signal } : {}),
    });
    const events: AsyncIterable<AgentEvent> = {
      async *[Symbol.asyncIterator]() {
        for await (const event of turn) {
          if (event.type === 'finish' && chat) {
            // The turn is stored only once it has completed: the request's new messages (not
            // its system prompt), the tool calls and results, and the answer; the assistant
            // message that ends the turn keeps the sources the response gives.
            const fresh = [...input.filter((m) => m.role !== 'system'), ...event.messages];
            const last = fresh.findLastIndex((m) => m.role === 'assistant');
            // Within the user's cap of messages, decided under the user's lock: over it the turn
            // is not stored (and the stream ends with the error).
            await storage.transaction(async (tx) => {
              await caps.reserve(tx, caller.userId, 'messages', fresh.length);
              await tx.chats.appendMessages(
                chat.userId,
                chat.id,
                fresh.map((m, i) => toRecord(m, createdAt, i === last ? stored : undefined)),
              );
            });
            await storage.chats.touch(chat.userId, chat.id, createdAt);
          }
          yield event;
        }
      },
    };
    return {
      id: `chatcmpl-${randomString(24)}`,
      created: Math.floor(createdAt.getTime() / 1000),
      responseModel: project ? project.id : modelName,
      chat,
      sources,
      events,
    };
  }
}

/**
 * A completion's chunks folded into OpenAI's `chat.completion` object (plus `sources` and
 * `chatId`): the text, the client's tool calls, the finish reason and usage. The chunks of a
 * plan and those recorded into a stream give the same answer.
 */
export async function collectCompletion(chunks: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionResponse> {
  let first: ChatCompletionChunk | undefined;
  let content = '';
  const toolCalls: ReturnType<typeof toolCallsOut> = [];
  let finishReason: ChatCompletionResponse['choices'][number]['finish_reason'] | undefined;
  let usage: ChatCompletionResponse['usage'] | undefined;
  for await (const chunk of chunks) {
    first ??= chunk;
    const choice = chunk.choices[0];
    content += choice?.delta.content ?? '';
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
        message: { role: 'assistant', content: toolCalls.length > 0 && content === '' ? null : content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: finishReason,
      },
    ],
    usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    sources: first.sources ?? [],
    ...(first.chatId ? { chatId: first.chatId } : {}),
  };
}

/** Runs a plan to its end and answers OpenAI's `chat.completion` object (plus `sources`). */
export function completionResponse(plan: CompletionPlan): Promise<ChatCompletionResponse> {
  return collectCompletion(completionChunks(plan, true));
}

/**
 * Runs a plan as OpenAI's chunk stream: a role chunk (with `sources`), content deltas and the
 * agent's tool steps (`toolCall` when a tool starts, `toolResult` when it answered), the
 * client's tool calls (`delta.tool_calls`, one whole call per chunk), the finish, optionally usage.
 */
export async function* completionChunks(plan: CompletionPlan, includeUsage: boolean): AsyncGenerator<ChatCompletionChunk> {
  const base = { id: plan.id, object: 'chat.completion.chunk' as const, created: plan.created, model: plan.responseModel };
  yield {
    ...base,
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    sources: sourcesOut(plan.sources),
    ...(plan.chat ? { chatId: plan.chat.id } : {}),
  };
  for await (const event of plan.events) {
    if (event.type === 'text' && event.delta) {
      yield { ...base, choices: [{ index: 0, delta: { content: event.delta }, finish_reason: null }] };
    } else if (event.type === 'tool_call') {
      // The agent's steps, as extensions on an empty delta: never `delta.tool_calls`, which
      // would ask an OpenAI client to run a tool the service runs itself.
      const { id, name, arguments: args } = event.call;
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], toolCall: { id, name, arguments: args } };
    } else if (event.type === 'tool_result') {
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: null }], toolResult: { id: event.callId, name: event.name, content: event.content, isError: event.isError } };
    } else if (event.type === 'finish') {
      // The client's own functions to run: OpenAI's `delta.tool_calls`.
      const calls = toolCallsOut(event.toolCalls ?? []);
      for (const [index, call] of calls.entries()) yield { ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }] };
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: event.reason }] };
      if (includeUsage) yield { ...base, choices: [], usage: usageOut(event.usage) };
    }
  }
}
