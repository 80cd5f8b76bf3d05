import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import type { InputItemList, ResponseResource, ResponseStreamEvent } from '../schemas/response-objects.js';
import { CreateResponseRequest, GetResponseQuery, InputItemsQuery } from '../schemas/responses.js';
import { parseInput } from '../validation.js';
import type { ResponseResult, ResponsesService } from './service.js';

const ReplayQuery = GetResponseQuery.pick({ starting_after: true });

/**
 * The Open Responses API: `AgentPlatform`'s public methods of the area (installed on its
 * prototype, src/methods.ts). Each parses what a library caller passes and hands the parsed
 * value to `ResponsesService`; the server calls the service with the values its routes parsed.
 */
export const responsesMethods = publicMethods<{ responses: ResponsesService }>()({
  /** `POST /api/v1/responses`: the whole response, its events (`stream: true`), or at once the queued response (`background: true`). */
  async createResponse(caller: Caller, input: CreateResponseRequest, options: { signal?: AbortSignal } = {}): Promise<ResponseResult> {
    return this.responses.create(caller, parseInput(CreateResponseRequest, input), options);
  },

  /** `GET /api/v1/responses/{id}`: a stored response as it stands. */
  getResponse(caller: Caller, id: string): Promise<ResponseResource> {
    return this.responses.get(caller, id);
  },

  /** `GET /api/v1/responses/{id}?stream=true`: its events after `starting_after` (recorded, or made from the stored response), live until it ends. */
  async replayResponse(caller: Caller, id: string, query: { starting_after?: number } = {}, signal?: AbortSignal): Promise<AsyncIterable<ResponseStreamEvent>> {
    return this.responses.replay(caller, id, parseInput(ReplayQuery, query).starting_after, signal);
  },

  /** `DELETE /api/v1/responses/{id}`. */
  deleteResponse(caller: Caller, id: string): Promise<{ id: string; object: 'response'; deleted: true }> {
    return this.responses.delete(caller, id);
  },

  /** `POST /api/v1/responses/{id}/cancel`: stops a queued or running response, wherever it runs. */
  cancelResponse(caller: Caller, id: string): Promise<ResponseResource> {
    return this.responses.cancel(caller, id);
  },

  /** `GET /api/v1/responses/{id}/input_items`: a page of its input items. */
  async responseInputItems(caller: Caller, id: string, query: InputItemsQuery = {}): Promise<InputItemList> {
    return this.responses.inputItems(caller, id, parseInput(InputItemsQuery, query));
  },
});
