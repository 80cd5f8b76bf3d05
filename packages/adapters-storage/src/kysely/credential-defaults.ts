import { type Kysely, sql } from 'kysely';

/**
 * Each user's default credential per provider (SQLite migration 0016, PostgreSQL 0007), the flag
 * in `flagType` (SQLite's integer 0/1, PostgreSQL's boolean). Existing credentials keep what
 * projects resolved before: the newest credential of each user and provider not marked
 * `is_valid` false becomes the default (a provider whose credentials are all marked invalid
 * gets none: its projects keep using the environment). A partial unique index then allows at
 * most one default per user and provider, whatever writes come later.
 */
export async function addCredentialDefaults(db: Kysely<any>, flagType: 'integer' | 'boolean'): Promise<void> {
  const yes = sql.lit(flagType === 'boolean' ? true : 1);
  const no = flagType === 'boolean' ? false : 0;
  await db.schema
    .alterTable('credentials')
    .addColumn('is_default', flagType, (c) => c.notNull().defaultTo(no))
    .execute();
  await sql`update credentials set is_default = ${yes} where id in (
      select (select n.id from credentials n
              where n.user_id = p.user_id and n.provider = p.provider and (n.is_valid is null or n.is_valid = ${yes})
              order by n.created_at desc, n.id desc limit 1)
      from (select distinct user_id, provider from credentials) p)`.execute(db);
  await sql`create unique index credentials_default on credentials (user_id, provider) where is_default = ${yes}`.execute(db);
}
