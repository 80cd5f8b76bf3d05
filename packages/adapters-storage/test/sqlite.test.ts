import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keywordTerms } from '@agent-platform/core/internal';
import { describeStorageAdapter, describeStreamStore, streamStoreOnStorage } from '@agent-platform/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStorage } from '../src/sqlite/index.js';
import { KEYWORD_TERMS_FUNCTION, migrations } from '../src/sqlite/schema.js';
import { expectChatsKeyedByUser, source } from './chats-before-ids.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-sqlite-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const paths = new WeakMap<object, string>();
async function openFile(path = join(dir, `db-${++n}.sqlite`)) {
  const storage = await sqliteStorage({ path });
  paths.set(storage, path);
  return storage;
}

/** A database file migrated only up to `last` (an older release's schema), open for raw writes. */
async function legacyFile(path: string, last: string): Promise<BetterSqlite3.Database> {
  const raw = new BetterSqlite3(path);
  raw.function(KEYWORD_TERMS_FUNCTION, { deterministic: true }, (text) => keywordTerms(String(text ?? '')).join(' '));
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: raw }) });
  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo(last);
  if (error) throw error;
  return raw;
}

describeStorageAdapter('sqlite :memory:', { create: () => sqliteStorage({ path: ':memory:' }) });

describeStorageAdapter('sqlite file', {
  create: () => openFile(),
  async reopen(storage) {
    const path = paths.get(storage) as string;
    await storage.close();
    return openFile(path);
  },
  // A second connection to the same file, as a second process opens it.
  share: (storage) => openFile(paths.get(storage) as string),
  concurrentTransactions: false,
});

describe('sqlite specifics', () => {
  const inspect = (path: string) => new BetterSqlite3(path, { readonly: true });

  it('runs a migration that lands after a higher number already ran (numbers taken ahead by parallel work)', async () => {
    const path = join(dir, 'unordered.sqlite');
    await (await openFile(path)).close();
    // As if 0024 had not landed yet when this database ran 0027: its row and its columns gone.
    const raw = new BetterSqlite3(path);
    raw.prepare("delete from kysely_migration where name = '0024_message_reasoning'").run();
    raw.exec('alter table chat_messages drop column provider; alter table chat_messages drop column reasoning');
    raw.close();
    await (await openFile(path)).close();
    const check = inspect(path);
    try {
      expect(check.prepare("select name from kysely_migration where name in ('0024_message_reasoning', '0027_tool_mcp_exposure') order by name").all()).toEqual([
        { name: '0024_message_reasoning' },
        { name: '0027_tool_mcp_exposure' },
      ]);
      expect((check.prepare('select name from pragma_table_info(?)').all('chat_messages') as { name: string }[]).map((c) => c.name)).toContain('reasoning');
    } finally {
      check.close();
    }
  });

  it('records migrations once, uses WAL and enforces foreign keys', async () => {
    const path = join(dir, 'specifics.sqlite');
    const storage = await openFile(path);
    await storage.close();
    const again = await openFile(path);
    const raw = inspect(path);
    try {
      const applied = raw.prepare('select name from kysely_migration order by name').all();
      expect(applied).toEqual([
        { name: '0001_users_keys_projects' },
        { name: '0002_user_project_count' },
        { name: '0003_knowledge' },
        { name: '0004_credentials_chats' },
        { name: '0005_tools' },
        { name: '0006_mcp_servers' },
        { name: '0007_chunk_embeddings' },
        { name: '0008_keyword_terms' },
        { name: '0009_document_sources' },
        { name: '0010_credential_url_secrets' },
        { name: '0011_project_credentials' },
        { name: '0012_job_leases' },
        { name: '0013_blobs_locks' },
        { name: '0014_streams' },
        { name: '0015_stream_leases' },
        { name: '0016_credential_defaults' },
        { name: '0017_message_sources' },
        { name: '0018_project_instructions' },
        { name: '0019_fair_jobs' },
        { name: '0020_chat_ids' },
        { name: '0021_user_counts' },
        { name: '0022_message_parts' },
        { name: '0023_provider_settings' },
        { name: '0024_message_reasoning' },
        { name: '0025_responses' },
        { name: '0026_approvals' },
        { name: '0027_tool_mcp_exposure' },
        { name: '0028_mcp_sampling' },
        { name: '0029_approval_claims' },
        { name: '0032_audit_events' },
      ]);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      // foreign keys: a project of a missing user is refused; deleting a user removes its rows
      await expect(
        again.projects.insert({
          id: 'proj_x',
          userId: 'user_missing',
          name: 'x',
          description: '',
          instructions: '',
          icon: '',
          color: '',
          model: 'm',
          provider: 'openai',
          credentialId: null,
          providerOptions: null,
          createdAt: new Date(),
          updatedAt: new Date(),
        }),
      ).rejects.toThrow(/FOREIGN KEY/);
    } finally {
      raw.close();
      await again.close();
    }
  });

  it('answers the project list from its index, without sorting', async () => {
    const path = join(dir, 'plan.sqlite');
    await (await openFile(path)).close();
    const raw = inspect(path);
    try {
      const plan = (query: string) =>
        raw
          .prepare(`explain query plan ${query}`)
          .all()
          .map((r) => (r as { detail: string }).detail)
          .join(' | ');
      const list = plan("select * from projects where user_id = 'u' order by created_at desc, id desc limit 21 offset 20");
      expect(list).toContain('projects_user_created');
      expect(list).not.toContain('TEMP B-TREE');
      const cursor = plan("select * from projects where user_id = 'u' and not (created_at > 5 or (created_at = 5 and id >= 'p')) order by created_at desc, id desc limit 21");
      expect(cursor).toContain('projects_user_created');
      expect(cursor).not.toContain('TEMP B-TREE');
      const keys = plan("select * from api_keys where user_id = 'u' order by created_at desc, id desc");
      expect(keys).toContain('api_keys_user_created');
      expect(keys).not.toContain('TEMP B-TREE');
    } finally {
      raw.close();
    }
  });

  it('migration 0008 re-analyzes the chunks of an older database into the stemmed keyword index', async () => {
    const path = join(dir, 'upgrade.sqlite');
    // A file as 0001-0007 left it: FTS5 over the raw text, kept by triggers.
    const raw = await legacyFile(path, '0007_chunk_embeddings');
    raw.exec(`insert into users (id, created_at) values ('user_u', 1);
      insert into projects (id, user_id, name, model, provider, created_at, updated_at) values ('proj_p', 'user_u', 'p', 'm', 'openai', 1, 1);
      insert into documents (id, user_id, project_id, file_id, file_name, file_type, source_type, status, chunk_count, vector_count, metadata, created_at, updated_at)
        values ('doc_d', 'user_u', 'proj_p', null, 'd.txt', 'txt', 'text', 'completed', 1, 1, '{}', 1, 1);
      insert into chunks (id, document_id, project_id, chunk_index, text, token_count, metadata) values ('chunk_1', 'doc_d', 'proj_p', 0, 'Earlier studies of kinases', 4, '{}');`);
    expect(raw.prepare(`select count(*) as n from chunks_fts where chunks_fts match '"studi"'`).get()).toEqual({ n: 0 });
    raw.close();

    const upgraded = await openFile(path);
    try {
      expect((await upgraded.chunks.keywordSearch('proj_p', 'study of a kinase', 5)).map((h) => h.id)).toEqual(['chunk_1']);
      // And the triggers now analyze new chunks too.
      await upgraded.chunks.replaceForDocument('doc_d', [{ id: 'chunk_2', documentId: 'doc_d', projectId: 'proj_p', index: 0, text: 'Pumps overheated', tokenCount: 2, metadata: {} }]);
      expect((await upgraded.chunks.keywordSearch('proj_p', 'pump overheating', 5)).map((h) => h.id)).toEqual(['chunk_2']);
      expect(await upgraded.chunks.keywordSearch('proj_p', 'studies', 5)).toEqual([]);
      expect((await upgraded.documents.get('user_u', 'doc_d'))?.sourceKey).toBe('doc_d');
    } finally {
      await upgraded.close();
    }
  });

  it("migration 0021 counts each user's existing keys, credentials, chats, messages, tools, MCP servers and documents, and keeps counting", async () => {
    const path = join(dir, 'user-counts.sqlite');
    const raw = await legacyFile(path, '0018_project_instructions');
    raw.exec(`insert into users (id, created_at) values ('user_u', 1), ('user_v', 1);
      insert into api_keys (id, user_id, name, lookup, hash, created_at) values ('key_1', 'user_u', 'k', 'l1', 'h', 1), ('key_2', 'user_u', 'k', 'l2', 'h', 1), ('key_3', 'user_v', 'k', 'l3', 'h', 1);
      insert into credentials (id, user_id, name, provider, secret, last4, created_at, updated_at) values ('cred_1', 'user_u', 'c', 'openai', 's', 'abcd', 1, 1);
      insert into projects (id, user_id, name, model, provider, created_at, updated_at) values ('proj_1', 'user_u', 'p', 'm', 'openai', 1, 1), ('proj_2', 'user_v', 'p', 'm', 'openai', 1, 1);
      insert into chats (id, user_id, project_id, name, created_at, updated_at) values ('chat_1', 'user_u', 'proj_1', 'c', 1, 1), ('chat_2', 'user_u', 'proj_1', 'c', 1, 1), ('chat_3', 'user_v', 'proj_2', 'c', 1, 1);
      insert into chat_messages (chat_id, position, role, content, created_at) values ('chat_1', 0, 'user', 'a', 1), ('chat_1', 1, 'assistant', 'b', 1), ('chat_2', 0, 'user', 'c', 1), ('chat_3', 0, 'user', 'd', 1);
      insert into tools (id, user_id, project_id, name, description, language, code, parameters, dependencies, enabled, created_at, updated_at)
        values ('tool_1', 'user_u', 'proj_1', 't', 'd', 'javascript', 'x', '{}', '[]', 1, 1, 1);
      insert into mcp_servers (id, user_id, project_id, name, transport, args, header_names, env_names, created_at, updated_at)
        values ('mcp_1', 'user_u', 'proj_1', 's', 'http', '[]', '[]', '[]', 1, 1);
      insert into documents (id, user_id, project_id, file_name, file_type, source_type, status, created_at, updated_at)
        values ('doc_1', 'user_u', 'proj_1', 'f', 'md', 'upload', 'completed', 1, 1), ('doc_2', 'user_u', 'proj_1', 'f', 'md', 'upload', 'completed', 1, 1);`);
    raw.close();
    const storage = await openFile(path);
    try {
      expect(await storage.users.lockCounts('user_u')).toEqual({ keys: 2, projects: 1, credentials: 1, chats: 2, tools: 1, mcpServers: 1, documents: 2, messages: 3 });
      expect(await storage.users.lockCounts('user_v')).toEqual({ keys: 1, projects: 1, credentials: 0, chats: 1, tools: 0, mcpServers: 0, documents: 0, messages: 1 });
      await storage.chats.delete('user_u', 'chat_1');
      expect(await storage.users.lockCounts('user_u')).toMatchObject({ chats: 1, messages: 1 });
    } finally {
      await storage.close();
    }
  });

  it('migration 0018 gives every existing project its description as its instructions (it was the system prompt)', async () => {
    const path = join(dir, 'instructions.sqlite');
    const raw = await legacyFile(path, '0017_message_sources');
    raw.exec(`insert into users (id, created_at) values ('user_u', 1);
      insert into projects (id, user_id, name, description, model, provider, created_at, updated_at) values
        ('proj_1', 'user_u', 'a', 'You answer in French.' || char(10) || 'Be brief.', 'm', 'openai', 1, 1),
        ('proj_2', 'user_u', 'b', '', 'm', 'openai', 2, 2);`);
    raw.close();
    const storage = await openFile(path);
    try {
      expect(await storage.projects.get('user_u', 'proj_1')).toMatchObject({ description: 'You answer in French.\nBe brief.', instructions: 'You answer in French.\nBe brief.' });
      expect(await storage.projects.get('user_u', 'proj_2')).toMatchObject({ description: '', instructions: '' });
      // New rows start without instructions when none are given.
      await storage.projects.update('user_u', 'proj_2', { description: 'Only a description', updatedAt: new Date(3) });
      expect(await storage.projects.get('user_u', 'proj_2')).toMatchObject({ description: 'Only a description', instructions: '' });
    } finally {
      await storage.close();
    }
  });

  it("migration 0019 gives each queued job its document's user as its tenant, so jobs an older release left are shared fairly", async () => {
    const path = join(dir, 'tenants.sqlite');
    const raw = await legacyFile(path, '0018_project_instructions');
    raw.exec(`insert into users (id, created_at) values ('user_a', 1), ('user_b', 1);
      insert into projects (id, user_id, name, model, provider, created_at, updated_at) values ('proj_a', 'user_a', 'a', 'm', 'openai', 1, 1), ('proj_b', 'user_b', 'b', 'm', 'openai', 1, 1);
      insert into documents (id, user_id, project_id, file_name, file_type, source_type, status, metadata, created_at, updated_at) values
        ('doc_a1', 'user_a', 'proj_a', 'a1.txt', 'txt', 'text', 'pending', '{}', 1, 1),
        ('doc_a2', 'user_a', 'proj_a', 'a2.txt', 'txt', 'text', 'pending', '{}', 2, 2),
        ('doc_b1', 'user_b', 'proj_b', 'b1.txt', 'txt', 'text', 'pending', '{}', 3, 3);
      insert into jobs (id, kind, document_id, payload, created_at) values
        ('job_1', 'index_document', 'doc_a1', '{}', 1), ('job_2', 'index_document', 'doc_a2', '{}', 2), ('job_3', 'index_document', 'doc_b1', '{}', 3);`);
    raw.close();
    const storage = await openFile(path);
    try {
      expect((await storage.jobs.list()).map((j) => [j.id, j.tenant])).toEqual([
        ['job_1', 'user_a'],
        ['job_2', 'user_a'],
        ['job_3', 'user_b'],
      ]);
      // Fair claims see them: user_a holds a lease, so user_b's younger job comes next.
      expect((await storage.jobs.claim({ owner: 'i', now: new Date(10), leaseMs: 1000 }))?.jobId).toBe('job_1');
      expect((await storage.jobs.claim({ owner: 'i', now: new Date(10), leaseMs: 1000 }))?.jobId).toBe('job_3');
    } finally {
      await storage.close();
    }
  });

  it("migration 0020 keys chats by user and id, keeping every chat and message, and lets another user take an existing chat's id", async () => {
    const path = join(dir, 'chat-ids.sqlite');
    const raw = await legacyFile(path, '0018_project_instructions');
    raw.exec(`insert into users (id, created_at) values ('user_u', 1), ('user_v', 1);
      insert into projects (id, user_id, name, model, provider, created_at, updated_at) values ('proj_u', 'user_u', 'u', 'm', 'openai', 1, 1), ('proj_v', 'user_v', 'v', 'm', 'openai', 1, 1);
      insert into chats (id, user_id, project_id, name, created_at, updated_at) values ('my-chat', 'user_u', 'proj_u', 'Mine', 1, 2), ('chat_v', 'user_v', 'proj_v', 'Theirs', 3, 4);
      insert into chat_messages (chat_id, position, role, content, tool_calls, tool_call_id, created_at, sources) values
        ('my-chat', 0, 'user', 'hi', null, null, 5, null),
        ('my-chat', 1, 'assistant', 'hello [1]', null, null, 6, '${JSON.stringify([source])}'),
        ('chat_v', 0, 'user', 'yo', null, null, 7, null);`);
    raw.close();
    const storage = await openFile(path);
    try {
      await expectChatsKeyedByUser(storage);
    } finally {
      await storage.close();
    }
    const after = inspect(path);
    try {
      expect(after.prepare('select count(*) as n from chat_messages').get()).toEqual({ n: 2 });
      expect(after.pragma('foreign_key_check')).toEqual([]);
      const plan = (query: string) => (after.prepare(`explain query plan ${query}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
      expect(plan("select * from chats where user_id = 'u' order by created_at desc, id desc limit 20")).toContain('chats_user_created');
    } finally {
      after.close();
    }
  });

  it("migration 0009 gives each upload's file to its uploader and every other document its own text, also one that named another user's file", async () => {
    const path = join(dir, 'sources.sqlite');
    const raw = await legacyFile(path, '0008_keyword_terms');
    const doc = raw.prepare(`insert into documents (id, user_id, project_id, file_id, file_name, file_type, source_type, status, metadata, created_at, updated_at)
      values (?, ?, ?, ?, ?, 'txt', ?, 'completed', ?, ?, ?)`);
    raw.exec(`insert into users (id, created_at) values ('user_a', 1), ('user_b', 1);
      insert into projects (id, user_id, name, model, provider, created_at, updated_at) values ('proj_a', 'user_a', 'a', 'm', 'openai', 1, 1), ('proj_b', 'user_b', 'b', 'm', 'openai', 1, 1);`);
    doc.run('doc_b_upload', 'user_b', 'proj_b', 'file_b', 'b.txt', 'upload', '{"size":7}', 10, 10);
    // What the bug allowed: A's document naming B's file with source type upload (its text under its own id).
    doc.run('doc_a_forged', 'user_a', 'proj_a', 'file_b', 'x.txt', 'upload', '{"size":3}', 20, 20);
    doc.run('doc_a_upload', 'user_a', 'proj_a', 'file_a', 'a.txt', 'upload', '{"size":5}', 30, 30);
    doc.run('doc_a_linked', 'user_a', 'proj_a', 'file_a', 'notes.txt', 'text', '{"size":4}', 40, 40);
    doc.run('doc_a_text', 'user_a', 'proj_a', null, 't.txt', 'upload', '{"size":2}', 50, 50);
    raw.close();

    const storage = await openFile(path);
    try {
      const sources = Object.fromEntries(
        await Promise.all(
          [
            ['user_b', 'doc_b_upload'],
            ['user_a', 'doc_a_forged'],
            ['user_a', 'doc_a_upload'],
            ['user_a', 'doc_a_linked'],
            ['user_a', 'doc_a_text'],
          ].map(async ([user, id]) => [id, (await storage.documents.get(user as string, id as string))?.sourceKey]),
        ),
      );
      expect(sources).toEqual({ doc_b_upload: 'file_b', doc_a_forged: 'doc_a_forged', doc_a_upload: 'file_a', doc_a_linked: 'doc_a_linked', doc_a_text: 'doc_a_text' });
      expect(await storage.files.get('user_b', 'file_b')).toEqual({ id: 'file_b', userId: 'user_b', projectId: 'proj_b', fileName: 'b.txt', fileType: 'txt', size: 7, createdAt: new Date(10) });
      expect(await storage.files.get('user_a', 'file_b')).toBeUndefined();
      expect((await storage.files.get('user_a', 'file_a'))?.size).toBe(5);
      // A's document naming B's file does not keep it: once B's own document goes, the file may go.
      expect(await storage.files.deleteIfUnreferenced('file_b')).toBe(false);
      await storage.documents.delete('user_b', 'doc_b_upload');
      expect(await storage.files.deleteIfUnreferenced('file_b')).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it("migration 0016 makes each user's newest credential of a provider not marked invalid its default, and refuses a second default", async () => {
    const path = join(dir, 'defaults.sqlite');
    const raw = await legacyFile(path, '0015_stream_leases');
    const credential = raw.prepare(`insert into credentials (id, user_id, name, provider, secret, last4, proxy, is_valid, created_at, updated_at)
      values (?, ?, ?, ?, 's', 'abcd', 0, ?, ?, ?)`);
    raw.exec(`insert into users (id, created_at) values ('user_u', 1), ('user_v', 1);`);
    // What "newest valid wins" chose before: c2 (c3 is newer but marked invalid; c1 older).
    credential.run('cred_1', 'user_u', 'old', 'openai', null, 10, 10);
    credential.run('cred_2', 'user_u', 'valid', 'openai', 1, 20, 20);
    credential.run('cred_3', 'user_u', 'invalid', 'openai', 0, 30, 30);
    // Ties on time are broken by id, as the list orders them.
    credential.run('cred_4', 'user_u', 'a', 'ollama', null, 40, 40);
    credential.run('cred_5', 'user_u', 'b', 'ollama', null, 40, 40);
    // Only invalid ones: none (its projects keep using the environment).
    credential.run('cred_6', 'user_v', 'invalid', 'openai', 0, 50, 50);
    raw.close();

    const storage = await openFile(path);
    try {
      const defaults = async (userId: string) => (await storage.credentials.list(userId)).filter((c) => c.isDefault).map((c) => c.id);
      expect(await defaults('user_u')).toEqual(['cred_5', 'cred_2']);
      expect(await defaults('user_v')).toEqual([]);
      // A credential added now to a provider without a default becomes it; the others do not move.
      const added = await storage.credentials.insert({
        id: 'cred_7',
        userId: 'user_v',
        name: 'new',
        provider: 'openai',
        secret: 's',
        last4: 'abcd',
        fields: null,
        baseUrl: null,
        baseUrlSecret: null,
        proxy: false,
        isValid: null,
        isDefault: 'if-none',
        createdAt: new Date(60),
        updatedAt: new Date(60),
      });
      expect(added.isDefault).toBe(true);
    } finally {
      await storage.close();
    }
    // The database itself refuses a second default of one user and provider.
    const check = new BetterSqlite3(path);
    try {
      expect(() => check.prepare(`update credentials set is_default = 1 where id = 'cred_1'`).run()).toThrow(/UNIQUE constraint failed/);
    } finally {
      check.close();
    }
  });

  it('closes idempotently', async () => {
    const storage = await openFile();
    await storage.close();
    await expect(storage.close()).resolves.toBeUndefined();
  });
});

describeStreamStore('sqlite (storageStreamStore)', { create: async (o) => streamStoreOnStorage(await sqliteStorage({ path: ':memory:' }), o) });
