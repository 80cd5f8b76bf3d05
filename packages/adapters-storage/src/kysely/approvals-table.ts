import type { Kysely } from 'kysely';

/**
 * Tool calls a person approves (SQLite migration 0026, PostgreSQL 0017): a tool's
 * `requires_approval` flag, an MCP server's (`requires_approval`, JSON: `true`, `false` or the
 * tool names), and `approvals`, the pending questions of runs (tool calls to approve, MCP
 * elicitations) with their decisions. A question goes with its project; one of a chat with its
 * chat (a question of a run without a chat has no chat).
 */
export async function addApprovals(db: Kysely<any>, types: { readonly time: 'integer' | 'timestamptz'; readonly flag: 'integer' | 'boolean'; readonly json: 'text' | 'json' }): Promise<void> {
  const no = types.flag === 'integer' ? 0 : false;
  await db.schema
    .alterTable('tools')
    .addColumn('requires_approval', types.flag, (c) => c.notNull().defaultTo(no))
    .execute();
  await db.schema
    .alterTable('mcp_servers')
    .addColumn('requires_approval', 'text', (c) => c.notNull().defaultTo('false'))
    .execute();
  await db.schema
    .createTable('approvals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('chat_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('group_id', 'text', (c) => c.notNull())
    .addColumn('call_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('arguments', 'text', (c) => c.notNull())
    .addColumn('message', 'text')
    .addColumn('schema', types.json)
    .addColumn('resume', types.json)
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('content', types.json)
    .addColumn('created_at', types.time, (c) => c.notNull())
    .addColumn('expires_at', types.time, (c) => c.notNull())
    .addColumn('decided_at', types.time)
    .addForeignKeyConstraint('approvals_chat_fkey', ['user_id', 'chat_id'], 'chats', ['user_id', 'id'], (c) => c.onDelete('cascade'))
    .execute();
  // GET /api/v1/approvals: the user's questions (of a chat, in a state), newest first.
  await db.schema.createIndex('approvals_user_created').on('approvals').columns(['user_id', 'created_at desc', 'id desc']).execute();
  await db.schema.createIndex('approvals_user_chat').on('approvals').columns(['user_id', 'chat_id', 'state']).execute();
  await db.schema.createIndex('approvals_group').on('approvals').columns(['user_id', 'group_id']).execute();
}

/**
 * Who continues a paused turn (SQLite migration 0029, PostgreSQL 0020): a group's claim, set on
 * each of its rows by the one continuation that takes it (`ApprovalRepository.claim`).
 */
export async function addApprovalClaims(db: Kysely<any>, time: 'integer' | 'timestamptz'): Promise<void> {
  await db.schema.alterTable('approvals').addColumn('resumed_by', 'text').execute();
  await db.schema.alterTable('approvals').addColumn('resumed_at', time).execute();
}
