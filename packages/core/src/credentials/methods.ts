import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { CreateCredentialRequest, type CredentialResponse, type CredentialTestResponse, type ListCredentialsResponse, UpdateCredentialRequest } from '../schemas/credentials.js';
import { DefaultModelsQuery, type ProviderModelsResponse } from '../schemas/provider-models.js';
import { parseInput } from '../validation.js';
import type { UsableCredential } from './choose.js';
import type { CredentialsService } from './service.js';

/**
 * Users' provider credentials: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `CredentialsService`; the server calls the service with the values its routes parsed.
 */
export const credentialsMethods = publicMethods<{ credentials: CredentialsService }>()({
  /** `POST /api/v1/credentials`: the address checked against the outbound policy; the key sealed, never returned. */
  async createCredential(caller: Caller, input: CreateCredentialRequest): Promise<CredentialResponse> {
    return this.credentials.create(caller, parseInput(CreateCredentialRequest, input));
  },

  /** `GET /api/v1/credentials`: newest first, without secrets. */
  listCredentials(caller: Caller): Promise<ListCredentialsResponse> {
    return this.credentials.list(caller);
  },

  /** `GET /api/v1/credentials/{id}`. */
  getCredential(caller: Caller, id: string): Promise<CredentialResponse> {
    return this.credentials.get(caller, id);
  },

  /** `PATCH /api/v1/credentials/{id}`: changes only the members of `data` that are given. */
  async updateCredential(caller: Caller, id: string, input: UpdateCredentialRequest): Promise<{ success: true; message: string }> {
    return this.credentials.update(caller, id, parseInput(UpdateCredentialRequest, input));
  },

  /** `DELETE /api/v1/credentials/{id}`: refused (409) while projects use it. */
  deleteCredential(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.credentials.delete(caller, id);
  },

  /** `POST /api/v1/credentials/{id}/test`: one cheap real call with the credential; the outcome is recorded in `isValid`. */
  testCredential(caller: Caller, id: string, signal?: AbortSignal): Promise<CredentialTestResponse> {
    return this.credentials.test(caller, id, signal);
  },

  /**
   * The caller's credential for a provider call, decrypted: the one `credentialId` names (a
   * project's), else the caller's default of the provider. Undefined when there is none
   * (callers fall back to the environment).
   */
  providerCredential(caller: Caller, provider: string, credentialId?: string | null): Promise<UsableCredential | undefined> {
    return this.credentials.resolve(caller, provider, credentialId);
  },

  /** `GET /api/v1/credentials/{id}/models`: the models the credential's upstream offers. */
  listCredentialModels(caller: Caller, id: string, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    return this.credentials.models(caller, id, signal);
  },

  /** `GET /api/v1/credentials/default/models?provider=`: the models of the upstream a project naming no credential calls. */
  async listDefaultModels(caller: Caller, query: DefaultModelsQuery, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    return this.credentials.defaultModels(caller, parseInput(DefaultModelsQuery, query), signal);
  },
});
