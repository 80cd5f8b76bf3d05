import { type Generated, type Kysely, type Migration, sql } from 'kysely';

/**
 * Tables as kysely sees them. Timestamps are integers of epoch milliseconds: they sort
 * correctly, compare exactly and round-trip a `Date` to the millisecond.
 */
export interface Database {
  users: { id: string; created_at: number; project_count: Generated<number> };
  api_keys: {
    id: string;
    user_id: string;
    name: string;
    lookup: string;
    hash: string;
    created_at: number;
    last_used_at: number | null;
  };
  projects: {
    id: string;
    user_id: string;
    name: string;
    description: string;
    icon: string;
    color: string;
    model: string;
    provider: string;
    created_at: number;
    updated_at: number;
  };
}

/**
 * Versioned migrations, applied in name order at open. Never edit a released one: add the
 * next number.
 */
export const migrations: Record<string, Migration> = {
  '0001_users_keys_projects': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('lookup', 'text', (c) => c.notNull().unique())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('last_used_at', 'integer')
        .execute();
      // GET /api/auth/keys: the user's keys, newest first.
      await db.schema
        .createIndex('api_keys_user_created')
        .on('api_keys')
        .columns(['user_id', 'created_at desc', 'id desc'])
        .execute();
      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('icon', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('color', 'text', (c) => c.notNull().defaultTo(''))
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // GET /api/v1/projects: the user's projects, newest first (offset and cursor pages).
      await db.schema
        .createIndex('projects_user_created')
        .on('projects')
        .columns(['user_id', 'created_at desc', 'id desc'])
        .execute();
    },
  },
  // The unfiltered project list answers `total` from a counter kept by triggers instead of
  // counting the user's rows on every request (count(*) over 10,000 index entries: ~0.2 ms).
  '0002_user_project_count': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('users')
        .addColumn('project_count', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update users set project_count = (select count(*) from projects where projects.user_id = users.id)`.execute(db);
      await sql`create trigger projects_count_insert after insert on projects begin
        update users set project_count = project_count + 1 where id = new.user_id; end`.execute(db);
      await sql`create trigger projects_count_delete after delete on projects begin
        update users set project_count = project_count - 1 where id = old.user_id; end`.execute(db);
    },
  },
};
