import { randomString } from '../ids.js';
import { PlatformError } from '../errors.js';
import type { KnowledgeBase } from '../knowledge/service.js';
import type { Caller } from '../platform.js';
import type { ChatCompletionChunk, ChatCompletionResponse, CompletionMessage } from '../schemas/completions.js';
import { AGENT_MIN_SCORE } from '../schemas/knowledge.js';
import type { ChatMessageRecord, ChatRecord, ProjectRecord, StorageAdapter } from '../storage/types.js';
import type { ChatMessage, ChatModel, FinishReason, Usage } from './chat-model.js';
import { type AgentEvent, runAgentTurn, type Source, systemContext } from './loop.js';
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
  /** Where agents' tools come from (project tools, MCP servers). */
  readonly toolSources?: readonly ToolSource[];
  /**
   * Where a provider's calls go when the credential names no `baseUrl` (or there is none): the
   * server's environment (OPENAI_BASE_URL, OLLAMA_HOST). Only shown, in a project's `resolved`.
   */
  readonly defaultBaseUrl?: DefaultBaseUrl;
  /**
   * Knowledge hits scoring below this are neither given to the model nor returned as sources,
   * for projects whose settings set no `minScore`. Default `AGENT_MIN_SCORE` (0.25).
   */
  readonly minScore?: number;
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

const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((p: { type?: string; text?: string }) => (p.type === 'text' && p.text ? p.text : '')).join('')
      : '';

/** OpenAI-format request messages to ours (`developer` is a system message). */
export function toChatMessages(messages: readonly CompletionMessage[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: textOf(m.content) };
      case 'user':
        return { role: 'user', content: textOf(m.content) };
      case 'assistant':
        return {
          role: 'assistant',
          content: m.content === null || m.content === undefined ? null : textOf(m.content),
          ...(m.tool_calls ? { toolCalls: m.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) } : {}),
        };
      default:
        return { role: 'tool', toolCallId: m.tool_call_id, content: textOf(m.content) };
    }
  });
}

const fromRecord = (m: ChatMessageRecord): ChatMessage => {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user':
      return { role: 'user', content: m.content ?? '' };
    case 'assistant':
      return { role: 'assistant', content: m.content, ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}) };
    case 'tool':
      return { role: 'tool', toolCallId: m.toolCallId ?? '', content: m.content ?? '' };
  }
};

const toRecord = (m: ChatMessage, createdAt: Date): Omit<ChatMessageRecord, 'chatId' | 'position'> => ({
  role: m.role,
  content: m.content,
  toolCalls: m.role === 'assistant' && m.toolCalls ? [...m.toolCalls] : null,
  toolCallId: m.role === 'tool' ? m.toolCallId : null,
  createdAt,
});

export const usageOut = (u: Usage) => ({ prompt_tokens: u.promptTokens, completion_tokens: u.completionTokens, total_tokens: u.totalTokens });

const sourcesOut = (sources: readonly Source[]) =>
  sources.map((s) => ({ index: s.index, chunkId: s.chunkId, documentId: s.documentId, fileName: s.fileName, score: s.score }));

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
      /** The credential of a call: the project's (`credentialId`), else the caller's default of the provider, else none. */
      readonly credential: (caller: Caller, provider: string, credentialId: string | null) => Promise<UsableCredential | undefined>;
      readonly clock: () => Date;
    },
  ) {}

  async #model(caller: Caller, provider: string, credentialId: string | null): Promise<ChatModel> {
    if (provider === 'local') {
      throw new PlatformError('unsupported', 'The local provider has no bundled model in this version; use openai or ollama');
    }
    const credential = await this.o.credential(caller, provider, credentialId);
    return this.o.models({
      provider,
      ...(credential ? { apiKey: credential.apiKey, proxy: credential.proxy } : {}),
      ...(credential?.baseUrl ? { baseUrl: credential.baseUrl } : {}),
    });
  }

  async plan(
    caller: Caller,
    request: {
      model?: string | undefined;
      messages: readonly CompletionMessage[];
      provider?: string | undefined;
      temperature?: number | undefined;
      maxTokens?: number | undefined;
    },
    target: { project: ProjectRecord | undefined; chat: ChatRecord | undefined },
    signal: AbortSignal | undefined,
  ): Promise<CompletionPlan> {
    const input = toChatMessages(request.messages);
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
    // knowledge hits and each source's tools are read at once.
    const lastUser = project ? [...input].reverse().find((m) => m.role === 'user') : undefined;
    const [model, history, hits, toolLists] = await Promise.all([
      this.#model(caller, provider, project?.credentialId ?? null),
      chat ? this.o.storage.chats.messages(chat.id).then((messages) => messages.map(fromRecord)) : [],
      // Below the relevance floor a hit is noise: neither context for the model nor a source.
      project && this.o.knowledge && lastUser?.content.trim()
        ? this.o.knowledge.search(caller, project.id, { query: lastUser.content, defaultMinScore: this.o.minScore ?? AGENT_MIN_SCORE })
        : [],
      project ? Promise.all((this.o.toolSources ?? []).map((source) => source.tools(caller, project.id))) : [],
    ]);
    const { system, sources } = project ? systemContext(project.description, hits) : { system: undefined, sources: [] as Source[] };
    const tools = toolLists.flat();

    const createdAt = this.o.clock();
    const storage = this.o.storage;
    const turn = runAgentTurn({
      model,
      modelName,
      ...(system ? { system } : {}),
      history,
      input,
      tools,
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
      ...(this.o.stepLimit ? { stepLimit: this.o.stepLimit } : {}),
      ...(signal ? { signal } : {}),
    });
    const events: AsyncIterable<AgentEvent> = {
      async *[Symbol.asyncIterator]() {
        for await (const event of turn) {
          if (event.type === 'finish' && chat) {
            // The turn is stored only once it has completed: the request's own messages (not
            // its system prompt), the tool calls and results, and the answer.
            const fresh = [...input.filter((m) => m.role !== 'system'), ...event.messages];
            await storage.chats.appendMessages(chat.id, fresh.map((m) => toRecord(m, createdAt)));
            await storage.chats.touch(chat.id, createdAt);
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

/** Runs a plan to its end and answers OpenAI's `chat.completion` object (plus `sources`). */
export async function completionResponse(plan: CompletionPlan): Promise<ChatCompletionResponse> {
  let content = '';
  let finish: { reason: FinishReason; usage: Usage } | undefined;
  for await (const event of plan.events) {
    if (event.type === 'text') content += event.delta;
    if (event.type === 'finish') finish = event;
  }
  if (!finish) throw new PlatformError('upstream_error', 'The model stream ended without an answer');
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.responseModel,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish.reason }],
    usage: usageOut(finish.usage),
    sources: sourcesOut(plan.sources),
    ...(plan.chat ? { chatId: plan.chat.id } : {}),
  };
}

/**
 * Runs a plan as OpenAI's chunk stream: a role chunk (with `sources`), content deltas and the
 * agent's tool steps (`toolCall` when a tool starts, `toolResult` when it answered), the finish,
 * optionally usage.
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
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: event.reason }] };
      if (includeUsage) yield { ...base, choices: [], usage: usageOut(event.usage) };
    }
  }
}
