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
import { addUserCountsSqlite } from '../kysely/user-counts.js';
import { keyChatsByUser } from './chat-ids-migration.js';

/**
 * The SQL function (registered on every connection by sqliteStorage) that turns a chunk text into
 * the terms chunks_fts indexes: `keywordTerms(text).join(' ')`.
 */
export const KEYWORD_TERMS_FUNCTION = 'keyword_terms';

/** Versioned migrations, applied in name order at open. Never edit a released one: add the next number. */
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
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // GET /api/v1/projects: the user's projects, newest first (offset and cursor pages).
      await db.schema.createIndex('projects_user_created').on('projects').columns(['user_id', 'created_at desc', 'id desc']).execute();
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
  '0003_knowledge': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('documents')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('file_id', 'text')
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_type', 'text', (c) => c.notNull())
        .addColumn('source_type', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('chunk_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('vector_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // GET /api/knowledge/documents: a project's documents newest first, optionally by status.
      await db.schema.createIndex('documents_project_created').on('documents').columns(['project_id', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('documents_project_status_created').on('documents').columns(['project_id', 'status', 'created_at desc', 'id desc']).execute();
      // Restart recovery: unfinished documents.
      await db.schema.createIndex('documents_status').on('documents').column('status').execute();

      await db.schema
        .createTable('chunks')
        .addColumn('row_id', 'integer', (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('chunk_index', 'integer', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('token_count', 'integer', (c) => c.notNull())
        .addColumn('metadata', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('chunks_document').on('chunks').columns(['document_id', 'chunk_index']).execute();
      // Keyword search: FTS5 over the chunk texts (external content, kept in sync by triggers).
      await sql`create virtual table chunks_fts using fts5(text, content='chunks', content_rowid='row_id', tokenize='unicode61 remove_diacritics 2')`.execute(db);
      await sql`create trigger chunks_fts_insert after insert on chunks begin
        insert into chunks_fts(rowid, text) values (new.row_id, new.text); end`.execute(db);
      await sql`create trigger chunks_fts_delete after delete on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.row_id, old.text); end`.execute(db);
      await sql`create trigger chunks_fts_update after update of text on chunks begin
        insert into chunks_fts(chunks_fts, rowid, text) values ('delete', old.row_id, old.text);
        insert into chunks_fts(rowid, text) values (new.row_id, new.text); end`.execute(db);

      await db.schema
        .createTable('knowledge_settings')
        .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('document_id', 'text', (c) => c.notNull().references('documents.id').onDelete('cascade'))
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('jobs_created').on('jobs').columns(['created_at', 'id']).execute();
    },
  },
  '0004_credentials_chats': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('secret', 'text', (c) => c.notNull())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('base_url', 'text')
        .addColumn('proxy', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('is_valid', 'integer')
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // GET /api/v1/credentials: the user's credentials, newest first.
      await db.schema.createIndex('credentials_user_created').on('credentials').columns(['user_id', 'created_at desc', 'id desc']).execute();

      await db.schema
        .createTable('chats')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // GET /api/chats: the user's chats, newest first.
      await db.schema.createIndex('chats_user_created').on('chats').columns(['user_id', 'created_at desc', 'id desc']).execute();
      await db.schema.createIndex('chats_project').on('chats').column('project_id').execute();

      await db.schema
        .createTable('chat_messages')
        .addColumn('chat_id', 'text', (c) => c.notNull().references('chats.id').onDelete('cascade'))
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('content', 'text')
        .addColumn('tool_calls', 'text')
        .addColumn('tool_call_id', 'text')
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('chat_messages_pk', ['chat_id', 'position'])
        .execute();
    },
  },
  '0005_tools': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('tools')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('language', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('dependencies', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // GET /api/tools: a project's tools, newest first; the agent's enabled tools.
      await db.schema.createIndex('tools_project_created').on('tools').columns(['project_id', 'created_at desc', 'id desc']).execute();
    },
  },
  '0006_mcp_servers': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('mcp_servers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('transport', 'text', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('command', 'text')
        .addColumn('args', 'text', (c) => c.notNull())
        .addColumn('header_names', 'text', (c) => c.notNull())
        .addColumn('env_names', 'text', (c) => c.notNull())
        .addColumn('secrets', 'text')
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'integer', (c) => c.notNull())
        .execute();
      // A server's name is unique within its project (its tools are offered under it).
      await db.schema.createIndex('mcp_servers_project_name').on('mcp_servers').columns(['project_id', 'name']).unique().execute();
      // A project's servers, newest first (list) and oldest first (the agent's).
      await db.schema.createIndex('mcp_servers_project_created').on('mcp_servers').columns(['project_id', 'created_at desc', 'id desc']).execute();
    },
  },
  // Each chunk's vector, tagged with its model, so a re-index embeds only new text. A table of
  // its own rather than columns of `chunks`: chunk rows stay small (a vector is 1.5-4 KB; the
  // keyword search and the hits' texts read `chunks`), and the FTS5 triggers are untouched. Keyed
  // by the chunk's rowid, it goes with its chunk (and so with the document and the project).
  '0007_chunk_embeddings': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('chunk_embeddings')
        .addColumn('chunk_row_id', 'integer', (c) => c.primaryKey().references('chunks.row_id').onDelete('cascade'))
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('embedding', 'blob', (c) => c.notNull())
        .execute();
    },
  },
  // Keyword search on analyzed terms: stop words dropped, words stemmed (keywordTerms in core),
  // which FTS5's tokenizers cannot do. The index holds only the terms (contentless, with
  // deletes), filled by triggers through the keyword_terms() function; existing chunks are
  // analyzed once here.
  '0008_keyword_terms': {
    async up(db: Kysely<any>) {
      for (const name of ['chunks_fts_insert', 'chunks_fts_delete', 'chunks_fts_update']) await sql`drop trigger if exists ${sql.id(name)}`.execute(db);
      await sql`drop table if exists chunks_fts`.execute(db);
      await sql`create virtual table chunks_fts using fts5(terms, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0')`.execute(db);
      const terms = sql.raw(`${KEYWORD_TERMS_FUNCTION}(new.text)`);
      await sql`create trigger chunks_fts_insert after insert on chunks begin
        insert into chunks_fts(rowid, terms) values (new.row_id, ${terms}); end`.execute(db);
      await sql`create trigger chunks_fts_delete after delete on chunks begin
        delete from chunks_fts where rowid = old.row_id; end`.execute(db);
      await sql`create trigger chunks_fts_update after update of text on chunks begin
        delete from chunks_fts where rowid = old.row_id;
        insert into chunks_fts(rowid, terms) values (new.row_id, ${terms}); end`.execute(db);
      await sql`insert into chunks_fts(rowid, terms) select row_id, ${sql.raw(`${KEYWORD_TERMS_FUNCTION}(text)`)} from chunks`.execute(db);
    },
  },
  // Files as rows owned by a user, and the blob of each document's source recorded with it.
  // Before this, the blob was derived from `file_id` and `source_type`, which callers set, so a
  // document naming another user's file id with source type "upload" re-indexed (read) and, when
  // deleted, removed that user's file. Existing rows: an uploaded file is the earliest document
  // naming its id with source type "upload" (its id was new when the upload made it, so any
  // other document naming it came later); that document's source is the file and its owner
  // owns the file. Every other document's source is its own text (stored under its own id).
  '0009_document_sources': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('files')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
        .addColumn('file_name', 'text', (c) => c.notNull())
        .addColumn('file_type', 'text', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('documents')
        .addColumn('source_key', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await sql`insert into files (id, user_id, project_id, file_name, file_type, size, created_at)
        select d.file_id, d.user_id, d.project_id, d.file_name, d.file_type,
          coalesce(cast(json_extract(d.metadata, '$.size') as integer), 0), d.created_at
        from documents d
        where d.source_type = 'upload' and d.file_id is not null
          and not exists (select 1 from documents e where e.file_id = d.file_id
            and (e.created_at < d.created_at or (e.created_at = d.created_at and e.id < d.id)))`.execute(db);
      await sql`update documents set source_key = case
          when source_type = 'upload' and exists (select 1 from files f where f.id = documents.file_id and f.user_id = documents.user_id
            and not exists (select 1 from documents e where e.file_id = documents.file_id
              and (e.created_at < documents.created_at or (e.created_at = documents.created_at and e.id < documents.id))))
          then file_id else id end`.execute(db);
      // Deleting a document asks whether any document of the file's owner still refers to it.
      await db.schema.createIndex('documents_file').on('documents').columns(['file_id']).execute();
      await db.schema.createIndex('documents_source').on('documents').columns(['source_key']).execute();
    },
  },
  // A credential's base URL may carry user:password or a key in its query: the whole URL is
  // sealed here and `base_url` keeps it masked. Rows stored before keep their URL in `base_url`.
  '0010_credential_url_secrets': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('credentials').addColumn('base_url_secret', 'text').execute();
    },
  },
  // A project may name the credential its provider calls use. No foreign key: deleting a
  // credential a project names is refused by the platform (409), in one transaction with the check.
  '0011_project_credentials': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('projects').addColumn('credential_id', 'text').execute();
      await db.schema.createIndex('projects_credential').on('projects').columns(['user_id', 'credential_id']).execute();
    },
  },
  // Jobs are claimed with leases (docs/KNOWLEDGE.md, "The job queue"): the holder, when its lease
  // runs out, the fencing token, and the source's size (the claimer's byte budget), taken for
  // jobs left by an older release from their document's recorded size.
  '0012_job_leases': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('jobs')
        .addColumn('size', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('jobs').addColumn('owner', 'text').execute();
      await db.schema.alterTable('jobs').addColumn('lease_expires_at', 'integer').execute();
      await db.schema
        .alterTable('jobs')
        .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update jobs set size = coalesce((select cast(json_extract(d.metadata, '$.size') as integer) from documents d where d.id = jobs.document_id), 0)`.execute(db);
      await db.schema.createIndex('jobs_document').on('jobs').column('document_id').execute();
      await db.schema.createIndex('jobs_owner').on('jobs').column('owner').execute();
    },
  },
  // The tables of PostgreSQL's 0004, so the shared repositories have them here too: the server's
  // SQLite mode keeps its blobs in files (one machine) and needs the lock row only for symmetry.
  '0013_blobs_locks': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('blobs')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('bytes', 'blob', (c) => c.notNull())
        .addColumn('created_at', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('locks')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .execute();
    },
  },
  '0014_streams': {
    // Resumable chat streams in the database (`storageStreamStore`), for every instance.
    async up(db: Kysely<any>) {
      await createStreamTables(db, 'integer');
    },
  },
  '0015_stream_leases': {
    // A stream's writer holds it by a lease, so a stream whose instance died is ended by another.
    async up(db: Kysely<any>) {
      await addStreamLeases(db, 'integer');
    },
  },
  '0016_credential_defaults': {
    // Each user's default credential per provider (`CredentialRecord.isDefault`), instead of
    // "the newest one wins".
    async up(db: Kysely<any>) {
      await addCredentialDefaults(db, 'integer');
    },
  },
  '0017_message_sources': {
    // The knowledge an answer was given (JSON array), kept with the assistant message that ends
    // its turn; messages stored before have none.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('chat_messages').addColumn('sources', 'text').execute();
    },
  },
  '0018_project_instructions': { up: (db: Kysely<any>) => addProjectInstructions(db) },
  // Jobs are claimed fairly between tenants (docs/KNOWLEDGE.md, "The job queue"): each job
  // names its tenant, the owner key its share counts against (today the document's user),
  // taken for the jobs left by an older release from their document.
  '0019_fair_jobs': { up: addJobTenants },
  // Chat ids are unique per user: chats keyed by (user_id, id) (sqlite/chat-ids-migration.ts).
  '0020_chat_ids': { up: keyChatsByUser },
  '0021_user_counts': {
    // Each user's keys, credentials, chats, tools, MCP servers, documents and chat messages,
    // counted on the user's row by triggers (as projects are since 0002), for the per-user caps.
    up: addUserCountsSqlite,
  },
  // A user message's images are kept as references in its parts (ChatMessageRecord.parts).
  '0022_message_parts': { up: (db: Kysely<any>) => addMessageParts(db, 'text') },
  '0023_provider_settings': { up: addProviderSettings },
  '0024_message_reasoning': { up: (db: Kysely<any>) => addMessageReasoning(db, 'text') },
  '0025_responses': { up: (db: Kysely<any>) => createResponseTable(db, 'integer') },
  // Tool calls a person approves, and MCP servers' questions (kysely/approvals-table.ts).
  '0026_approvals': { up: (db: Kysely<any>) => addApprovals(db, { time: 'integer', flag: 'integer', json: 'text' }) },
  // A tool the owner offers on the project's MCP server (ToolRecord.exposeOverMcp); existing tools are not.
  '0027_tool_mcp_exposure': { up: (db: Kysely<any>) => addToolMcpExposure(db, 'integer', sql`0`) },
  '0028_mcp_sampling': { up: (db: Kysely<any>) => addMcpSampling(db, 'integer') },
  // Which continuation resumes a paused turn (kysely/approvals-table.ts).
  '0029_approval_claims': { up: (db: Kysely<any>) => addApprovalClaims(db, 'integer') },
  // The audit log (kysely/audit-table.ts).
  '0032_audit_events': { up: (db: Kysely<any>) => addAuditEvents(db, 'integer') },
};
