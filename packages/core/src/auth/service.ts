import type { z } from 'zod';
import { auditEvent } from '../audit-events.js';
import type { Caller, PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { offsetPageFields } from '../paging.js';
import type { ApiKeySummary, CreateKeyRequest, CreateKeyResponse, ListKeysQuery, ListKeysResponse } from '../schemas/auth.js';
import { MAX_LIST_LIMIT } from '../schemas/common.js';
import type { StorageAdapter } from '../storage/types.js';
import { generateKey, keyLookup, keyMatches, keySummary } from './keys.js';

type KeyBody = z.output<typeof CreateKeyRequest>;
type KeysQuery = z.output<typeof ListKeysQuery>;

/** Marks a key made by the operator, outside the API (`#insertKey`). */
const OPERATOR = 'operator';

/** How often a key's `lastUsedAt` is written at most (it is a hint, not an audit log). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Users and their API keys: the caller's own keys (`createKey`, `listKeys`, `deleteKey`), the
 * operator's (`createUserWithKey`, `createFirstKey`, `createKeyForUser`, `listKeysForUser`,
 * `listAllKeys`, `countKeys`) and `authenticate`, which turns a presented key into a `Caller`.
 */
export class AuthService {
  readonly #ctx: PlatformContext;

  constructor(ctx: PlatformContext) {
    this.#ctx = ctx;
  }

  /** Creates a user and its first key (operator bootstrap: `agent-platform keys create`). */
  async createUserWithKey({ name }: KeyBody): Promise<CreateKeyResponse> {
    const { storage, ids, clock } = this.#ctx;
    const userId = ids.next('user');
    const createdAt = clock.now();
    return storage.transaction(async (tx) => {
      await tx.users.insert({ id: userId, createdAt });
      return this.#insertKey(tx, userId, name, OPERATOR);
    });
  }

  /**
   * The first key of an empty platform: a new user with a key when no key exists yet, else
   * undefined. Instances starting together on one database create one between them (the check
   * and the insert run under the storage's bootstrap lock, in one transaction).
   */
  async createFirstKey({ name }: KeyBody): Promise<CreateKeyResponse | undefined> {
    const { storage, ids, clock } = this.#ctx;
    return storage.transaction(async (tx) => {
      await tx.apiKeys.lockBootstrap();
      if ((await tx.apiKeys.count()) > 0) return undefined;
      const userId = ids.next('user');
      await tx.users.insert({ id: userId, createdAt: clock.now() });
      return this.#insertKey(tx, userId, name, OPERATOR);
    });
  }

  /** `POST /api/auth/create-key`: another key for the caller's user, within the user's cap of keys. */
  async createKey(caller: Caller, { name }: KeyBody): Promise<CreateKeyResponse> {
    return this.#ctx.storage.transaction(async (tx) => {
      await this.#ctx.caps.reserve(tx, caller.userId, 'keys');
      return this.#insertKey(tx, caller.userId, name);
    });
  }

  /** Creates a key for an existing user (operator: `keys create --user`; not capped). */
  async createKeyForUser(userId: string, { name }: KeyBody): Promise<CreateKeyResponse> {
    const { storage } = this.#ctx;
    if (!(await storage.users.get(userId))) throw PlatformError.notFound(`User ${userId} not found`);
    return storage.transaction((tx) => this.#insertKey(tx, userId, name, OPERATOR));
  }

  /**
   * Inserts a key. `by: OPERATOR` (a key made outside the API: `agent-platform keys create`, the
   * first key of a server) also appends its audit event, in the same transaction: the key never
   * exists without it. Keys made through the API are audited by the server's route.
   */
  async #insertKey(storage: StorageAdapter, userId: string, name: string, by?: typeof OPERATOR): Promise<CreateKeyResponse> {
    const { key, lookup, hash } = generateKey();
    const id = this.#ctx.ids.next('key');
    const createdAt = this.#ctx.clock.now();
    await storage.apiKeys.insert({ id, userId, name, lookup, hash, createdAt, lastUsedAt: null });
    if (by === OPERATOR) {
      const entry = { action: 'key.create', resource: 'key', resourceId: id, fields: ['name'] };
      await storage.audit.append(auditEvent(this.#ctx.ids.next('auditEvent'), createdAt, { userId }, entry, 'succeeded'));
    }
    return { success: true, key, id, name, userId, createdAt: createdAt.toISOString() };
  }

  /** `GET /api/auth/keys`: a page of the caller's keys, newest first, without secrets. */
  async listKeys(caller: Caller, q: KeysQuery): Promise<ListKeysResponse> {
    const page = await this.#ctx.storage.apiKeys.list({ userId: caller.userId, limit: q.limit, offset: q.offset });
    return { success: true, userId: caller.userId, keys: page.items.map(keySummary), ...offsetPageFields(q.offset, page) };
  }

  /** Every key of an existing user, newest first (operator: `keys list --user`); `not_found` for an unknown user. */
  async listKeysForUser(userId: string): Promise<{ userId: string; keys: ApiKeySummary[] }> {
    const { storage } = this.#ctx;
    if (!(await storage.users.get(userId))) throw PlatformError.notFound(`User ${userId} not found`);
    const keys: ApiKeySummary[] = [];
    for (let offset = 0; ; offset += MAX_LIST_LIMIT) {
      const page = await storage.apiKeys.list({ userId, limit: MAX_LIST_LIMIT, offset });
      keys.push(...page.items.map(keySummary));
      if (page.items.length < MAX_LIST_LIMIT) return { userId, keys };
    }
  }

  /**
   * Every user's keys, without secrets (operator: `agent-platform keys list`): one entry per
   * user that has a key, the user with the newest key first, each user's keys newest first.
   */
  async listAllKeys(): Promise<{ userId: string; keys: ApiKeySummary[] }[]> {
    const byUser = new Map<string, ApiKeySummary[]>();
    for (const record of await this.#ctx.storage.apiKeys.listAll()) {
      const keys = byUser.get(record.userId) ?? [];
      keys.push(keySummary(record));
      byUser.set(record.userId, keys);
    }
    return [...byUser].map(([userId, keys]) => ({ userId, keys }));
  }

  /** `DELETE /api/auth/keys/{id}`: revokes one of the caller's keys (also the one in use). */
  async deleteKey(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.#ctx.storage.apiKeys.delete(caller.userId, id))) throw PlatformError.notFound(`API key ${id} not found`);
    return { success: true, message: 'API key revoked' };
  }

  /** The caller a presented key belongs to, or undefined for an unknown or malformed key. */
  async authenticate(key: string): Promise<Caller | undefined> {
    const lookup = keyLookup(key);
    if (!lookup) return undefined;
    const { storage, clock } = this.#ctx;
    const record = await storage.apiKeys.findByLookup(lookup);
    if (!record || !keyMatches(key, record.hash)) return undefined;
    const now = clock.now();
    if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      await storage.apiKeys.touch(record.id, now);
    }
    return { userId: record.userId, keyId: record.id };
  }

  /** Number of keys of all users (the server prints a first key when there is none). */
  countKeys(): Promise<number> {
    return this.#ctx.storage.apiKeys.count();
  }
}
