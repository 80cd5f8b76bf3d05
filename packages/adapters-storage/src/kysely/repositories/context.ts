import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { Db, StorageDialect } from '../dialect.js';
import type { Records } from '../records.js';

/** What every repository runs on: the handle (database or transaction), its dialect and converters. */
export interface RepositoryContext {
  readonly db: Db;
  readonly dialect: StorageDialect;
  readonly records: Records;
}

/** Runs `fn` in a transaction, or in the current one when `db` already is one. */
export const atomically = <T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> =>
  db.isTransaction ? fn(db) : (db as Kysely<Database>).transaction().execute(fn);
