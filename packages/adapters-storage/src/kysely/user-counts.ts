import type { UserCounts } from '@agent-platform/core';
import { type Kysely, sql } from 'kysely';

/** The `users` column counting each kind (`project_count` is older: SQLite 0002, PostgreSQL 0001). */
export const COUNT_COLUMNS = {
  keys: 'key_count',
  projects: 'project_count',
  credentials: 'credential_count',
  chats: 'chat_count',
  tools: 'tool_count',
  mcpServers: 'mcp_server_count',
  documents: 'document_count',
  messages: 'message_count',
} as const satisfies Record<keyof UserCounts, string>;

/** The tables whose rows carry their `user_id`, with the column counting them. */
const OWNED_TABLES = [
  ['api_keys', 'key_count'],
  ['credentials', 'credential_count'],
  ['chats', 'chat_count'],
  ['tools', 'tool_count'],
  ['mcp_servers', 'mcp_server_count'],
  ['documents', 'document_count'],
  ['chat_messages', 'message_count'],
] as const;

/** The new columns, filled from the rows there are (SQLite 0021, PostgreSQL 0012). */
async function addColumns(db: Kysely<any>): Promise<void> {
  for (const [table, column] of OWNED_TABLES) {
    await db.schema
      .alterTable('users')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update users set ${sql.id(column)} = (select count(*) from ${sql.id(table)} t where t.user_id = users.id)`.execute(db);
  }
}

/**
 * Per-user counts of keys, credentials, chats, tools, MCP servers, documents and chat messages,
 * kept by triggers as rows come and go (cascades included; a chat's messages carry its user), as `project_count` is: the per-user
 * caps read them under the user's lock (`UserRepository.lockCounts`) instead of counting rows.
 */
export async function addUserCountsSqlite(db: Kysely<any>): Promise<void> {
  await addColumns(db);
  for (const [table, column] of OWNED_TABLES) {
    await sql`create trigger ${sql.id(`${table}_count_insert`)} after insert on ${sql.id(table)} begin
      update users set ${sql.id(column)} = ${sql.id(column)} + 1 where id = new.user_id; end`.execute(db);
    await sql`create trigger ${sql.id(`${table}_count_delete`)} after delete on ${sql.id(table)} begin
      update users set ${sql.id(column)} = ${sql.id(column)} - 1 where id = old.user_id; end`.execute(db);
  }
}

/** PostgreSQL's `addUserCountsSqlite`: one trigger function for the tables that carry a user id, the column its argument. */
export async function addUserCountsPostgres(db: Kysely<any>): Promise<void> {
  await addColumns(db);
  await sql`create function user_count_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        execute format('update users set %1$I = %1$I + 1 where id = $1', tg_argv[0]) using new.user_id;
      else
        execute format('update users set %1$I = %1$I - 1 where id = $1', tg_argv[0]) using old.user_id;
      end if;
      return null;
    end $$`.execute(db);
  for (const [table, column] of OWNED_TABLES) {
    await sql`create trigger ${sql.id(`${table}_count`)} after insert or delete on ${sql.id(table)}
      for each row execute function user_count_change(${sql.lit(column)})`.execute(db);
  }
}
