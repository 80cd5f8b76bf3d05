import { Kysely, Migrator, PostgresDialect, type PostgresPool } from 'kysely';
import type { Database } from '../kysely/database.js';
import { type DatabaseStorage, kyselyStorage } from '../kysely/storage.js';

export type { DatabaseStorage } from '../kysely/storage.js';

import { postgresDialect } from './dialect.js';
import { migrations } from './schema.js';

export interface PostgresStorageOptions {
  /** `postgres://USER:PASSWORD@HOST:PORT/DATABASE`; a pool of `maxConnections` is made for it. */
  readonly connectionString?: string;
  /**
   * A `pg` Pool of your own instead (or anything with pg's `connect()`); `close()` leaves it
   * open for you to end.
   */
  readonly pool?: PostgresPool;
  /** Size of the pool made from `connectionString`. Default 10 (pg's default). */
  readonly maxConnections?: number;
}

async function openPool(options: PostgresStorageOptions): Promise<PostgresPool> {
  if (options.pool) {
    const pool = options.pool;
    return { connect: () => pool.connect(), end: async () => {} };
  }
  if (!options.connectionString) throw new TypeError('postgresStorage needs a connectionString or a pool');
  // Loaded here, so that importing this package needs pg only when PostgreSQL is used.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 10 });
  // An idle connection that breaks (a server restart) is an 'error' event on the pool, fatal to
  // the process when nobody listens; pg has dropped it from the pool already, and the next query
  // opens another.
  pool.on('error', () => {});
  return pool;
}

/**
 * Storage in a PostgreSQL database through kysely's PostgreSQL dialect and `pg`, for several
 * instances sharing one database. Opening runs pending migrations inside kysely's migration lock
 * (`pg_advisory_lock`): instances that start together wait for one another, and each migration
 * runs once, in a transaction.
 *
 * @example
 * const storage = await postgresStorage({ connectionString: 'postgres://app@db.internal:5432/agents' });
 */
export async function postgresStorage(options: PostgresStorageOptions): Promise<DatabaseStorage> {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: await openPool(options) }) });
  // Unordered: work landing in parallel takes numbers ahead of time (a later number may land
  // first), and a database that has run it still runs a lower number that lands after.
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw error;
  }
  return kyselyStorage(db, postgresDialect, () => db.destroy());
}

export { NOTIFIER_APPLICATION_NAME, type PostgresNotifierOptions, postgresNotifier } from './notifier.js';
