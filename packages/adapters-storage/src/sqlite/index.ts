import type {
  ApiKeyRecord,
  ListPosition,
  ProjectListQuery,
  ProjectRecord,
  StorageAdapter,
  UserRecord,
} from '@agent-platform/core';
import BetterSqlite3 from 'better-sqlite3';
import {
  type Expression,
  Kysely,
  Migrator,
  type SqlBool,
  type SqliteDatabase,
  SqliteDialect,
  sql,
  type Transaction,
} from 'kysely';
import { type Database, migrations } from './schema.js';

export interface SqliteStorageOptions {
  /** Database file, created when missing; `:memory:` for a private in-memory database. */
  readonly path: string;
}

type Db = Kysely<Database> | Transaction<Database>;
type ProjectRow = Database['projects'];
type KeyRow = Database['api_keys'];

const toUser = (row: Pick<Database['users'], 'id' | 'created_at'>): UserRecord => ({ id: row.id, createdAt: new Date(row.created_at) });

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  lookup: row.lookup,
  hash: row.hash,
  createdAt: new Date(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
});

const toProject = (row: ProjectRow): ProjectRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  description: row.description,
  icon: row.icon,
  color: row.color,
  model: row.model,
  provider: row.provider,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

/** `%`, `_` and the escape character itself match literally in LIKE ... ESCAPE '\'. */
const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Rows at or before `p` in newest-first order (createdAt desc, id desc). */
function atOrBefore(p: ListPosition) {
  const t = p.createdAt.getTime();
  return sql<SqlBool>`(created_at > ${t} or (created_at = ${t} and id >= ${p.id}))`;
}

function projectFilter(query: ProjectListQuery): Expression<SqlBool>[] {
  const conditions = [sql<SqlBool>`user_id = ${query.userId}`];
  // SQLite's LIKE is case-insensitive for ASCII letters only.
  if (query.searchWord) conditions.push(sql<SqlBool>`name like ${likePattern(query.searchWord)} escape '\\'`);
  return conditions;
}

function repositories(db: Db): Omit<StorageAdapter, 'transaction' | 'close'> {
  return {
    users: {
      async insert(user) {
        await db.insertInto('users').values({ id: user.id, created_at: user.createdAt.getTime() }).execute();
      },
      async get(id) {
        const row = await db.selectFrom('users').select(['id', 'created_at']).where('id', '=', id).executeTakeFirst();
        return row && toUser(row);
      },
    },
    apiKeys: {
      async insert(key) {
        await db
          .insertInto('api_keys')
          .values({
            id: key.id,
            user_id: key.userId,
            name: key.name,
            lookup: key.lookup,
            hash: key.hash,
            created_at: key.createdAt.getTime(),
            last_used_at: key.lastUsedAt?.getTime() ?? null,
          })
          .execute();
      },
      async findByLookup(lookup) {
        const row = await db.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst();
        return row && toKey(row);
      },
      async list(userId) {
        const rows = await db
          .selectFrom('api_keys')
          .selectAll()
          .where('user_id', '=', userId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        return rows.map(toKey);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('api_keys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
      async touch(id, at) {
        await db.updateTable('api_keys').set({ last_used_at: at.getTime() }).where('id', '=', id).execute();
      },
      async count() {
        const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return Number(row.n);
      },
    },
    projects: {
      async insert(p) {
        await db
          .insertInto('projects')
          .values({
            id: p.id,
            user_id: p.userId,
            name: p.name,
            description: p.description,
            icon: p.icon,
            color: p.color,
            model: p.model,
            provider: p.provider,
            created_at: p.createdAt.getTime(),
            updated_at: p.updatedAt.getTime(),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('projects').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toProject(row);
      },
      async list(query) {
        const filter = projectFilter(query);
        const count = (extra: Expression<SqlBool>[]) =>
          db
            .selectFrom('projects')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where((eb) => eb.and([...filter, ...extra]))
            .executeTakeFirstOrThrow()
            .then((r) => Number(r.n));
        let page = db
          .selectFrom('projects')
          .selectAll()
          .where((eb) => eb.and(filter))
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.limit);
        let start = query.offset ?? 0;
        if (query.after) {
          page = page.where(sql<SqlBool>`not ${atOrBefore(query.after)}`);
          start = await count([atOrBefore(query.after)]);
        } else if (start > 0) {
          page = page.offset(start);
        }
        const rows = await page.execute();
        const total = query.searchWord
          ? await count([])
          : Number(
              (await db.selectFrom('users').select('project_count').where('id', '=', query.userId).executeTakeFirst())
                ?.project_count ?? 0,
            );
        return { items: rows.map(toProject), total, start };
      },
      async update(userId, id, patch) {
        const set: Partial<ProjectRow> = { updated_at: patch.updatedAt.getTime() };
        for (const field of ['name', 'description', 'icon', 'color', 'model', 'provider'] as const) {
          const value = patch[field];
          if (value !== undefined) set[field] = value;
        }
        const row = await db
          .updateTable('projects')
          .set(set)
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .returningAll()
          .executeTakeFirst();
        return row && toProject(row);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('projects').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
    },
  };
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
export async function sqliteStorage(options: SqliteStorageOptions): Promise<StorageAdapter> {
  const database = new BetterSqlite3(options.path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });

  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw error;
  }

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= db.destroy();
    return closed;
  };
  const adapter = (over: Db): StorageAdapter => ({
    ...repositories(over),
    // A transaction inside a transaction runs in the outer one.
    transaction: over.isTransaction ? (fn) => fn(adapter(over)) : (fn) => (over as Kysely<Database>).transaction().execute((trx) => fn(adapter(trx))),
    close,
  });
  return adapter(db);
}
