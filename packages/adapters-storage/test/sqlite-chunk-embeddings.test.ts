import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChunkRecord } from '@agent-platform/core';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteStorage } from '../src/sqlite/index.js';
import { migrations } from '../src/sqlite/schema.js';
import { documentRow, withDocument } from './one-document.js';

// The chunk vectors of migration 0007 (`chunk_embeddings`), as rows: the conformance suite sees
// them only through the repository.
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-chunk-embeddings-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const chunk = (index: number, text: string): ChunkRecord => ({
  id: `chunk_${index}_${text}`,
  documentId: 'doc_1',
  projectId: 'proj_1',
  index,
  text,
  tokenCount: 1,
  metadata: {},
});

const rows = (path: string) => {
  const raw = new BetterSqlite3(path, { readonly: true });
  try {
    return (raw.prepare('select count(*) as n from chunk_embeddings').get() as { n: number }).n;
  } finally {
    raw.close();
  }
};

describe('sqlite chunk embeddings', () => {
  it('leaves no vector row behind when chunks are replaced or their document or project is deleted', async () => {
    const path = join(dir, 'cascade.sqlite');
    const storage = await sqliteStorage({ path });
    try {
      await withDocument(storage);
      const vectors = { model: 'test:m', vectors: [Float32Array.of(1, 0), Float32Array.of(0, 1)] };
      await storage.chunks.replaceForDocument('doc_1', [chunk(0, 'a'), chunk(1, 'b')], vectors);
      expect(rows(path)).toBe(2);
      await storage.chunks.replaceForDocument('doc_1', [chunk(0, 'c')]);
      expect(rows(path)).toBe(0);
      await storage.chunks.replaceForDocument('doc_1', [chunk(0, 'a'), chunk(1, 'b')], vectors);
      expect(await storage.documents.delete('user_1', 'doc_1')).toBe(true);
      expect(rows(path)).toBe(0);

      await storage.documents.insert(documentRow);
      await storage.chunks.replaceForDocument('doc_1', [chunk(0, 'a'), chunk(1, 'b')], vectors);
      expect(await storage.projects.delete('user_1', 'proj_1')).toBe(true);
      expect(rows(path)).toBe(0);
    } finally {
      await storage.close();
    }
  });

  it('opens a database made before 0007: its chunks have no stored vectors until they are indexed again', async () => {
    const path = join(dir, 'upgrade.sqlite');
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < '0007'));
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path) }) });
    expect((await new Migrator({ db, provider: { getMigrations: async () => before } }).migrateToLatest()).error).toBeUndefined();
    await db.destroy();
    const old = new BetterSqlite3(path);
    old.exec(`insert into users (id, created_at) values ('user_1', 0);
      insert into projects (id, user_id, name, model, provider, created_at, updated_at) values ('proj_1', 'user_1', 'p', 'm', 'openai', 0, 0);
      insert into documents (id, user_id, project_id, file_name, file_type, source_type, status, created_at, updated_at)
        values ('doc_1', 'user_1', 'proj_1', 'a.txt', 'txt', 'upload', 'completed', 0, 0);
      insert into chunks (id, document_id, project_id, chunk_index, text, token_count, metadata) values ('chunk_old', 'doc_1', 'proj_1', 0, 'a', 1, '{}');`);
    old.close();

    const storage = await sqliteStorage({ path });
    try {
      expect((await storage.chunks.listByDocument('doc_1')).map((c) => c.text)).toEqual(['a']);
      expect(await storage.chunks.embeddingsByText('doc_1', 'test:m')).toEqual(new Map());
      await storage.chunks.replaceForDocument('doc_1', [chunk(0, 'a')], { model: 'test:m', vectors: [Float32Array.of(0.5, 0.25)] });
      expect(await storage.chunks.embeddingsByText('doc_1', 'test:m')).toEqual(new Map([['a', Float32Array.of(0.5, 0.25)]]));
    } finally {
      await storage.close();
    }
  });
});
