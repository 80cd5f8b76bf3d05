import type { ListPosition, ProjectListQuery, StorageAdapter, UserCounts } from '@agent-platform/core';
import { type Expression, type SqlBool, sql, type Updateable } from 'kysely';
import type { Database } from '../database.js';
import type { Db, StorageDialect } from '../dialect.js';
import { COUNT_COLUMNS } from '../user-counts.js';
import { atomically, deleteLocked, lockUser, type RepositoryContext } from './context.js';

type ProjectRow = Database['projects'];

/** `%`, `_` and the escape character itself match literally in LIKE ... ESCAPE '\'. */
const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Rows at or before `p` in newest-first order (createdAt desc, id desc). */
function atOrBefore(dialect: StorageDialect, p: ListPosition) {
  const t = dialect.time(p.createdAt);
  return sql<SqlBool>`(created_at > ${t} or (created_at = ${t} and id >= ${p.id}))`;
}

function projectFilter(dialect: StorageDialect, query: ProjectListQuery): Expression<SqlBool>[] {
  const conditions = [sql<SqlBool>`user_id = ${query.userId}`];
  if (query.searchWord) {
    conditions.push(sql<SqlBool>`name ${sql.raw(dialect.caseInsensitiveLike)} ${likePattern(query.searchWord)} escape '\\'`);
  }
  return conditions;
}

/** Users, their keys, projects and credentials. */
export function accountRepositories({ db, dialect, records }: RepositoryContext): Pick<StorageAdapter, 'users' | 'apiKeys' | 'projects' | 'credentials'> {
  const { time, flag } = dialect;
  const { toCredential, toKey, toProject, toUser } = records;
  const newestKeys = () => db.selectFrom('api_keys').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc');
  const defaultRow = (over: Db, userId: string, provider: string) =>
    over.selectFrom('credentials').selectAll().where('user_id', '=', userId).where('provider', '=', provider).where('is_default', '=', flag(true)).executeTakeFirst();
  /** The provider's default stops being one (but `except`, the credential about to become it). */
  const clearDefault = async (tx: Db, userId: string, provider: string, except?: string) => {
    await tx
      .updateTable('credentials')
      .set({ is_default: flag(false) })
      .where('user_id', '=', userId)
      .where('provider', '=', provider)
      .where('is_default', '=', flag(true))
      .$if(except !== undefined, (q) => q.where('id', '!=', except as string))
      .execute();
  };
  return {
    users: {
      async insert(user) {
        await db
          .insertInto('users')
          .values({ id: user.id, created_at: time(user.createdAt) })
          .execute();
      },
      async get(id) {
        const row = await db.selectFrom('users').select(['id', 'created_at']).where('id', '=', id).executeTakeFirst();
        return row && toUser(row);
      },
      async lockCounts(userId) {
        // PostgreSQL: the row lock every write of the user's counted rows takes first (see
        // `lockUser`), read in the same statement. SQLite: the transaction's reads and writes
        // already run alone (one writing transaction at a time on the one connection).
        const row = await db
          .selectFrom('users')
          .select(Object.values(COUNT_COLUMNS))
          .where('id', '=', userId)
          .$if(dialect.skipLocked && db.isTransaction, (q) => q.forUpdate())
          .executeTakeFirst();
        if (!row) return undefined;
        return Object.fromEntries(Object.entries(COUNT_COLUMNS).map(([name, column]) => [name, Number(row[column])])) as unknown as UserCounts;
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
            created_at: time(key.createdAt),
            last_used_at: key.lastUsedAt ? time(key.lastUsedAt) : null,
          })
          .execute();
      },
      async findByLookup(lookup) {
        const row = await db.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst();
        return row && toKey(row);
      },
      async list({ userId, limit, offset }) {
        const rows = await newestKeys().where('user_id', '=', userId).limit(limit).offset(offset).execute();
        const total = await db.selectFrom('users').select('key_count').where('id', '=', userId).executeTakeFirst();
        return { items: rows.map(toKey), total: Number(total?.key_count ?? 0), start: offset };
      },
      async listAll() {
        return (await newestKeys().execute()).map(toKey);
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('api_keys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
      async touch(id, at) {
        await db
          .updateTable('api_keys')
          .set({ last_used_at: time(at) })
          .where('id', '=', id)
          .execute();
      },
      async lockBootstrap() {
        // An upsert of one row: a second transaction's upsert of it waits for the first to end
        // (PostgreSQL's row lock; SQLite's write lock), outside a transaction it holds nothing.
        await db
          .insertInto('locks')
          .values({ name: 'first_key' })
          .onConflict((oc) => oc.column('name').doUpdateSet({ name: 'first_key' }))
          .execute();
      },
      async count() {
        const row = await db
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow();
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
            instructions: p.instructions,
            icon: p.icon,
            color: p.color,
            model: p.model,
            provider: p.provider,
            credential_id: p.credentialId,
            provider_options: p.providerOptions === null ? null : JSON.stringify(p.providerOptions),
            created_at: time(p.createdAt),
            updated_at: time(p.updatedAt),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('projects').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toProject(row);
      },
      async list(query) {
        const filter = projectFilter(dialect, query);
        const count = (extra: Expression<SqlBool>[]) =>
          db
            .selectFrom('projects')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where((eb) => eb.and([...filter, ...extra]))
            .executeTakeFirstOrThrow()
            .then((r) => Number(r.n));
        // Without a search word the total is the user's project count (kept by triggers), read
        // in the page's own statement: one read transaction instead of two (on SQLite each
        // costs file locking, more than the small query itself), and both from one snapshot.
        const userCount = db.selectFrom('users').select('project_count').where('id', '=', query.userId);
        let page = db
          .selectFrom('projects')
          .selectAll('projects')
          .select(() => userCount.as('user_project_count'))
          .where((eb) => eb.and(filter))
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.limit);
        let start = query.offset ?? 0;
        if (query.after) {
          page = page.where(sql<SqlBool>`not ${atOrBefore(dialect, query.after)}`);
          start = await count([atOrBefore(dialect, query.after)]);
        } else if (start > 0) {
          page = page.offset(start);
        }
        const rows = await page.execute();
        const total = query.searchWord ? await count([]) : Number((rows.length > 0 ? rows[0]?.user_project_count : (await userCount.executeTakeFirst())?.project_count) ?? 0);
        return { items: rows.map(toProject), total, start };
      },
      async update(userId, id, patch) {
        const set: Updateable<ProjectRow> = { updated_at: time(patch.updatedAt) };
        for (const field of ['name', 'description', 'instructions', 'icon', 'color', 'model', 'provider'] as const) {
          const value = patch[field];
          if (value !== undefined) set[field] = value;
        }
        if (patch.credentialId !== undefined) set.credential_id = patch.credentialId;
        if (patch.providerOptions !== undefined) set.provider_options = patch.providerOptions === null ? null : JSON.stringify(patch.providerOptions);
        const row = await db.updateTable('projects').set(set).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
        return row && toProject(row);
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('projects').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
      async usingCredential(userId, credentialId) {
        const rows = await db.selectFrom('projects').select('id').where('user_id', '=', userId).where('credential_id', '=', credentialId).orderBy('id').execute();
        return rows.map((r) => r.id);
      },
      async namingNoCredential(userId, provider) {
        const rows = await db.selectFrom('projects').select('id').where('user_id', '=', userId).where('credential_id', 'is', null).where('provider', '=', provider).orderBy('id').execute();
        return rows.map((r) => r.id);
      },
    },
    credentials: {
      insert(c) {
        // Under the user's lock: "has the provider a default yet?" and the insert see the same rows.
        return atomically(db, async (tx) => {
          await lockUser(tx, dialect, c.userId);
          const isDefault = c.isDefault === 'if-none' ? (await defaultRow(tx, c.userId, c.provider)) === undefined : c.isDefault;
          if (c.isDefault === true) await clearDefault(tx, c.userId, c.provider);
          await tx
            .insertInto('credentials')
            .values({
              id: c.id,
              user_id: c.userId,
              name: c.name,
              provider: c.provider,
              secret: c.secret,
              last4: c.last4,
              base_url: c.baseUrl,
              base_url_secret: c.baseUrlSecret,
              fields: c.fields === null ? null : JSON.stringify(c.fields),
              proxy: flag(c.proxy),
              is_valid: c.isValid === null ? null : flag(c.isValid),
              is_default: flag(isDefault),
              created_at: time(c.createdAt),
              updated_at: time(c.updatedAt),
            })
            .execute();
          return { ...c, isDefault };
        });
      },
      async get(userId, id) {
        const row = await db.selectFrom('credentials').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toCredential(row);
      },
      async list(userId) {
        const rows = await db.selectFrom('credentials').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
        return rows.map(toCredential);
      },
      async defaultOf(userId, provider) {
        const row = await defaultRow(db, userId, provider);
        return row && toCredential(row);
      },
      update(userId, id, patch) {
        const set: Updateable<Database['credentials']> = { updated_at: time(patch.updatedAt) };
        if (patch.name !== undefined) set.name = patch.name;
        if (patch.secret !== undefined) set.secret = patch.secret;
        if (patch.last4 !== undefined) set.last4 = patch.last4;
        if (patch.baseUrl !== undefined) set.base_url = patch.baseUrl;
        if (patch.baseUrlSecret !== undefined) set.base_url_secret = patch.baseUrlSecret;
        if (patch.fields !== undefined) set.fields = patch.fields === null ? null : JSON.stringify(patch.fields);
        if (patch.proxy !== undefined) set.proxy = flag(patch.proxy);
        if (patch.isValid !== undefined) set.is_valid = patch.isValid === null ? null : flag(patch.isValid);
        if (patch.isDefault !== undefined) set.is_default = flag(patch.isDefault);
        const write = async (over: Db) => {
          const row = await over.updateTable('credentials').set(set).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
          return row && toCredential(row);
        };
        if (patch.isDefault !== true) return write(db);
        // Moving the default: the old one is cleared first (the unique index is checked row by
        // row), under the user's lock so that two moves at once end with one default, not an error.
        return atomically(db, async (tx) => {
          await lockUser(tx, dialect, userId);
          const row = await tx.selectFrom('credentials').select('provider').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
          if (!row) return undefined;
          await clearDefault(tx, userId, row.provider, id);
          return write(tx);
        });
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('credentials').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
    },
  };
}
