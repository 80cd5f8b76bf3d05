import type { StorageAdapter } from '../storage/types.js';

/** How the storage conformance suites (`describeStorageAdapter` and the suites it runs) make and share adapters. */
export interface StorageSuiteOptions {
  /** A fresh, empty adapter for one test. */
  create(): Promise<StorageAdapter> | StorageAdapter;
  /**
   * Closes `adapter` and opens the same data again, for adapters that persist (a file
   * database). Omit for adapters that forget everything on close.
   */
  reopen?(adapter: StorageAdapter): Promise<StorageAdapter>;
  /**
   * Opens a second adapter on the same data, as another instance would (closed by the suite):
   * job claims race across the two. Omit for adapters whose data no other adapter reaches (then
   * the claims race on one adapter).
   */
  share?(adapter: StorageAdapter): Promise<StorageAdapter>;
  /**
   * Whether transactions of the two adapters `share` makes may be open at once in one process.
   * Default true. False for SQLite files: better-sqlite3 is synchronous, so a transaction
   * waiting for the other's write lock blocks the very thread that would finish the other (one
   * server per SQLite file never meets this; processes on one file wait for each other).
   */
  readonly concurrentTransactions?: boolean;
}
