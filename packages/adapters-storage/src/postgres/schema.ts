import { type Kysely, type Migration, sql } from 'kysely';
import { addApprovalClaims, addApprovals } from '../kysely/approvals-table.js';
import { addAuditEvents } from '../kysely/audit-table.js';
import { addCredentialDefaults } from '../kysely/credential-defaults.js';
import { addJobTenants } from '../kysely/job-tenants.js';
import { addMcpSampling } from '../kysely/mcp-sampling.js';
import { addMessageParts, addMessageReasoning } from '../kysely/message-parts.js';
import { addProjectInstructions } from '../kysely/project-instructions.js';
import { addProviderSettings } from '../kysely/provider-settings.js';
import { createResponseTable } from '../kysely/response-tables.js';
import { addStreamLeases, createStreamTables } from '../kysely/stream-tables.js';
import { addToolMcpExposure } from '../kysely/tool-mcp-exposure.js';
import { addUserCountsPostgres } from '../kysely/user-counts.js';
import { createKeywordIndex } from './keyword-index-schema.js';

/**
 * PostgreSQL's migrations: the same logical tables as SQLite's list (see `Database`), in PostgreSQL's types: `timestamptz`, `boolean`,
 * `json` (kept as written, key order included), `bigint` row numbers and sizes, `bytea` vectors. The keyword index is tables of analyzed
 * terms (see keyword-index.ts) instead of FTS5. Applied in name order at open, under kysely's migration lock (a PostgreSQL advisory
 * lock), so instances starting together migrate once. Never edit a released one: add the next number.
 */
export const migrations: Record<string, Migration> = {
  '0001_schema': {
    async up(db: Kysely<any>) {
      const time = 'timestamptz';
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', time, (c) => c.notNull())
        // Kept by a trigger: the unfiltered project list's total without counting rows.
        .addColumn('project_count', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('lookup', 'text', (c) => c.notNull().unique())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('last_used_at', time)
        .execute();
      await db.schema.createIndex('api_keys_user_created').on('api_keys').columns(['user_id', 'created_at desc', 'id desc']).execute();
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
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('projects_user_created').on('projects').columns(['user_id', 'created_at desc', 'id desc']).execute();
      await sql`create function projects_count() returns trigger language plpgsql as $$
        begin
          if tg_op = 'INSERT' then
            update users set project_count = project_count + 1 where id = new.user_id;
          else
            update users set project_count = project_count - 1 where id = old.user_id;
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger projects_count after insert or delete on projects for each row execute function projects_count()`.execute(db);

      await db.schema
        .createTable('documents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('file_id', 'text')
        .addColumn('source_key', 'text', (c) => c.notNull())
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_type', 'text', (c) => c.notNull())
        .addColumn('source_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('vector_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('metadata', 'json', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('documents_project_created').on('documents').columns(['project_id', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('documents_project_status_created').on('documents').columns(['project_id', 'status', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('documents_status').on('documents').column('status').execute();
      await db.schema.createIndex('documents_file').on('documents').column('file_id').execute();
      await db.schema.createIndex('documents_source').on('documents').column('source_key').execute();

      await db.schema
        .createTable('files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_type', 'text', (c) => c.notNull())
        .addColumn('size', 'bigint', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .execute();
      // PostgreSQL does not index a foreign key's column by itself: the project delete's cascade needs it.
      await db.schema.createIndex('files_project').on('files').column('project_id').execute();

      await db.schema
        .createTable('chunks')
        .addColumn('row_id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('chunk_index', 'integer', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('token_count', 'integer', (c) => c.notNull())
        .addColumn('metadata', 'json', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chunks_document').on('chunks').columns(['document_id', 'chunk_index']).execute();
      await db.schema
        .createTable('chunk_embeddings')
        .addColumn('chunk_row_id', 'bigint', (c) => c.primaryKey().references('chunks.row_id').onDelete('cascade'))
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('embedding', 'bytea', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('knowledge_settings')
        .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
        .addColumn('settings', 'json', (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
        .addColumn('payload', 'json', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_created').on('jobs').columns(['created_at', 'id']).execute();
      await db.schema.createIndex('jobs_document').on('jobs').column('document_id').execute();

      await db.schema
        .createTable('credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('base_url', 'text')
        .addColumn('base_url_secret', 'text')
        .addColumn('proxy', 'boolean', (c) => c.notNull().defaultTo(false))
        .addColumn('is_valid', 'boolean')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credentials_user_created').on('credentials').columns(['user_id', 'created_at desc', 'id desc']).execute();

      await db.schema
        .createTable('chats')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chats_user_created').on('chats').columns(['user_id', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('chats_project').on('chats').column('project_id').execute();
      await db.schema
        .createTable('chat_messages')
        .addColumn('chat_id', 'text', (c) => c.notNull().references('chats.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text')
        .addColumn('tool_calls', 'json')
        .addColumn('tool_call_id', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addPrimaryKeyConstraint('chat_messages_pk', ['chat_id', 'position'])
        .execute();

      await db.schema
        .createTable('tools')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('language', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('parameters', 'json', (c) => c.notNull())
        .addColumn('dependencies', 'json', (c) => c.notNull())
        .addColumn('enabled', 'boolean', (c) => c.notNull())
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tools_project_created').on('tools').columns(['project_id', 'created_at desc', 'id desc']).execute();

      await db.schema
        .createTable('mcp_servers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('transport', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('command', 'text')
        .addColumn('args', 'json', (c) => c.notNull())
        .addColumn('header_names', 'json', (c) => c.notNull())
        .addColumn('env_names', 'json', (c) => c.notNull())
        .addColumn('secrets', 'text')
        .addColumn('created_at', time, (c) => c.notNull())
        .addColumn('updated_at', time, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mcp_servers_project_name').on('mcp_servers').columns(['project_id', 'name']).unique().execute();
      await db.schema.createIndex('mcp_servers_project_created').on('mcp_servers').columns(['project_id', 'created_at desc', 'id desc']).execute();

      await createKeywordIndex(db);
    },
  },
  // A project may name the credential its provider calls use (SQLite's 0011). No foreign key:
  // deleting a credential a project names is refused by the platform (409) in one transaction.
  '0002_project_credentials': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('projects').addColumn('credential_id', 'text').execute();
      await db.schema.createIndex('projects_credential').on('projects').columns(['user_id', 'credential_id']).execute();
    },
  },
  // Jobs are claimed with leases (docs/KNOWLEDGE.md, "The job queue"): the holder, when its lease
  // runs out, the fencing token, and the source's size (the claimer's byte budget).
  '0003_job_leases': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('jobs')
        .addColumn('size', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('owner', 'text')
        .addColumn('lease_expires_at', 'timestamptz')
        .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.createIndex('jobs_owner').on('jobs').column('owner').execute();
    },
  },
  // What instances must share (SQLite's 0013): blobs (uploaded files, posted texts) every instance
  // reaches, and the lock rows that make first-key bootstrap happen once when instances start together.
  '0004_blobs_locks': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('blobs')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('bytes', 'bytea', (c) => c.notNull())
        .addColumn('created_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('locks')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .execute();
    },
  },
  '0005_streams': {
    // Resumable chat streams in the database (`storageStreamStore`), for every instance.
    async up(db: Kysely<any>) {
      await createStreamTables(db, 'bigint');
    },
  },
  '0006_stream_leases': {
    // A stream's writer holds it by a lease, so a stream whose instance died is ended by another.
    async up(db: Kysely<any>) {
      await addStreamLeases(db, 'bigint');
    },
  },
  '0007_credential_defaults': {
    // Each user's default credential per provider (SQLite's 0016).
    async up(db: Kysely<any>) {
      await addCredentialDefaults(db, 'boolean');
    },
  },
  '0008_message_sources': {
    // The knowledge an answer was given, kept with the assistant message that ends its turn.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('chat_messages').addColumn('sources', 'json').execute();
    },
  },
  '0009_project_instructions': { up: (db: Kysely<any>) => addProjectInstructions(db) },
  // Each job's tenant, for fair claims between tenants (SQLite's 0019).
  '0010_fair_jobs': { up: addJobTenants },
  // Chat ids are unique per user (SQLite's 0020): chats are keyed by (user_id, id), messages
  // carry their chat's user and refer to the chat by both.
  '0011_chat_ids': {
    async up(db: Kysely<any>) {
      await sql`alter table chat_messages add column user_id text`.execute(db);
      await sql`update chat_messages m set user_id = c.user_id from chats c where c.id = m.chat_id`.execute(db);
      await sql`alter table chat_messages alter column user_id set not null`.execute(db);
      // The foreign key on chat_id alone (named by PostgreSQL when 0001 made it), then the keys.
      const { rows } = await sql<{ name: string }>`select conname as name from pg_constraint
        where conrelid = 'chat_messages'::regclass and contype = 'f'`.execute(db);
      for (const { name } of rows) await sql`alter table chat_messages drop constraint ${sql.id(name)}`.execute(db);
      await sql`alter table chat_messages drop constraint chat_messages_pk`.execute(db);
      await sql`alter table chats drop constraint chats_pkey`.execute(db);
      await sql`alter table chats add constraint chats_pkey primary key (user_id, id)`.execute(db);
      await sql`alter table chat_messages add constraint chat_messages_pk primary key (user_id, chat_id, position)`.execute(db);
      await sql`alter table chat_messages add constraint chat_messages_chat_fkey
        foreign key (user_id, chat_id) references chats (user_id, id) on delete cascade`.execute(db);
    },
  },
  '0012_user_counts': {
    // Each user's keys, credentials, chats, tools, MCP servers, documents and chat messages,
    // counted on the user's row by triggers (SQLite's 0021), for the per-user caps.
    up: addUserCountsPostgres,
  },
  // A user message's images are kept as references in its parts (ChatMessageRecord.parts).
  '0013_message_parts': { up: (db: Kysely<any>) => addMessageParts(db, 'json') },
  '0014_provider_settings': { up: addProviderSettings },
  '0015_message_reasoning': { up: (db: Kysely<any>) => addMessageReasoning(db, 'json') },
  '0016_responses': { up: (db: Kysely<any>) => createResponseTable(db, 'bigint') },
  // Tool calls a person approves, and MCP servers' questions (SQLite's 0026).
  '0017_approvals': { up: (db: Kysely<any>) => addApprovals(db, { time: 'timestamptz', flag: 'boolean', json: 'json' }) },
  // A tool the owner offers on the project's MCP server (SQLite's 0027).
  '0018_tool_mcp_exposure': { up: (db: Kysely<any>) => addToolMcpExposure(db, 'boolean', sql`false`) },
  '0019_mcp_sampling': { up: (db: Kysely<any>) => addMcpSampling(db, 'boolean') },
  // Which continuation resumes a paused turn (SQLite's 0029).
  '0020_approval_claims': { up: (db: Kysely<any>) => addApprovalClaims(db, 'timestamptz') },
  // The audit log (SQLite's 0032).
  '0023_audit_events': { up: (db: Kysely<any>) => addAuditEvents(db, 'timestamptz') },
};
