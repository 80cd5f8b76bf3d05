import type { Kysely } from 'kysely';

/**
 * The stored responses table (SQLite migration 0025, PostgreSQL 0016): one row per response,
 * its resource and input items as JSON text, times in ms since the epoch (`timeType`: SQLite's
 * integer, PostgreSQL's bigint). A response goes with its user and with its project (a plain
 * model's has none); its chat is only named (a deleted chat leaves the response readable).
 */
export async function createResponseTable(db: Kysely<any>, timeType: 'integer' | 'bigint'): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.references('projects.id').onDelete('cascade'))
    .addColumn('chat_id', 'text')
    .addColumn('previous_response_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', timeType, (c) => c.notNull())
    .addColumn('updated_at', timeType, (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('input', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('responses_project').on('responses').column('project_id').execute();
}
