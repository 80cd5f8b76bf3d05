import type { DeleteResult, Kysely } from 'kysely';
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
export const atomically = <T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> => (db.isTransaction ? fn(db) : (db as Kysely<Database>).transaction().execute(fn));

/**
 * Inside a transaction: makes writes of one user's rows that must see each other wait for one
 * another (PostgreSQL: the user's row, locked until the transaction ends). SQLite runs one
 * writing transaction at a time anyway and has no row locks: nothing to do there.
 */
export async function lockUser(tx: Db, dialect: StorageDialect, userId: string): Promise<void> {
  if (dialect.skipLocked) await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}

/**
 * Deletes a user's row under the user's lock, answering whether one went. Deleting counted rows
 * (a project, with everything its cascade takes) changes the counts on the user's row: taking
 * the user's lock first, as every counted insert does (`UserRepository.lockCounts`), keeps the
 * order of locks the same in every transaction, so an insert holding the user's lock and
 * waiting for a parent row never meets a delete holding that row and waiting for the user's.
 */
export function deleteLocked(db: Db, dialect: StorageDialect, userId: string, remove: (tx: Db) => Promise<DeleteResult>): Promise<boolean> {
  if (!dialect.skipLocked) return remove(db).then((r) => r.numDeletedRows > 0n);
  return atomically(db, async (tx) => {
    await lockUser(tx, dialect, userId);
    return (await remove(tx)).numDeletedRows > 0n;
  });
}
