import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { CreateStreamRequest } from '../schemas/chats.js';
import { ChatCompletionRequest } from '../schemas/completions.js';
import { ListModelsQuery, type ListModelsResponse, type ModelObject } from '../schemas/models.js';
import { parseInput } from '../validation.js';
import type { CompletionResult, CompletionsService } from './service.js';
import type { StreamEvent } from './streams/hub.js';
import type { StreamRecord } from './streams/stream-store.js';

/**
 * Chat completions, the models list and resumable chat streams: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `CompletionsService`; the server calls the service with the values its routes parsed.
 */
export const completionsMethods = publicMethods<{ completions: CompletionsService }>()({
  /**
   * `POST /api/v1/chat/completions` (`form: 'v1'`) and `POST /api/v1/ai/chat/completions`
   * (`form: 'ai'`). Answers the whole completion, or with `stream: true` the chunks to send.
   */
  async chatCompletion(caller: Caller, input: ChatCompletionRequest, options: { form: 'v1' | 'ai'; signal?: AbortSignal }): Promise<CompletionResult> {
    return this.completions.create(caller, parseInput(ChatCompletionRequest, input), options);
  },

  /**
   * `GET /api/v1/models` (no `id`): a page of the caller's projects as OpenAI model objects
   * (`limit`, `after`); with `id` (`GET /api/v1/models/{id}`) that one project, or `not_found`.
   */
  models: async function (this: { completions: CompletionsService }, caller: Caller, idOrQuery?: string | ListModelsQuery): Promise<ListModelsResponse | ModelObject> {
    return typeof idOrQuery === 'string' ? this.completions.getModel(caller, idOrQuery) : this.completions.listModels(caller, parseInput(ListModelsQuery, idOrQuery ?? {}));
  } as {
    (caller: Caller, query?: ListModelsQuery): Promise<ListModelsResponse>;
    (caller: Caller, id: string): Promise<ModelObject>;
  },

  /** `POST /api/chats/{chatId}/streams`: a stream of the chat that completions can write to. */
  async createStream(caller: Caller, chatId: string, input: CreateStreamRequest): Promise<{ success: true; message: string; stream: { id: string; chatId: string; createdAt: string } }> {
    return this.completions.createStream(caller, chatId, parseInput(CreateStreamRequest, input));
  },

  /**
   * `GET /api/chats/{chatId}/streams/{streamId}`: the stream's records (chunks, or the failure
   * that ended it) after `lastEventId` (0: from the start), then live ones until it ends.
   */
  readStream(caller: Caller, chatId: string, streamId: string, lastEventId: string | undefined, signal?: AbortSignal): Promise<AsyncIterable<StreamEvent<StreamRecord>>> {
    return this.completions.readStream(caller, chatId, streamId, lastEventId, signal);
  },
});
