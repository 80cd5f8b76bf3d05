import type { Page } from './page.js';

export interface ApiKeyRecord {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  /** Public part of the key used to find it (unique). */
  readonly lookup: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  readonly hash: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

export interface ApiKeyRepository {
  insert(key: ApiKeyRecord): Promise<void>;
  findByLookup(lookup: string): Promise<ApiKeyRecord | undefined>;
  /** A page of the user's keys, newest first; `start` is the offset. */
  list(query: { readonly userId: string; readonly limit: number; readonly offset: number }): Promise<Page<ApiKeyRecord>>;
  /** Every user's keys, newest first (operator: `agent-platform keys list`; never an API caller). */
  listAll(): Promise<ApiKeyRecord[]>;
  /** True when a key of that user was deleted. */
  delete(userId: string, id: string): Promise<boolean>;
  touch(id: string, at: Date): Promise<void>;
  /** Keys of all users (for bootstrap: "does any key exist?"). */
  count(): Promise<number>;
  /**
   * Called inside a transaction: waits until no other transaction holds the bootstrap lock, then
   * holds it until this transaction ends. "No key yet, so create the first" under it runs once
   * among instances starting together on one database (a lock row's upsert: the row lock on
   * PostgreSQL, the write lock on SQLite; memory transactions already run one at a time).
   */
  lockBootstrap(): Promise<void>;
}
