import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { type ApiKeySummary, CreateKeyRequest, type CreateKeyResponse, ListKeysQuery, type ListKeysResponse } from '../schemas/auth.js';
import { parseInput } from '../validation.js';
import type { AuthService } from './service.js';

/**
 * Users and API keys: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `AuthService`; the server calls the service with the values its routes parsed.
 */
export const authMethods = publicMethods<{ auth: AuthService }>()({
  /** Creates a user and its first key (operator bootstrap: `agent-platform keys create`). */
  async createUserWithKey(input: CreateKeyRequest): Promise<CreateKeyResponse> {
    return this.auth.createUserWithKey(parseInput(CreateKeyRequest, input));
  },

  /** The first key of an empty platform, or undefined when a key exists (`AuthService.createFirstKey`). */
  async createFirstKey(input: CreateKeyRequest): Promise<CreateKeyResponse | undefined> {
    return this.auth.createFirstKey(parseInput(CreateKeyRequest, input));
  },

  /** `POST /api/auth/create-key`: another key for the caller's user, within the user's cap of keys. */
  async createKey(caller: Caller, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    return this.auth.createKey(caller, parseInput(CreateKeyRequest, input));
  },

  /** Creates a key for an existing user (operator: `keys create --user`; not capped). */
  async createKeyForUser(userId: string, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    return this.auth.createKeyForUser(userId, parseInput(CreateKeyRequest, input));
  },

  /** `GET /api/auth/keys`: a page of the caller's keys, newest first, without secrets. */
  async listKeys(caller: Caller, query: ListKeysQuery = {}): Promise<ListKeysResponse> {
    return this.auth.listKeys(caller, parseInput(ListKeysQuery, query));
  },

  /** Every key of an existing user, newest first (operator: `keys list --user`); `not_found` for an unknown user. */
  listKeysForUser(userId: string): Promise<{ userId: string; keys: ApiKeySummary[] }> {
    return this.auth.listKeysForUser(userId);
  },

  /** Every user's keys, without secrets (operator: `agent-platform keys list`), the user with the newest key first. */
  listAllKeys(): Promise<{ userId: string; keys: ApiKeySummary[] }[]> {
    return this.auth.listAllKeys();
  },

  /** `DELETE /api/auth/keys/{id}`: revokes one of the caller's keys (also the one in use). */
  deleteKey(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.auth.deleteKey(caller, id);
  },

  /** The caller a presented key belongs to, or undefined for an unknown or malformed key. */
  authenticate(key: string): Promise<Caller | undefined> {
    return this.auth.authenticate(key);
  },

  /** Number of keys of all users (the server prints a first key when there is none). */
  countKeys(): Promise<number> {
    return this.auth.countKeys();
  },
});
