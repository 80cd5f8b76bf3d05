import type { z } from 'zod';
import type { ToolCall } from '../agent/chat-model.js';
import type { ToolSource } from '../agent/tools.js';
import type { Caller, PlatformContext } from '../context.js';
import { isPlatformError, PlatformError } from '../errors.js';
import { hasIdForm } from '../ids.js';
import type { CreateStreamRequest } from '../schemas/chats.js';
import type { ChatCompletionChunk, ChatCompletionResponse } from '../schemas/completion-answers.js';
import type { ChatCompletionRequest } from '../schemas/completions.js';
import type { ListModelsQuery, ListModelsResponse, ModelObject } from '../schemas/models.js';
import type { ApprovalRecord, ChatRecord } from '../storage/types.js';
import { samePathId } from '../validation.js';
import type { AnswerSchemaValidator } from './answer-format.js';
import type { ApprovalDesk } from './approval-desk.js';
import type { ChatImageStore } from './chat-images.js';
import { collectCompletion, completionChunks } from './chunks.js';
import { waitingToolCalls } from './history.js';
import { getModel, listModels } from './models.js';
import type { AgentOptions } from './options.js';
import { CompletionPlanner, type CredentialResolver, type KnowledgeSearch } from './planner.js';
import type { StreamEvent } from './streams/hub.js';
import type { StreamRecord, StreamStore, StreamWriter } from './streams/stream-store.js';
import type { AgentPlanner, ChatOpener } from './types.js';

export type { ChatOpener };

export interface CompletionsDeps {
  /** Chat models and agent settings. Without them, `create` answers `unsupported`. */
  readonly agent: AgentOptions | undefined;
  /** Where resumable chat streams are kept. */
  readonly streams: StreamStore;
  readonly chats: ChatOpener;
  readonly credentials: CredentialResolver;
  /** Undefined when the platform has no knowledge base. */
  readonly knowledge: KnowledgeSearch | undefined;
  /** Where agents' tools come from: project tools, MCP servers and `agent.toolSources`, in that order. */
  readonly tools: readonly ToolSource[];
  /** Where the images of chats' messages are kept (the chats area). */
  readonly images: ChatImageStore;
  /** Checks answers against a `response_format` JSON schema (the tools area's validator). */
  readonly answers: AnswerSchemaValidator;
  /** Where the calls a person approves and the questions of MCP servers are kept (the approvals area). */
  readonly approvals: ApprovalDesk;
}

/** A completion: the whole answer, or with `stream: true` the chunks to send. */
export type CompletionResult = { stream: false; body: ChatCompletionResponse } | { stream: true; chunks: AsyncIterable<ChatCompletionChunk> };

/**
 * Chat completions (OpenAI's form and the chat-scoped one), the models list (the caller's
 * projects as OpenAI model objects) and resumable streams of chats. Methods take parsed input.
 */
export class CompletionsService {
  readonly #ctx: PlatformContext;
  readonly #deps: CompletionsDeps;
  readonly #planner: CompletionPlanner | undefined;

  constructor(ctx: PlatformContext, deps: CompletionsDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
    this.#planner = deps.agent
      ? new CompletionPlanner(ctx, {
          agent: deps.agent,
          tools: deps.tools,
          knowledge: deps.knowledge,
          credentials: deps.credentials,
          images: deps.images,
          answers: deps.answers,
          approvals: deps.approvals,
        })
      : undefined;
  }

  /** The planner of agent runs (the responses area runs on it too); undefined without `agent`. */
  get planner(): AgentPlanner | undefined {
    return this.#planner;
  }

  /**
   * `POST /api/v1/chat/completions` (`form: 'v1'`) and `POST /api/v1/ai/chat/completions`
   * (`form: 'ai'`). Answers the whole completion, or with `stream: true` the chunks to send.
   */
  async create(caller: Caller, body: z.output<typeof ChatCompletionRequest>, options: { form: 'v1' | 'ai'; signal?: AbortSignal | undefined }): Promise<CompletionResult> {
    if (!this.#planner) throw new PlatformError('unsupported', 'Chat completions are not configured: construct AgentPlatform with `agent: { models }`');
    const storage = this.#ctx.storage;
    // Independent reads, at once (each is a round trip on PostgreSQL).
    const [named, found] = await Promise.all([body.model ? storage.projects.get(caller.userId, body.model) : undefined, body.chatId ? storage.chats.get(caller.userId, body.chatId) : undefined]);
    if (body.model && !named && hasIdForm('project', body.model)) {
      // A project id that is not the caller's (or no longer exists) is not a model name: sending
      // it upstream would answer without the agent (no knowledge, no tools) and hide the mistake.
      throw PlatformError.notFound(`Project ${body.model} not found: "model" has the form of a project id, but none of your projects has it`);
    }
    let chat = found;
    if (options.form === 'ai') {
      if (!body.chatId) throw PlatformError.invalid('chatId: required on /api/v1/ai/chat/completions', [{ path: ['chatId'], code: 'invalid_type', message: 'required' }]);
      if (!chat) {
        if (!named) throw PlatformError.notFound('Chat not found');
        chat = await this.#deps.chats.open(caller, body.chatId, named.id);
      }
    } else if (body.chatId && !chat) {
      throw PlatformError.notFound('Chat not found');
    }
    const project = chat && chat.projectId !== named?.id ? await storage.projects.get(caller.userId, chat.projectId) : named;
    // A recorded completion runs to its end even if this client goes away; readers of the
    // stream get every chunk.
    let writer: StreamWriter | undefined;
    if (body.streamId) {
      if (!chat) throw PlatformError.invalid('streamId: a stream belongs to a chat; give chatId too', [{ path: ['streamId'], code: 'custom', message: 'needs chatId' }]);
      writer = await this.#deps.streams.openWriter(caller.userId, chat.id, body.streamId);
    }
    let plan: Awaited<ReturnType<CompletionPlanner['plan']>>;
    try {
      const newChat = project ? () => this.#deps.chats.open(caller, this.#ctx.ids.next('chat'), project.id) : undefined;
      plan = await this.#planner.plan(caller, { ...body, maxTokens: body.max_completion_tokens ?? body.max_tokens }, { project, chat, newChat }, writer ? undefined : options.signal);
    } catch (error) {
      await writer?.end();
      throw error;
    }
    const includeUsage = body.stream_options?.include_usage === true;
    if (!writer) {
      if (body.stream) return { stream: true, chunks: completionChunks(plan, includeUsage) };
      const response = await collectCompletion(completionChunks(plan, true));
      return { stream: false, body: options.form === 'ai' ? { success: true, ...response } : response };
    }

    const recorder = writer;
    const chatId = (chat as ChatRecord).id;
    const streamId = body.streamId as string;
    const streams = this.#deps.streams;
    const startAfter = await streams.length(streamId);
    void (async () => {
      try {
        for await (const chunk of completionChunks(plan, true)) await recorder.append({ type: 'chunk', chunk });
      } catch (error) {
        const e = isPlatformError(error) ? error : new PlatformError('internal', 'Internal server error');
        await recorder.append({ type: 'error', code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) }).catch(() => {});
      } finally {
        await recorder.end().catch(() => {});
      }
    })();
    // The recorded chunks (from where this completion started), parsed; a recorded failure throws.
    const recorded = async function* (signal?: AbortSignal) {
      for await (const { data } of streams.read(caller.userId, chatId, streamId, startAfter, signal)) {
        if (data.type === 'error') throw new PlatformError(data.code, data.message, data.details ? { details: data.details } : {});
        yield data.chunk;
      }
    };
    if (body.stream) {
      const chunks = (async function* () {
        for await (const chunk of recorded(options.signal)) if (!chunk.usage || includeUsage) yield chunk;
      })();
      return { stream: true, chunks };
    }
    const response = await collectCompletion(recorded());
    return { stream: false, body: options.form === 'ai' ? { success: true, ...response } : response };
  }

  /**
   * Continues a turn paused for approval once its last call is decided (`POST
   * /api/v1/approvals/{id}`): the chat holds the turn, the approval the request's settings; the
   * planner runs the approved calls, answers the denied ones, and lets the model go on. Works
   * on any instance, after a restart too. Answers as the completions route does. The paused
   * completion's recorded stream, while it is kept, gets the continuation too (unless the
   * decision names another).
   */
  async continueRun(
    caller: Caller,
    approval: ApprovalRecord,
    options: { stream: boolean; includeUsage: boolean; streamId?: string | undefined; signal?: AbortSignal | undefined },
  ): Promise<CompletionResult> {
    if (!approval.chatId) throw PlatformError.notFound('Chat not found');
    const settings = (approval.resume ?? {}) as Partial<z.output<typeof ChatCompletionRequest>> & { maxTokens?: number };
    const { maxTokens, streamId: paused, ...kept } = settings;
    const streamId = options.streamId ?? (paused && (await this.#deps.streams.get(caller.userId, approval.chatId, paused)) ? paused : undefined);
    const body = {
      ...kept,
      ...(maxTokens !== undefined ? { max_completion_tokens: maxTokens } : {}),
      model: approval.projectId,
      chatId: approval.chatId,
      messages: [],
      stream: options.stream,
      ...(options.includeUsage ? { stream_options: { include_usage: true } } : {}),
      ...(streamId ? { streamId } : {}),
    } as z.output<typeof ChatCompletionRequest>;
    return this.create(caller, body, { form: 'v1', signal: options.signal });
  }

  /** The calls of the chat's last assistant message without a result yet (a paused turn's, a turn waiting for the client's). */
  async waitingCalls(caller: Caller, chatId: string): Promise<ToolCall[]> {
    return waitingToolCalls(this.#ctx.storage, caller.userId, chatId);
  }

  /** `GET /api/v1/models`: a page of the caller's projects as OpenAI model objects (`limit`, `after`). */
  listModels(caller: Caller, query: z.output<typeof ListModelsQuery>): Promise<ListModelsResponse> {
    return listModels(this.#ctx.storage, caller.userId, query);
  }

  /** `GET /api/v1/models/{id}`: that project as an OpenAI model object, or `not_found`. */
  getModel(caller: Caller, id: string): Promise<ModelObject> {
    return getModel(this.#ctx.storage, caller.userId, id);
  }

  /** `POST /api/chats/{chatId}/streams`: a stream of the chat that completions can write to. */
  async createStream(
    caller: Caller,
    chatId: string,
    body: z.output<typeof CreateStreamRequest>,
  ): Promise<{ success: true; message: string; stream: { id: string; chatId: string; createdAt: string } }> {
    if (body.chatId !== chatId) {
      throw samePathId('chatId', 'chat');
    }
    await this.#deps.chats.get(caller, chatId);
    const createdAt = this.#ctx.clock.now();
    const id = this.#ctx.ids.next('stream');
    await this.#deps.streams.create({ id, chatId, userId: caller.userId, createdAt });
    return { success: true, message: 'Stream created', stream: { id, chatId, createdAt: createdAt.toISOString() } };
  }

  /**
   * `GET /api/chats/{chatId}/streams/{streamId}`: the stream's events after `lastEventId`
   * (0: from the start), then live ones until it ends. Each is a record as written: a chunk, or
   * the failure that ended the completion (`code`, `message`); the server frames them as it
   * frames a live completion.
   */
  async readStream(caller: Caller, chatId: string, streamId: string, lastEventId: string | undefined, signal?: AbortSignal): Promise<AsyncIterable<StreamEvent<StreamRecord>>> {
    await this.#deps.chats.get(caller, chatId);
    if (!(await this.#deps.streams.get(caller.userId, chatId, streamId))) throw PlatformError.notFound('Stream not found');
    const after = lastEventId && /^\d{1,9}$/.test(lastEventId) ? Number(lastEventId) : 0;
    return this.#deps.streams.read(caller.userId, chatId, streamId, after, signal);
  }
}
