import { type Kysely, sql } from 'kysely';

/**
 * Chat ids are unique per user (a client may name its own): chats are keyed by (user_id, id)
 * and messages carry their chat's user. SQLite cannot change a primary key, so both tables are
 * made anew and filled from the old ones, in one transaction. Messages go first: dropping a
 * table deletes its rows, and with foreign keys on that would cascade to the old messages.
 * (SQLite migration 0020.)
 */
export async function keyChatsByUser(db: Kysely<any>): Promise<void> {
  await sql`begin`.execute(db);
  try {
    await sql`create table chats_new (
      id text not null,
      user_id text not null,
      project_id text not null references projects (id) on delete cascade,
      name text not null,
      created_at integer not null,
      updated_at integer not null,
      primary key (user_id, id))`.execute(db);
    await sql`insert into chats_new (id, user_id, project_id, name, created_at, updated_at)
      select id, user_id, project_id, name, created_at, updated_at from chats`.execute(db);
    await sql`create table chat_messages_new (
      user_id text not null,
      chat_id text not null,
      position integer not null,
      role text not null,
      content text,
      tool_calls text,
      tool_call_id text,
      created_at integer not null,
      sources text,
      primary key (user_id, chat_id, position),
      foreign key (user_id, chat_id) references chats_new (user_id, id) on delete cascade)`.execute(db);
    await sql`insert into chat_messages_new (user_id, chat_id, position, role, content, tool_calls, tool_call_id, created_at, sources)
      select c.user_id, m.chat_id, m.position, m.role, m.content, m.tool_calls, m.tool_call_id, m.created_at, m.sources
      from chat_messages m join chats c on c.id = m.chat_id`.execute(db);
    await sql`drop table chat_messages`.execute(db);
    await sql`drop table chats`.execute(db);
    // Renaming also renames the reference of chat_messages_new's foreign key.
    await sql`alter table chats_new rename to chats`.execute(db);
    await sql`alter table chat_messages_new rename to chat_messages`.execute(db);
    await db.schema.createIndex('chats_user_created').on('chats').columns(['user_id', 'created_at desc', 'id desc']).execute();
    await db.schema.createIndex('chats_project').on('chats').column('project_id').execute();
    await sql`commit`.execute(db);
  } catch (error) {
    await sql`rollback`.execute(db);
    throw error;
  }
}
