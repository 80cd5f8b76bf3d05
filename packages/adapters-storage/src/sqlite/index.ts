import { keywordTerms } from '@agent-platform/core/internal';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, type SqliteDatabase, SqliteDialect } from 'kysely';
import type { Database } from '../kysely/database.js';
import { type DatabaseStorage, kyselyStorage } from '../kysely/storage.js';
import { type Checkpointing, checkpointInWorker } from './checkpointer.js';
import { KEYWORD_VOCABULARY, sqliteDialect } from './dialect.js';
import { KEYWORD_TERMS_FUNCTION, migrations } from './schema.js';

export interface SqliteStorageOptions {
  /** Database file, created when missing; `:memory:` for a private in-memory database. */
  readonly path: string;
}

/**
 * better-sqlite3 as kysely's dialect wants it, keeping prepared statements. kysely prepares
 * every query anew, which costs more than running a small indexed query; the SQL text of a
 * query shape is stable (values are parameters), so a small LRU of statements serves them.
 * kysely runs one query at a time on its single connection, so a statement is never in use
 * twice.
 */
function withStatementCache(database: BetterSqlite3.Database, size = 256): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(text) {
      let statement = statements.get(text);
      if (statement) {
        statements.delete(text); // re-insert: most recently used last
      } else {
        statement = database.prepare(text);
        if (statements.size >= size) statements.delete(statements.keys().next().value as string);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

/**
 * Storage in a SQLite file through kysely and better-sqlite3 (the embedded default).
 * Opening runs pending migrations; the file uses WAL and enforces foreign keys.
 */
export async function sqliteStorage(options: SqliteStorageOptions): Promise<DatabaseStorage> {
  // Loaded here, so that importing this package needs better-sqlite3 (an optional peer
  // dependency) only when SQLite is used.
  const { default: Database } = await import('better-sqlite3');
  const database = new Database(options.path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // A WAL file that a checkpoint emptied is cut back to this size when it is reused.
  database.pragma('journal_size_limit = 67108864');
  // The keyword index's analyzer (stop words, Porter2 stems: see keywordTerms), called by the
  // triggers that keep chunks_fts in step with chunks (migration 0008).
  database.function(KEYWORD_TERMS_FUNCTION, { deterministic: true }, (text) => keywordTerms(String(text ?? '')).join(' '));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });

  // Unordered: work landing in parallel takes numbers ahead of time (a later number may land
  // first), and a database that has run it still runs a lower number that lands after.
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw error;
  }
  // What keyword scores are measured against: each term's document frequency (see the dialect).
  database.exec(`create virtual table if not exists temp.${KEYWORD_VOCABULARY} using fts5vocab(main, chunks_fts, row)`);

  // Checkpoints on a worker thread (see checkpointer.ts); SQLite's own at commit if it cannot.
  let checkpoints: Checkpointing | undefined;
  if (!database.memory) {
    database.pragma('wal_autocheckpoint = 0');
    checkpoints = await checkpointInWorker(database.name, () => {
      if (database.open) database.pragma('wal_autocheckpoint = 1000');
    });
  }
  return kyselyStorage(db, sqliteDialect, async () => {
    await checkpoints?.stop();
    await db.destroy();
  });
}
