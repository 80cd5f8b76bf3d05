import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { DeleteLocalModelRequest, type DeleteLocalModelResponse, ListLocalModelsQuery, type ListLocalModelsResponse } from '../schemas/local-models.js';
import { parseInput } from '../validation.js';
import { type LocalModelsService, withoutEmptyBaseUrl } from './service.js';

/**
 * The local model runtime: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `LocalModelsService`; the server calls the service with the values its routes parsed.
 */
export const localModelsMethods = publicMethods<{ localModels: LocalModelsService }>()({
  /** `GET /api/v1/localmodel/list-models`: the installed models; failures name the runtime's state in their message (`LocalModelsService`). */
  async listLocalModels(caller: Caller, query: ListLocalModelsQuery = {}): Promise<ListLocalModelsResponse> {
    return this.localModels.list(caller, parseInput(ListLocalModelsQuery, withoutEmptyBaseUrl(query ?? {})));
  },

  /** `DELETE /api/v1/localmodel/delete-model`. */
  async deleteLocalModel(caller: Caller, input: DeleteLocalModelRequest): Promise<DeleteLocalModelResponse> {
    return this.localModels.delete(caller, parseInput(DeleteLocalModelRequest, withoutEmptyBaseUrl(input ?? {})));
  },
});
