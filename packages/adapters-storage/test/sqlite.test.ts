import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStorageAdapter } from '@agent-platform/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStorage } from '../src/sqlite/index.js';

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

describeStorageAdapter('sqlite :memory:', { create: () => sqliteStorage({ path: ':memory:' }) });

describeStorageAdapter('sqlite file', {
  create: () => openFile(),
  async reopen(storage) {
    const path = paths.get(storage) as string;
    await storage.close();
    return openFile(path);
  },
});

describe('sqlite specifics', () => {
  const inspect = (path: string) => new BetterSqlite3(path, { readonly: true });

  it('records migrations once, uses WAL and enforces foreign keys', async () => {
    const path = join(dir, 'specifics.sqlite');
    const storage = await openFile(path);
    await storage.close();
    const again = await openFile(path);
    const raw = inspect(path);
    try {
      const applied = raw.prepare('select name from kysely_migration order by name').all();
      expect(applied).toEqual([{ name: '0001_users_keys_projects' }, { name: '0002_user_project_count' }, { name: '0003_knowledge' }, { name: '0004_credentials_chats' }, { name: '0005_tools' }, { name: '0006_mcp_servers' }, { name: '0007_chunk_embeddings' }, { name: '0008_keyword_terms' }]);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      // foreign keys: a project of a missing user is refused; deleting a user removes its rows
      await expect(
        again.projects.insert({
          id: 'proj_x', userId: 'user_missing', name: 'x', description: '', icon: '', color: '', model: 'm', provider: 'openai',
          createdAt: new Date(), updatedAt: new Date(),
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
      const cursor = plan(
        "select * from projects where user_id = 'u' and not (created_at > 5 or (created_at = 5 and id >= 'p')) order by created_at desc, id desc limit 21",
      );
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
    const storage = await openFile(path);
    const now = new Date(1);
    await storage.users.insert({ id: 'user_u', createdAt: now });
    await storage.projects.insert({ id: 'proj_p', userId: 'user_u', name: 'p', description: '', icon: '', color: '', model: 'm', provider: 'openai', createdAt: now, updatedAt: now });
    await storage.documents.insert({
      id: 'doc_d', userId: 'user_u', projectId: 'proj_p', fileId: null, fileName: 'd.txt', fileType: 'txt', sourceType: 'text', status: 'completed',
      chunkCount: 1, vectorCount: 1, error: null, metadata: {}, createdAt: now, updatedAt: now,
    });
    await storage.chunks.replaceForDocument('doc_d', [{ id: 'chunk_1', documentId: 'doc_d', projectId: 'proj_p', index: 0, text: 'Earlier studies of kinases', tokenCount: 4, metadata: {} }]);
    await storage.close();
    // Put the file back as 0003-0007 left it: FTS5 over the raw text, kept by triggers, and 0008 not applied.
    const raw = new BetterSqlite3(path);
    raw.exec(`drop trigger chunks_fts_insert; drop trigger chunks_fts_delete; drop trigger chunks_fts_update; drop table chunks_fts;
      create virtual table chunks_fts using fts5(text, content='chunks', content_rowid='row_id', tokenize='unicode61 remove_diacritics 2');
      insert into chunks_fts(chunks_fts) values ('rebuild');
      delete from kysely_migration where name = '0008_keyword_terms';`);
    expect(raw.prepare(`select count(*) as n from chunks_fts where chunks_fts match '"studi"'`).get()).toEqual({ n: 0 });
    raw.close();

    const upgraded = await openFile(path);
    try {
      expect((await upgraded.chunks.keywordSearch('proj_p', 'study of a kinase', 5)).map((h) => h.id)).toEqual(['chunk_1']);
      // And the triggers now analyze new chunks too.
      await upgraded.chunks.replaceForDocument('doc_d', [{ id: 'chunk_2', documentId: 'doc_d', projectId: 'proj_p', index: 0, text: 'Pumps overheated', tokenCount: 2, metadata: {} }]);
      expect((await upgraded.chunks.keywordSearch('proj_p', 'pump overheating', 5)).map((h) => h.id)).toEqual(['chunk_2']);
      expect(await upgraded.chunks.keywordSearch('proj_p', 'studies', 5)).toEqual([]);
    } finally {
      await upgraded.close();
    }
  });

  it('closes idempotently', async () => {
    const storage = await openFile();
    await storage.close();
    await expect(storage.close()).resolves.toBeUndefined();
  });
});
