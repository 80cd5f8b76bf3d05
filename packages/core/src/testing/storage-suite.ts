import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChunkRecord, DocumentRecord, McpServerRecord, ProjectRecord, StorageAdapter } from '../storage/types.js';
import { describeSharedWrites } from './instances-suite.js';
import { describeJobQueue } from './job-queue-suite.js';
import { describeUserCounts } from './user-counts-suite.js';
import type { StorageSuiteOptions } from './storage-options.js';

export type { StorageSuiteOptions } from './storage-options.js';

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(t0 + seconds * 1000);

function project(userId: string, n: number, overrides: Partial<ProjectRecord> = {}): ProjectRecord {
  return {
    id: `proj_${String(n).padStart(6, '0')}`,
    userId,
    name: `Project ${n}`,
    description: '',
    instructions: '',
    icon: '',
    color: '',
    model: 'gpt-4o-mini',
    provider: 'openai',
    credentialId: null,
    createdAt: at(n),
    updatedAt: at(n),
    ...overrides,
  };
}

function document(userId: string, projectId: string, n: number, overrides: Partial<DocumentRecord> = {}): DocumentRecord {
  const id = `doc_${String(n).padStart(6, '0')}`;
  return {
    id,
    userId,
    projectId,
    fileId: null,
    sourceKey: id,
    fileName: `file${n}.md`,
    fileType: 'md',
    sourceType: 'upload',
    status: 'pending',
    chunkCount: 0,
    vectorCount: 0,
    error: null,
    metadata: { size: 10 * n },
    createdAt: at(n),
    updatedAt: at(n),
    ...overrides,
  };
}

function chunk(documentId: string, projectId: string, index: number, text: string): ChunkRecord {
  return {
    id: `chunk_${documentId}_${index}`,
    documentId,
    projectId,
    index,
    text,
    tokenCount: text.split(' ').length,
    metadata: { fileName: 'f.md', chunkIndex: index, section: 'Intro' },
  };
}

/**
 * The behaviour every `StorageAdapter` must have. Call it inside a vitest test file:
 * `describeStorageAdapter('sqlite', { create: () => sqliteStorage({ path: ':memory:' }) })`.
 */
export function describeStorageAdapter(name: string, options: StorageSuiteOptions): void {
  describe(`StorageAdapter conformance: ${name}`, () => {
    let storage: StorageAdapter;

    beforeEach(async () => {
      storage = await options.create();
      await storage.users.insert({ id: 'user_a', createdAt: at(0) });
      await storage.users.insert({ id: 'user_b', createdAt: at(0) });
    });
    afterEach(async () => {
      await storage.close();
    });

    it('stores and reads users', async () => {
      expect(await storage.users.get('user_a')).toEqual({ id: 'user_a', createdAt: at(0) });
      expect(await storage.users.get('user_missing')).toBeUndefined();
    });

    it('rejects a duplicate user id', async () => {
      await expect(storage.users.insert({ id: 'user_a', createdAt: at(1) })).rejects.toThrow();
    });

    it('finds keys by lookup, lists them per user newest first, and deletes only the owner\'s', async () => {
      const key = (id: string, userId: string, s: number) => ({
        id,
        userId,
        name: id,
        lookup: `lk_${id}`,
        hash: `h_${id}`,
        createdAt: at(s),
        lastUsedAt: null,
      });
      await storage.apiKeys.insert(key('key_1', 'user_a', 1));
      await storage.apiKeys.insert(key('key_2', 'user_a', 2));
      await storage.apiKeys.insert(key('key_3', 'user_b', 3));
      expect(await storage.apiKeys.count()).toBe(3);
      expect(await storage.apiKeys.findByLookup('lk_key_2')).toEqual(key('key_2', 'user_a', 2));
      expect(await storage.apiKeys.findByLookup('nope')).toBeUndefined();
      const page = await storage.apiKeys.list({ userId: 'user_a', limit: 10, offset: 0 });
      expect([page.items.map((k) => k.id), page.total, page.start]).toEqual([['key_2', 'key_1'], 2, 0]);
      // A page at a time, with the user's total.
      const second = await storage.apiKeys.list({ userId: 'user_a', limit: 1, offset: 1 });
      expect([second.items.map((k) => k.id), second.total, second.start]).toEqual([['key_1'], 2, 1]);
      expect(await storage.apiKeys.list({ userId: 'user_a', limit: 1, offset: 2 })).toEqual({ items: [], total: 2, start: 2 });
      expect(await storage.apiKeys.list({ userId: 'user_missing', limit: 5, offset: 0 })).toEqual({ items: [], total: 0, start: 0 });
      expect((await storage.apiKeys.listAll()).map((k) => [k.id, k.userId])).toEqual([['key_3', 'user_b'], ['key_2', 'user_a'], ['key_1', 'user_a']]);

      await storage.apiKeys.touch('key_1', at(10));
      expect((await storage.apiKeys.findByLookup('lk_key_1'))?.lastUsedAt).toEqual(at(10));

      expect(await storage.apiKeys.delete('user_a', 'key_3')).toBe(false);
      expect(await storage.apiKeys.delete('user_b', 'key_3')).toBe(true);
      expect(await storage.apiKeys.delete('user_b', 'key_3')).toBe(false);
      expect(await storage.apiKeys.count()).toBe(2);
    });

    it('rejects a duplicate key lookup', async () => {
      const key = { id: 'key_1', userId: 'user_a', name: 'k', lookup: 'same', hash: 'h', createdAt: at(1), lastUsedAt: null };
      await storage.apiKeys.insert(key);
      await expect(storage.apiKeys.insert({ ...key, id: 'key_2' })).rejects.toThrow();
    });

    it('round-trips a project with every field', async () => {
      const p = project('user_a', 1, { description: 'd', instructions: 'You answer in French.', icon: '🤖', color: '#ff0000', provider: 'ollama' });
      await storage.projects.insert(p);
      expect(await storage.projects.get('user_a', p.id)).toEqual(p);
    });

    it("keeps a project's instructions apart from its description, long and multi-line, and changes them alone", async () => {
      const long = `Rules:\n${'Ne réponds qu’en français. 🙂 '.repeat(1100)}`.slice(0, 32_000);
      const p = project('user_a', 1, { description: 'Support bot', instructions: long });
      await storage.projects.insert(p);
      expect((await storage.projects.get('user_a', p.id))?.instructions).toBe(long);
      expect((await storage.projects.list({ userId: 'user_a', limit: 5 })).items[0]?.instructions).toBe(long);
      const updated = await storage.projects.update('user_a', p.id, { instructions: 'Be brief.', updatedAt: at(9) });
      expect(updated).toEqual({ ...p, instructions: 'Be brief.', updatedAt: at(9) });
      expect(await storage.projects.update('user_a', p.id, { description: 'Mail bot', updatedAt: at(10) })).toMatchObject({ description: 'Mail bot', instructions: 'Be brief.' });
    });

    it('never returns another user\'s project', async () => {
      const p = project('user_a', 1);
      await storage.projects.insert(p);
      expect(await storage.projects.get('user_b', p.id)).toBeUndefined();
      expect(await storage.projects.update('user_b', p.id, { name: 'x', updatedAt: at(5) })).toBeUndefined();
      expect(await storage.projects.delete('user_b', p.id)).toBe(false);
      expect((await storage.projects.list({ userId: 'user_b', limit: 10 })).total).toBe(0);
      expect(await storage.projects.get('user_a', p.id)).toEqual(p);
    });

    it('updates only the given fields', async () => {
      const p = project('user_a', 1, { description: 'keep' });
      await storage.projects.insert(p);
      const updated = await storage.projects.update('user_a', p.id, { name: 'Renamed', updatedAt: at(9) });
      expect(updated).toEqual({ ...p, name: 'Renamed', updatedAt: at(9) });
      expect(await storage.projects.get('user_a', p.id)).toEqual(updated);
    });

    it('deletes a project', async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_a', 2));
      expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
      expect((await storage.projects.list({ userId: 'user_a', limit: 10 })).total).toBe(1);
      expect(await storage.projects.get('user_a', 'proj_000001')).toBeUndefined();
      expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(false);
    });

    it('lists newest first with total, limit and offset', async () => {
      for (let n = 1; n <= 25; n++) await storage.projects.insert(project('user_a', n));
      await storage.projects.insert(project('user_b', 99));
      const first = await storage.projects.list({ userId: 'user_a', limit: 10 });
      expect(first.total).toBe(25);
      expect(first.items.map((p) => p.id)).toEqual(
        Array.from({ length: 10 }, (_, i) => `proj_${String(25 - i).padStart(6, '0')}`),
      );
      const last = await storage.projects.list({ userId: 'user_a', limit: 10, offset: 20 });
      expect(last.items.map((p) => p.name)).toEqual(['Project 5', 'Project 4', 'Project 3', 'Project 2', 'Project 1']);
      expect(last.start).toBe(20);
      expect((await storage.projects.list({ userId: 'user_a', limit: 10, offset: 30 })).items).toEqual([]);
      const tenth = first.items[9] as ProjectRecord;
      const next = await storage.projects.list({ userId: 'user_a', limit: 10, after: tenth });
      expect(next.start).toBe(10);
      expect(next.items[0]?.id).toBe('proj_000015');
    });

    it('breaks createdAt ties by id, descending, and pages after a position', async () => {
      // Same timestamp for all: order falls back to id.
      for (let n = 1; n <= 5; n++) await storage.projects.insert(project('user_a', n, { createdAt: at(100) }));
      const all = await storage.projects.list({ userId: 'user_a', limit: 10 });
      expect(all.items.map((p) => p.id)).toEqual(['proj_000005', 'proj_000004', 'proj_000003', 'proj_000002', 'proj_000001']);
      const third = all.items[2] as ProjectRecord;
      const after = await storage.projects.list({ userId: 'user_a', limit: 10, after: { createdAt: third.createdAt, id: third.id } });
      expect(after.items.map((p) => p.id)).toEqual(['proj_000002', 'proj_000001']);
      expect(after.total).toBe(5);
      expect(after.start).toBe(3);
    });

    it('filters by name, case-insensitively, with % and _ as literal characters', async () => {
      await storage.projects.insert(project('user_a', 1, { name: 'Support Bot' }));
      await storage.projects.insert(project('user_a', 2, { name: 'sales assistant' }));
      await storage.projects.insert(project('user_a', 3, { name: '100% coverage' }));
      await storage.projects.insert(project('user_a', 4, { name: 'snake_case' }));
      await storage.projects.insert(project('user_a', 5, { name: 'snakeXcase' }));
      const names = async (searchWord: string) =>
        (await storage.projects.list({ userId: 'user_a', limit: 10, searchWord })).items.map((p) => p.name);
      expect(await names('BOT')).toEqual(['Support Bot']);
      expect(await names('s')).toEqual(['snakeXcase', 'snake_case', 'sales assistant', 'Support Bot']);
      expect(await names('%')).toEqual(['100% coverage']);
      expect(await names('e_c')).toEqual(['snake_case']);
      expect((await storage.projects.list({ userId: 'user_a', limit: 1, searchWord: 's' })).total).toBe(4);
      const afterSales = { createdAt: at(2), id: 'proj_000002' };
      const filtered = await storage.projects.list({ userId: 'user_a', limit: 10, searchWord: 's', after: afterSales });
      expect(filtered.items.map((p) => p.name)).toEqual(['Support Bot']);
      expect(filtered.start).toBe(3);
    });

    it('commits a transaction and rolls back a failed one', async () => {
      await storage.transaction(async (tx) => {
        await tx.users.insert({ id: 'user_c', createdAt: at(1) });
        await tx.projects.insert(project('user_c', 1));
      });
      expect(await storage.projects.get('user_c', 'proj_000001')).toBeDefined();

      await expect(
        storage.transaction(async (tx) => {
          await tx.users.insert({ id: 'user_d', createdAt: at(1) });
          await tx.projects.insert(project('user_d', 2));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await storage.users.get('user_d')).toBeUndefined();
      expect(await storage.projects.get('user_d', 'proj_000002')).toBeUndefined();
    });

    describe('knowledge', () => {
      beforeEach(async () => {
        await storage.projects.insert(project('user_a', 1));
        await storage.projects.insert(project('user_b', 2));
      });

      it('round-trips, lists by status newest first, and isolates users', async () => {
        const d1 = document('user_a', 'proj_000001', 1, { metadata: { size: 5, language: 'en', nested: { a: [1] } } });
        await storage.documents.insert(d1);
        await storage.documents.insert(document('user_a', 'proj_000001', 2, { status: 'completed' }));
        await storage.documents.insert(document('user_a', 'proj_000001', 3));
        await storage.documents.insert(document('user_b', 'proj_000002', 4));
        expect(await storage.documents.get('user_a', d1.id)).toEqual(d1);
        expect(await storage.documents.get('user_b', d1.id)).toBeUndefined();
        const all = await storage.documents.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 0 });
        expect(all.items.map((d) => d.id)).toEqual(['doc_000003', 'doc_000002']);
        expect(all.total).toBe(3);
        const pending = await storage.documents.list({ userId: 'user_a', projectId: 'proj_000001', status: 'pending', limit: 10, offset: 1 });
        expect(pending.items.map((d) => d.id)).toEqual(['doc_000001']);
        expect(pending.total).toBe(2);
        expect((await storage.documents.list({ userId: 'user_b', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(0);
        expect((await storage.documents.listByStatus(['pending', 'processing'])).map((d) => d.id)).toEqual(['doc_000001', 'doc_000003', 'doc_000004']);
      });

      it("keeps files per user and deletes one only when no document of its owner refers to it", async () => {
        const file = { id: 'file_1', userId: 'user_a', projectId: 'proj_000001', fileName: 'a.pdf', fileType: 'pdf', size: 123, createdAt: at(1) };
        await storage.files.insert(file);
        await storage.files.insert({ ...file, id: 'file_2', userId: 'user_b', projectId: 'proj_000002' });
        expect(await storage.files.get('user_a', 'file_1')).toEqual(file);
        expect(await storage.files.get('user_b', 'file_1')).toBeUndefined();
        // The upload's document (source: the file), one linking it, and another user's naming it.
        const upload = document('user_a', 'proj_000001', 1, { fileId: 'file_1', sourceKey: 'file_1' });
        await storage.documents.insert(upload);
        await storage.documents.insert(document('user_a', 'proj_000001', 2, { fileId: 'file_1' }));
        await storage.documents.insert(document('user_b', 'proj_000002', 3, { fileId: 'file_1' }));
        expect(await storage.documents.get('user_a', upload.id)).toEqual(upload);
        expect(await storage.files.deleteIfUnreferenced('file_1')).toBe(false);
        await storage.documents.delete('user_a', 'doc_000001');
        expect(await storage.files.deleteIfUnreferenced('file_1')).toBe(false);
        await storage.documents.delete('user_a', 'doc_000002');
        // Another user's document naming it does not keep it.
        expect(await storage.files.deleteIfUnreferenced('file_1')).toBe(true);
        expect(await storage.files.get('user_a', 'file_1')).toBeUndefined();
        expect(await storage.files.deleteIfUnreferenced('file_1')).toBe(false);
        expect(await storage.files.deleteIfUnreferenced('file_2')).toBe(true);
      });

      it("names the blobs of a project's documents and files, and none of another project", async () => {
        await storage.files.insert({ id: 'file_1', userId: 'user_a', projectId: 'proj_000001', fileName: 'a.pdf', fileType: 'pdf', size: 1, createdAt: at(1) });
        // An uploaded file not (or no longer) the source of a document is still the project's.
        await storage.files.insert({ id: 'file_2', userId: 'user_a', projectId: 'proj_000001', fileName: 'b.pdf', fileType: 'pdf', size: 1, createdAt: at(2) });
        await storage.files.insert({ id: 'file_3', userId: 'user_b', projectId: 'proj_000002', fileName: 'c.pdf', fileType: 'pdf', size: 1, createdAt: at(3) });
        await storage.documents.insert(document('user_a', 'proj_000001', 1, { fileId: 'file_1', sourceKey: 'file_1' }));
        await storage.documents.insert(document('user_a', 'proj_000001', 2));
        await storage.documents.insert(document('user_b', 'proj_000002', 3, { fileId: 'file_3', sourceKey: 'file_3' }));
        await storage.documents.insert(document('user_b', 'proj_000002', 4));
        expect((await storage.documents.blobKeysOfProject('proj_000001')).sort()).toEqual(['doc_000002', 'file_1', 'file_2']);
        expect((await storage.documents.blobKeysOfProject('proj_000002')).sort()).toEqual(['doc_000004', 'file_3']);
        expect(await storage.documents.blobKeysOfProject('proj_000404')).toEqual([]);
      });

      it('updates a document', async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        const updated = await storage.documents.update('doc_000001', {
          status: 'failed',
          error: 'Failed to index document: boom',
          chunkCount: 3,
          metadata: { size: 1, pages: 2 },
          updatedAt: at(50),
        });
        expect(updated).toMatchObject({ status: 'failed', error: 'Failed to index document: boom', chunkCount: 3, vectorCount: 0, metadata: { size: 1, pages: 2 }, updatedAt: at(50) });
        expect(await storage.documents.get('user_a', 'doc_000001')).toEqual(updated);
        expect(await storage.documents.update('doc_missing', { status: 'completed', updatedAt: at(1) })).toBeUndefined();
      });

      it('stores chunks, replaces them atomically, and deletes them with their document', async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 1, 'b'), chunk('doc_000001', 'proj_000001', 0, 'a')]);
        expect((await storage.chunks.listByDocument('doc_000001')).map((c) => c.text)).toEqual(['a', 'b']);
        await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 0, 'only')]);
        const listed = await storage.chunks.listByDocument('doc_000001');
        expect(listed).toEqual([chunk('doc_000001', 'proj_000001', 0, 'only')]);
        expect(await storage.chunks.getMany('proj_000001', ['chunk_doc_000001_0', 'missing'])).toEqual(listed);
        await storage.jobs.insert({ id: 'job_1', kind: 'index_document', documentId: 'doc_000001', tenant: 'user_a', payload: { content: 'x' }, createdAt: at(1) });
        expect(await storage.documents.delete('user_b', 'doc_000001')).toBe(false);
        expect(await storage.documents.delete('user_a', 'doc_000001')).toBe(true);
        expect(await storage.chunks.listByDocument('doc_000001')).toEqual([]);
        expect(await storage.chunks.getMany('proj_000001', ['chunk_doc_000001_0'])).toEqual([]);
        expect(await storage.chunks.get('user_a', 'chunk_doc_000001_0')).toBeUndefined();
        expect(await storage.jobs.list()).toEqual([]);
      });

      it("reads chunks and their vectors by id only within the project, and one chunk only for its owner", async () => {
        const v = (...values: number[]) => Float32Array.from(values);
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.documents.insert(document('user_b', 'proj_000002', 2));
        const mine = chunk('doc_000001', 'proj_000001', 0, 'mine');
        const theirs = chunk('doc_000002', 'proj_000002', 0, 'theirs');
        await storage.chunks.replaceForDocument('doc_000001', [mine], { model: 'test:m1', vectors: [v(1, 0)] });
        await storage.chunks.replaceForDocument('doc_000002', [theirs], { model: 'test:m1', vectors: [v(0, 1)] });
        // The ids a vector store answers may name another project's chunks: they are skipped.
        expect(await storage.chunks.getMany('proj_000001', [theirs.id, mine.id])).toEqual([mine]);
        expect(await storage.chunks.getMany('proj_000002', [mine.id])).toEqual([]);
        expect(await storage.chunks.getMany('proj_000404', [mine.id, theirs.id])).toEqual([]);
        expect(await storage.chunks.embeddingsById('proj_000001', [theirs.id, mine.id], 'test:m1')).toEqual(new Map([[mine.id, v(1, 0)]]));
        expect(await storage.chunks.embeddingsById('proj_000002', [mine.id], 'test:m1')).toEqual(new Map());
        // One chunk by id (what a citation points at): its owner's only.
        expect(await storage.chunks.get('user_a', mine.id)).toEqual(mine);
        expect(await storage.chunks.get('user_a', theirs.id)).toBeUndefined();
        expect(await storage.chunks.get('user_b', mine.id)).toBeUndefined();
        expect(await storage.chunks.get('user_a', 'chunk_missing')).toBeUndefined();
      });

      it("pages a document's chunks in document order, with their total", async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.documents.insert(document('user_a', 'proj_000001', 2));
        const texts = ['a', 'b', 'c', 'd', 'e'];
        // Stored out of order: pages follow the chunks' index, not the order of insertion.
        await storage.chunks.replaceForDocument('doc_000001', [...texts.keys()].reverse().map((i) => chunk('doc_000001', 'proj_000001', i, texts[i] as string)));
        await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000001', 0, 'other')]);
        const first = await storage.chunks.pageByDocument({ documentId: 'doc_000001', limit: 2, offset: 0 });
        expect([first.items.map((c) => c.text), first.total, first.start]).toEqual([['a', 'b'], 5, 0]);
        expect(first.items[0]).toEqual(chunk('doc_000001', 'proj_000001', 0, 'a'));
        const last = await storage.chunks.pageByDocument({ documentId: 'doc_000001', limit: 2, offset: 4 });
        expect([last.items.map((c) => c.text), last.total, last.start]).toEqual([['e'], 5, 4]);
        const past = await storage.chunks.pageByDocument({ documentId: 'doc_000001', limit: 2, offset: 10 });
        expect([past.items, past.total]).toEqual([[], 5]);
        expect(await storage.chunks.pageByDocument({ documentId: 'doc_missing', limit: 2, offset: 0 })).toEqual({ items: [], total: 0, start: 0 });
      });

      it('keeps chunk vectors per embedding model, replaces them with the chunks, and deletes them with the document and the project', async () => {
        const v = (...values: number[]) => Float32Array.from(values);
        const c1 = (index: number, text: string) => chunk('doc_000001', 'proj_000001', index, text);
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.documents.insert(document('user_a', 'proj_000001', 2));
        const input = v(1, 0, 0.5);
        await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'a'), c1(1, 'b')], { model: 'test:m1', vectors: [input, v(0, 1, -0.25)] });
        await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000001', 0, 'a')], { model: 'test:m1', vectors: [v(9, 9, 9)] });
        input[0] = 7; // copied in
        const stored = await storage.chunks.embeddingsByText('doc_000001', 'test:m1');
        expect(stored).toEqual(new Map([['a', v(1, 0, 0.5)], ['b', v(0, 1, -0.25)]]));
        (stored.get('a') as Float32Array)[0] = 7; // copied out
        expect((await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).get('a')).toEqual(v(1, 0, 0.5));
        expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m2')).toEqual(new Map());
        // By chunk id (MMR's keyword-only candidates): only that model's, unknown ids skipped.
        const byId = await storage.chunks.embeddingsById('proj_000001', [c1(1, 'b').id, 'chunk_missing', chunk('doc_000002', 'proj_000001', 0, 'a').id], 'test:m1');
        expect(byId).toEqual(new Map([[c1(1, 'b').id, v(0, 1, -0.25)], ['chunk_doc_000002_0', v(9, 9, 9)]]));
        expect(await storage.chunks.embeddingsById('proj_000001', [c1(1, 'b').id], 'test:m2')).toEqual(new Map());
        expect(await storage.chunks.embeddingsById('proj_000001', [], 'test:m1')).toEqual(new Map());
        // Chunk reads carry no vectors.
        expect(await storage.chunks.listByDocument('doc_000001')).toEqual([c1(0, 'a'), c1(1, 'b')]);
        expect(await storage.chunks.getMany('proj_000001', [c1(0, 'a').id])).toEqual([c1(0, 'a')]);
        expect(await storage.chunks.get('user_a', c1(0, 'a').id)).toEqual(c1(0, 'a'));

        await expect(storage.chunks.replaceForDocument('doc_000001', [c1(0, 'x')], { model: 'test:m1', vectors: [] })).rejects.toThrow();
        expect((await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).size).toBe(2);
        await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'b'), c1(1, 'c')], { model: 'test:m2', vectors: [v(2), v(3)] });
        expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).toEqual(new Map());
        expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m2')).toEqual(new Map([['b', v(2)], ['c', v(3)]]));
        await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'c')]);
        expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m2')).toEqual(new Map());
        expect(await storage.chunks.embeddingsByText('doc_000002', 'test:m1')).toEqual(new Map([['a', v(9, 9, 9)]]));

        await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'd')], { model: 'test:m1', vectors: [v(4)] });
        expect(await storage.documents.delete('user_a', 'doc_000001')).toBe(true);
        expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).toEqual(new Map());
        expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
        expect(await storage.chunks.embeddingsByText('doc_000002', 'test:m1')).toEqual(new Map());
      });

      it('tells whether a project has any chunk', async () => {
        expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.documents.insert(document('user_b', 'proj_000002', 2));
        expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
        await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000002', 0, 'elsewhere')]);
        expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
        await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 0, 'here')]);
        expect(await storage.chunks.anyInProject('proj_000001')).toBe(true);
        await storage.chunks.replaceForDocument('doc_000001', []);
        expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
        expect(await storage.chunks.anyInProject('proj_000002')).toBe(true);
      });

      it('ranks keyword matches by BM25 within a project, ignoring query syntax', async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.documents.insert(document('user_b', 'proj_000002', 2));
        await storage.chunks.replaceForDocument('doc_000001', [
          chunk('doc_000001', 'proj_000001', 0, 'The error code E1234 means the pump overheated'),
          chunk('doc_000001', 'proj_000001', 1, 'Pump maintenance schedule: every pump is checked monthly, pump pump'),
          chunk('doc_000001', 'proj_000001', 2, 'Nothing relevant here at all'),
        ]);
        await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000002', 0, 'E1234 in another project')]);
        const code = await storage.chunks.keywordSearch('proj_000001', 'error E1234?', 10);
        expect(code.map((h) => h.id)).toEqual(['chunk_doc_000001_0']);
        expect(code[0]?.score).toBeGreaterThan(0);
        const pump = await storage.chunks.keywordSearch('proj_000001', 'pump', 10);
        expect(pump.map((h) => h.id)).toEqual(['chunk_doc_000001_1', 'chunk_doc_000001_0']);
        expect(await storage.chunks.keywordSearch('proj_000001', '"unbalanced AND (OR * NEAR', 10)).toEqual([]);
        expect(await storage.chunks.keywordSearch('proj_000001', '  ?! ', 10)).toEqual([]);
        expect(await storage.chunks.keywordSearch('proj_000001', 'pump', 1)).toHaveLength(1);
      });

      it('scores keyword matches in 0..1 against the best the query could score, the same match alike in every query', async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.chunks.replaceForDocument('doc_000001', [
          chunk('doc_000001', 'proj_000001', 0, 'The pump overheated and stopped'),
          chunk('doc_000001', 'proj_000001', 1, 'Garden tools and a watering can'),
          chunk('doc_000001', 'proj_000001', 2, 'Opening hours of the shop'),
        ]);
        const score = async (query: string) => (await storage.chunks.keywordSearch('proj_000001', query, 10)).find((h) => h.id === 'chunk_doc_000001_0')?.score as number;
        const pump = await score('pump');
        expect(pump).toBeGreaterThan(0.2);
        expect(pump).toBeLessThanOrEqual(1);
        // "garden" is another chunk's: the pump chunk answers half the question, and scores so.
        expect(await score('pump garden')).toBeLessThan(pump * 0.6);
        // A word no chunk holds cannot be matched: it changes nothing.
        expect(await score('pump zebra')).toBeCloseTo(pump, 9);
        // "a" is a stop word: it matches nothing, however many texts hold it.
        expect(await storage.chunks.keywordSearch('proj_000001', 'a', 10)).toEqual([]);
        for (const hit of await storage.chunks.keywordSearch('proj_000001', 'pump garden shop hours tools', 10)) {
          expect(hit.score).toBeGreaterThan(0);
          expect(hit.score).toBeLessThanOrEqual(1);
        }
      });

      it('matches word forms (stems), ignores stop words and accents in keyword search', async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.chunks.replaceForDocument('doc_000001', [
          chunk('doc_000001', 'proj_000001', 0, 'Earlier studies showed that the kinase inhibitors were effective'),
          chunk('doc_000001', 'proj_000001', 1, 'The and of which were there, a the is'),
          chunk('doc_000001', 'proj_000001', 2, 'One study of pumps at the Café Zürich'),
        ]);
        const ids = async (query: string) => (await storage.chunks.keywordSearch('proj_000001', query, 10)).map((h) => h.id);
        // "studied" meets "studies" and "study"; "inhibitor" meets "inhibitors": chunk 0 has both.
        expect(await ids('studied inhibitor')).toEqual(['chunk_doc_000001_0', 'chunk_doc_000001_2']);
        expect(await ids('pump')).toEqual(['chunk_doc_000001_2']);
        expect(await ids('cafe zurich')).toEqual(['chunk_doc_000001_2']);
        // Only stop words: nothing to match (chunk 1 is all stop words and never matches).
        expect(await ids('the and of which')).toEqual([]);
      });

      it('keeps knowledge settings per project', async () => {
        expect(await storage.knowledgeSettings.get('proj_000001')).toBeUndefined();
        await storage.knowledgeSettings.put('proj_000001', { chunkSize: 256, searchType: 'hybrid' }, at(1));
        await storage.knowledgeSettings.put('proj_000001', { chunkSize: 512 }, at(2));
        expect(await storage.knowledgeSettings.get('proj_000001')).toEqual({ chunkSize: 512 });
      });

      it('keeps jobs oldest first, unclaimed when queued', async () => {
        await storage.documents.insert(document('user_a', 'proj_000001', 1));
        await storage.jobs.insert({ id: 'job_2', kind: 'index_document', documentId: 'doc_000001', tenant: 'user_a', payload: { n: 2 }, createdAt: at(2) });
        await storage.jobs.insert({ id: 'job_1', kind: 'index_document', documentId: 'doc_000001', tenant: 'user_a', payload: { n: 1 }, size: 123, attempts: 2, createdAt: at(1) });
        expect((await storage.jobs.list()).map((j) => j.id)).toEqual(['job_1', 'job_2']);
        expect(await storage.jobs.get('job_1')).toEqual({
          id: 'job_1', kind: 'index_document', documentId: 'doc_000001', tenant: 'user_a', payload: { n: 1 }, attempts: 2, createdAt: at(1),
          size: 123, owner: null, leaseExpiresAt: null, generation: 0,
        });
        expect((await storage.jobs.get('job_2'))?.size).toBe(0);
        await storage.jobs.delete('job_1');
        expect(await storage.jobs.get('job_1')).toBeUndefined();
      });

      it('deleting a project removes its documents, files, chunks, settings and jobs', async () => {
        await storage.files.insert({ id: 'file_1', userId: 'user_a', projectId: 'proj_000001', fileName: 'a.txt', fileType: 'txt', size: 1, createdAt: at(1) });
        await storage.documents.insert(document('user_a', 'proj_000001', 1, { fileId: 'file_1', sourceKey: 'file_1' }));
        await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 0, 'text')]);
        await storage.knowledgeSettings.put('proj_000001', { topK: 3 }, at(1));
        await storage.jobs.insert({ id: 'job_1', kind: 'index_document', documentId: 'doc_000001', tenant: 'user_a', payload: {}, createdAt: at(1) });
        expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
        expect(await storage.documents.get('user_a', 'doc_000001')).toBeUndefined();
        expect(await storage.chunks.getMany('proj_000001', ['chunk_doc_000001_0'])).toEqual([]);
        expect(await storage.chunks.get('user_a', 'chunk_doc_000001_0')).toBeUndefined();
        expect(await storage.chunks.keywordSearch('proj_000001', 'text', 5)).toEqual([]);
        expect(await storage.knowledgeSettings.get('proj_000001')).toBeUndefined();
        expect(await storage.jobs.list()).toEqual([]);
        expect(await storage.files.get('user_a', 'file_1')).toBeUndefined();
      });
    });

    describe('credentials and chats', () => {
      const credential = (id: string, userId: string, s: number) => ({
        id,
        userId,
        name: `cred ${id}`,
        provider: 'openai',
        secret: `v1:sealed-${id}`,
        last4: 'abcd',
        baseUrl: null,
        baseUrlSecret: null,
        proxy: false,
        isValid: null,
        isDefault: false as boolean | 'if-none',
        createdAt: at(s),
        updatedAt: at(s),
      });

      it('stores credentials per user, newest first, with partial updates', async () => {
        await storage.credentials.insert(credential('cred_1', 'user_a', 1));
        await storage.credentials.insert({ ...credential('cred_2', 'user_a', 2), baseUrl: 'http://127.0.0.1:1/v1?key=****', baseUrlSecret: 'v1:sealed-url', proxy: true, isValid: true });
        await storage.credentials.insert(credential('cred_3', 'user_b', 3));
        expect((await storage.credentials.list('user_a')).map((c) => c.id)).toEqual(['cred_2', 'cred_1']);
        expect(await storage.credentials.get('user_a', 'cred_2')).toMatchObject({ baseUrl: 'http://127.0.0.1:1/v1?key=****', baseUrlSecret: 'v1:sealed-url', proxy: true, isValid: true });
        expect(await storage.credentials.get('user_b', 'cred_1')).toBeUndefined();
        const updated = await storage.credentials.update('user_a', 'cred_1', { isValid: false, name: 'renamed', updatedAt: at(9) });
        expect(updated).toEqual({ ...credential('cred_1', 'user_a', 1), isValid: false, name: 'renamed', updatedAt: at(9) });
        // The address: replaced (masked and sealed), then cleared.
        const moved = await storage.credentials.update('user_a', 'cred_2', { baseUrl: 'http://127.0.0.1:2/v1', baseUrlSecret: null, updatedAt: at(9) });
        expect(moved).toMatchObject({ baseUrl: 'http://127.0.0.1:2/v1', baseUrlSecret: null, proxy: true });
        expect(await storage.credentials.update('user_a', 'cred_2', { baseUrl: null, updatedAt: at(10) })).toMatchObject({ baseUrl: null, baseUrlSecret: null });
        expect(await storage.credentials.get('user_a', 'cred_2')).toMatchObject({ baseUrl: null, baseUrlSecret: null, updatedAt: at(10) });
        expect(await storage.credentials.update('user_b', 'cred_1', { name: 'x', updatedAt: at(9) })).toBeUndefined();
        expect(await storage.credentials.delete('user_b', 'cred_1')).toBe(false);
        expect(await storage.credentials.delete('user_a', 'cred_1')).toBe(true);
        expect(await storage.credentials.get('user_a', 'cred_1')).toBeUndefined();
      });

      it('keeps at most one default per user and provider: the first one, or the one made so', async () => {
        const add = async (id: string, userId: string, s: number, isDefault: boolean | 'if-none', provider = 'openai') =>
          (await storage.credentials.insert({ ...credential(id, userId, s), provider, isDefault })).isDefault;
        const defaults = async (userId: string) => (await storage.credentials.list(userId)).filter((c) => c.isDefault).map((c) => `${c.provider}:${c.id}`);
        // The first credential of a provider becomes its default; the next ones do not.
        expect(await add('cred_1', 'user_a', 1, 'if-none')).toBe(true);
        expect(await add('cred_2', 'user_a', 2, 'if-none')).toBe(false);
        // Per provider and per user.
        expect(await add('cred_3', 'user_a', 3, 'if-none', 'ollama')).toBe(true);
        expect(await add('cred_4', 'user_b', 4, 'if-none')).toBe(true);
        expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_1']);
        // true takes the default over; false never takes it.
        expect(await add('cred_5', 'user_a', 5, true)).toBe(true);
        expect(await add('cred_6', 'user_a', 6, false)).toBe(false);
        expect(await defaults('user_a')).toEqual(['openai:cred_5', 'ollama:cred_3']);
        expect((await storage.credentials.defaultOf('user_a', 'openai'))?.id).toBe('cred_5');
        expect((await storage.credentials.defaultOf('user_b', 'openai'))?.id).toBe('cred_4');
        expect(await storage.credentials.defaultOf('user_a', 'anthropic')).toBeUndefined();

        // An update moves it; another user's id changes nothing.
        expect(await storage.credentials.update('user_a', 'cred_2', { isDefault: true, updatedAt: at(9) })).toMatchObject({ id: 'cred_2', isDefault: true });
        expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_2']);
        expect(await storage.credentials.update('user_b', 'cred_1', { isDefault: true, updatedAt: at(9) })).toBeUndefined();
        expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_2']);
        expect(await defaults('user_b')).toEqual(['openai:cred_4']);
        // Making the default the default again keeps it.
        expect(await storage.credentials.update('user_a', 'cred_2', { isDefault: true, updatedAt: at(9) })).toMatchObject({ isDefault: true });
        expect(await defaults('user_a')).toEqual(['ollama:cred_3', 'openai:cred_2']);

        // false leaves the provider without one; the next credential saved then becomes it.
        expect(await storage.credentials.update('user_a', 'cred_2', { isDefault: false, updatedAt: at(9) })).toMatchObject({ isDefault: false });
        expect(await storage.credentials.defaultOf('user_a', 'openai')).toBeUndefined();
        expect(await add('cred_7', 'user_a', 7, 'if-none')).toBe(true);
        // Deleting the default leaves none (nothing is promoted in its place).
        expect(await storage.credentials.delete('user_a', 'cred_7')).toBe(true);
        expect(await storage.credentials.defaultOf('user_a', 'openai')).toBeUndefined();
        expect(await defaults('user_a')).toEqual(['ollama:cred_3']);
        // It survives a reopen, as every column does.
        if (options.reopen) {
          storage = await options.reopen(storage);
          expect(await defaults('user_a')).toEqual(['ollama:cred_3']);
          expect((await storage.credentials.get('user_b', 'cred_4'))?.isDefault).toBe(true);
        }
      });

      it('finds the projects of a provider that name no credential (those that use its default)', async () => {
        await storage.projects.insert(project('user_a', 1));
        await storage.projects.insert(project('user_a', 2, { credentialId: 'cred_1' }));
        await storage.projects.insert(project('user_a', 3, { provider: 'ollama' }));
        await storage.projects.insert(project('user_a', 4));
        await storage.projects.insert(project('user_b', 5));
        expect(await storage.projects.namingNoCredential('user_a', 'openai')).toEqual(['proj_000001', 'proj_000004']);
        expect(await storage.projects.namingNoCredential('user_a', 'ollama')).toEqual(['proj_000003']);
        expect(await storage.projects.namingNoCredential('user_b', 'openai')).toEqual(['proj_000005']);
        expect(await storage.projects.namingNoCredential('user_b', 'ollama')).toEqual([]);
      });

      it("stores a project's credentialId, changes and clears it, and finds the projects naming a credential", async () => {
        await storage.credentials.insert(credential('cred_1', 'user_a', 1));
        await storage.projects.insert(project('user_a', 1, { credentialId: 'cred_1' }));
        await storage.projects.insert(project('user_a', 2));
        await storage.projects.insert(project('user_a', 3, { credentialId: 'cred_1' }));
        await storage.projects.insert(project('user_b', 4, { credentialId: 'cred_1' }));
        expect(await storage.projects.get('user_a', 'proj_000001')).toMatchObject({ credentialId: 'cred_1' });
        expect(await storage.projects.get('user_a', 'proj_000002')).toMatchObject({ credentialId: null });
        expect((await storage.projects.list({ userId: 'user_a', limit: 10 })).items.map((p) => p.credentialId)).toEqual(['cred_1', null, 'cred_1']);
        expect(await storage.projects.usingCredential('user_a', 'cred_1')).toEqual(['proj_000001', 'proj_000003']);
        expect(await storage.projects.usingCredential('user_b', 'cred_1')).toEqual(['proj_000004']);
        // A patch without credentialId keeps it; null clears it.
        expect(await storage.projects.update('user_a', 'proj_000001', { name: 'renamed', updatedAt: at(9) })).toMatchObject({ credentialId: 'cred_1' });
        expect(await storage.projects.update('user_a', 'proj_000001', { credentialId: null, updatedAt: at(9) })).toMatchObject({ credentialId: null });
        expect(await storage.projects.update('user_a', 'proj_000002', { credentialId: 'cred_1', updatedAt: at(9) })).toMatchObject({ credentialId: 'cred_1' });
        expect(await storage.projects.usingCredential('user_a', 'cred_1')).toEqual(['proj_000002', 'proj_000003']);
        expect(await storage.projects.usingCredential('user_a', 'cred_missing')).toEqual([]);
      });

      it('stores chats with ordered messages, lists them per user, and deletes them with their project', async () => {
        await storage.projects.insert(project('user_a', 1));
        const chat = { id: 'chat_1', userId: 'user_a', projectId: 'proj_000001', name: 'Support', createdAt: at(1), updatedAt: at(1) };
        await storage.chats.insert(chat);
        await storage.chats.insert({ ...chat, id: 'chat_2', createdAt: at(2), updatedAt: at(2) });
        expect(await storage.chats.get('user_a', 'chat_1')).toEqual(chat);
        expect(await storage.chats.get('user_b', 'chat_1')).toBeUndefined();
        const page = await storage.chats.list({ userId: 'user_a', limit: 1, offset: 0 });
        expect(page.items.map((c) => c.id)).toEqual(['chat_2']);
        expect(page.total).toBe(2);
        // One project's chats: its page and its total.
        await storage.projects.insert(project('user_a', 2));
        await storage.chats.insert({ ...chat, id: 'chat_3', projectId: 'proj_000002', createdAt: at(3), updatedAt: at(3) });
        const ofFirst = await storage.chats.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 });
        expect([ofFirst.items.map((c) => c.id), ofFirst.total]).toEqual([['chat_2', 'chat_1'], 2]);
        const ofSecond = await storage.chats.list({ userId: 'user_a', projectId: 'proj_000002', limit: 10, offset: 0 });
        expect([ofSecond.items.map((c) => c.id), ofSecond.total]).toEqual([['chat_3'], 1]);
        expect((await storage.chats.list({ userId: 'user_b', projectId: 'proj_000002', limit: 10, offset: 0 })).total).toBe(0);
        await storage.chats.delete('user_a', 'chat_3');
        await storage.chats.appendMessages('user_a', 'chat_1', [
          { role: 'user', content: 'hi', toolCalls: null, toolCallId: null, createdAt: at(3) },
          { role: 'assistant', content: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":1}' }], toolCallId: null, createdAt: at(3) },
        ]);
        await storage.chats.appendMessages('user_a', 'chat_1', [{ role: 'tool', content: '42', toolCalls: null, toolCallId: 'call_1', createdAt: at(4) }]);
        const messages = await storage.chats.messages('user_a', 'chat_1');
        expect(messages.map((m) => [m.position, m.role])).toEqual([
          [0, 'user'],
          [1, 'assistant'],
          [2, 'tool'],
        ]);
        expect(messages[1]?.toolCalls).toEqual([{ id: 'call_1', name: 'lookup', arguments: '{"q":1}' }]);
        expect(messages[2]).toMatchObject({ chatId: 'chat_1', toolCallId: 'call_1', content: '42', createdAt: at(4) });
        // Renamed by its user only; the other user's call changes nothing.
        expect(await storage.chats.update('user_b', 'chat_1', { name: 'Stolen', updatedAt: at(5) })).toBeUndefined();
        expect(await storage.chats.update('user_a', 'chat_1', { name: 'Refunds', updatedAt: at(5) })).toEqual({ ...chat, name: 'Refunds', updatedAt: at(5) });
        expect(await storage.chats.get('user_a', 'chat_1')).toEqual({ ...chat, name: 'Refunds', updatedAt: at(5) });
        expect(await storage.chats.update('user_a', 'chat_missing', { name: 'x', updatedAt: at(5) })).toBeUndefined();
        await storage.chats.touch('user_a', 'chat_1', at(10));
        expect((await storage.chats.get('user_a', 'chat_1'))?.updatedAt).toEqual(at(10));
        expect(await storage.chats.delete('user_b', 'chat_1')).toBe(false);
        expect(await storage.chats.delete('user_a', 'chat_1')).toBe(true);
        expect(await storage.chats.messages('user_a', 'chat_1')).toEqual([]);
        await storage.projects.delete('user_a', 'proj_000001');
        expect(await storage.chats.get('user_a', 'chat_2')).toBeUndefined();
      });

      it("keys chats by user and id: another user's chat of the same id is a separate chat, the user's own duplicate a conflict", async () => {
        await storage.projects.insert(project('user_a', 1));
        await storage.projects.insert(project('user_b', 2));
        const mine = { id: 'shared-id', userId: 'user_a', projectId: 'proj_000001', name: 'A', createdAt: at(1), updatedAt: at(1) };
        const theirs = { ...mine, userId: 'user_b', projectId: 'proj_000002', name: 'B', createdAt: at(2), updatedAt: at(2) };
        await storage.chats.insert(mine);
        await storage.chats.insert(theirs);
        await expect(storage.chats.insert({ ...mine, name: 'again' })).rejects.toMatchObject({ code: 'conflict' });
        expect(await storage.chats.get('user_a', 'shared-id')).toEqual(mine);
        expect(await storage.chats.get('user_b', 'shared-id')).toEqual(theirs);
        const say = (content: string) => ({ role: 'user' as const, content, toolCalls: null, toolCallId: null, createdAt: at(3) });
        await storage.chats.appendMessages('user_a', 'shared-id', [say('a0'), say('a1')]);
        await storage.chats.appendMessages('user_b', 'shared-id', [say('b0')]);
        expect((await storage.chats.messages('user_a', 'shared-id')).map((m) => [m.position, m.content])).toEqual([[0, 'a0'], [1, 'a1']]);
        expect((await storage.chats.messages('user_b', 'shared-id')).map((m) => [m.position, m.content])).toEqual([[0, 'b0']]);
        await expect(storage.chats.appendMessages('user_a', 'chat_missing', [say('x')])).rejects.toThrow();
        // Each call reaches its user's chat only.
        await storage.chats.touch('user_b', 'shared-id', at(9));
        expect((await storage.chats.get('user_a', 'shared-id'))?.updatedAt).toEqual(at(1));
        expect(await storage.chats.update('user_b', 'shared-id', { name: 'B2', updatedAt: at(10) })).toMatchObject({ name: 'B2', userId: 'user_b' });
        expect((await storage.chats.get('user_a', 'shared-id'))?.name).toBe('A');
        expect(await storage.chats.delete('user_b', 'shared-id')).toBe(true);
        expect(await storage.chats.get('user_b', 'shared-id')).toBeUndefined();
        expect(await storage.chats.messages('user_b', 'shared-id')).toEqual([]);
        expect(await storage.chats.get('user_a', 'shared-id')).toEqual(mine);
        expect(await storage.chats.messages('user_a', 'shared-id')).toHaveLength(2);
        // Made again after its deletion, it starts empty.
        await storage.chats.insert(theirs);
        expect(await storage.chats.messages('user_b', 'shared-id')).toEqual([]);
        // A project's deletion takes its user's chats only.
        await storage.projects.delete('user_b', 'proj_000002');
        expect(await storage.chats.get('user_b', 'shared-id')).toBeUndefined();
        expect(await storage.chats.messages('user_a', 'shared-id')).toHaveLength(2);
      });

      it("keeps an answer's sources with its message, in order, and none for messages given none or an empty list", async () => {
        await storage.projects.insert(project('user_a', 1));
        await storage.chats.insert({ id: 'chat_s', userId: 'user_a', projectId: 'proj_000001', name: 'Sources', createdAt: at(1), updatedAt: at(1) });
        const sources = [
          { index: 1, chunkId: 'chunk_b', documentId: 'doc_2', fileName: 'refunds — policy.md', score: 0.8125, excerpt: 'Refunds are given within 30 days of delivery, “no questions asked”…' },
          { index: 2, chunkId: 'chunk_a', documentId: 'doc_1', fileName: 'shipping.md', score: 0.25, excerpt: '' },
        ];
        const input = sources.map((s) => ({ ...s }));
        await storage.chats.appendMessages('user_a', 'chat_s', [
          { role: 'user', content: 'refunds?', toolCalls: null, toolCallId: null, createdAt: at(2) },
          { role: 'assistant', content: 'Within 30 days [1].', toolCalls: null, toolCallId: null, sources: input, createdAt: at(2) },
          { role: 'assistant', content: 'And nothing else.', toolCalls: null, toolCallId: null, sources: [], createdAt: at(3) },
        ]);
        input[0] = { ...sources[1], index: 9 } as (typeof input)[number];
        const messages = await storage.chats.messages('user_a', 'chat_s');
        expect(messages.map((m) => m.sources)).toEqual([undefined, sources, undefined]);
        expect(messages[1]).toEqual({ chatId: 'chat_s', position: 1, role: 'assistant', content: 'Within 30 days [1].', toolCalls: null, toolCallId: null, sources, createdAt: at(2) });
        (messages[1]?.sources as unknown as { index: number }[])[0] = { index: 7 };
        expect((await storage.chats.messages('user_a', 'chat_s'))[1]?.sources).toEqual(sources);
      });
    });

    describe('tools', () => {
      const tool = (id: string, n: number, overrides: Partial<import('../storage/types.js').ToolRecord> = {}) => ({
        id,
        userId: 'user_a',
        projectId: 'proj_000001',
        name: `tool ${n}`,
        description: 'd',
        language: 'javascript' as const,
        code: 'function main() { return 1 }',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
        dependencies: [],
        enabled: true,
        createdAt: at(n),
        updatedAt: at(n),
        ...overrides,
      });

      it('stores tools per project, newest first, enabled ones for the agent, and deletes them with the project', async () => {
        await storage.projects.insert(project('user_a', 1));
        await storage.tools.insert(tool('tool_1', 1));
        await storage.tools.insert(tool('tool_2', 2, { enabled: false, dependencies: ['lodash'] }));
        await storage.tools.insert(tool('tool_3', 3));
        expect(await storage.tools.get('user_a', 'tool_2')).toEqual(tool('tool_2', 2, { enabled: false, dependencies: ['lodash'] }));
        expect(await storage.tools.get('user_b', 'tool_2')).toBeUndefined();
        const page = await storage.tools.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 0 });
        expect(page.items.map((t) => t.id)).toEqual(['tool_3', 'tool_2']);
        expect(page.total).toBe(3);
        expect((await storage.tools.enabled('proj_000001')).map((t) => t.id)).toEqual(['tool_1', 'tool_3']);
        const updated = await storage.tools.update('user_a', 'tool_1', { enabled: false, code: 'x', updatedAt: at(9) });
        expect(updated).toMatchObject({ enabled: false, code: 'x', name: 'tool 1', updatedAt: at(9) });
        expect(await storage.tools.update('user_b', 'tool_1', { name: 'x', updatedAt: at(9) })).toBeUndefined();
        expect(await storage.tools.delete('user_b', 'tool_3')).toBe(false);
        expect(await storage.tools.delete('user_a', 'tool_3')).toBe(true);
        await storage.projects.delete('user_a', 'proj_000001');
        expect(await storage.tools.get('user_a', 'tool_1')).toBeUndefined();
      });
    });

    describe('mcpServers', () => {
      const server = (id: string, n: number, overrides: Partial<McpServerRecord> = {}): McpServerRecord => ({
        id,
        userId: 'user_a',
        projectId: 'proj_000001',
        name: `server_${n}`,
        transport: 'http',
        url: `https://mcp${n}.example.com/mcp`,
        command: null,
        args: [],
        headerNames: [],
        envNames: [],
        secrets: null,
        createdAt: at(n),
        updatedAt: at(n),
        ...overrides,
      });
      const stdio = (id: string, n: number, overrides: Partial<McpServerRecord> = {}) =>
        server(id, n, {
          transport: 'stdio',
          url: null,
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp/a b'],
          envNames: ['API_KEY', 'REGION'],
          secrets: 'v1:sealed-env',
          updatedAt: at(n + 50),
          ...overrides,
        });

      beforeEach(async () => {
        await storage.projects.insert(project('user_a', 1));
        await storage.projects.insert(project('user_a', 2));
        await storage.projects.insert(project('user_b', 3));
      });

      it('round-trips every field and never answers another user', async () => {
        const s1 = stdio('mcp_1', 1);
        const s2 = server('mcp_2', 2, { transport: 'sse', headerNames: ['Authorization', 'X-Team'], secrets: 'v1:sealed-headers' });
        const s3 = server('mcp_3', 3);
        for (const s of [s1, s2, s3]) await storage.mcpServers.insert(s);
        expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(s1);
        expect(await storage.mcpServers.get('user_a', 'mcp_2')).toEqual(s2);
        expect(await storage.mcpServers.get('user_a', 'mcp_3')).toEqual(s3);
        expect(await storage.mcpServers.get('user_a', 'mcp_missing')).toBeUndefined();
        expect(await storage.mcpServers.get('user_b', 'mcp_1')).toBeUndefined();
        expect((await storage.mcpServers.list({ userId: 'user_b', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(0);
        expect(await storage.mcpServers.delete('user_b', 'mcp_1')).toBe(false);
        expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(s1);
        expect(await storage.mcpServers.delete('user_a', 'mcp_1')).toBe(true);
        expect(await storage.mcpServers.delete('user_a', 'mcp_1')).toBe(false);
        expect(await storage.mcpServers.get('user_a', 'mcp_1')).toBeUndefined();
      });

      it('lists a project\'s servers newest first with paging and total, and all of them oldest first for the agent', async () => {
        for (let n = 1; n <= 5; n++) await storage.mcpServers.insert(server(`mcp_${n}`, n));
        await storage.mcpServers.insert(server('mcp_6', 6, { projectId: 'proj_000002' }));
        await storage.mcpServers.insert(server('mcp_7', 7, { userId: 'user_b', projectId: 'proj_000003' }));
        const first = await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 0 });
        expect(first.items.map((m) => m.id)).toEqual(['mcp_5', 'mcp_4']);
        expect(first.total).toBe(5);
        expect(first.start).toBe(0);
        const last = await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 4 });
        expect(last.items.map((m) => m.id)).toEqual(['mcp_1']);
        expect(last.total).toBe(5);
        expect(last.start).toBe(4);
        expect((await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 2, offset: 10 })).items).toEqual([]);
        expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_1', 'mcp_2', 'mcp_3', 'mcp_4', 'mcp_5']);
        expect(await storage.mcpServers.forProject('proj_000002')).toEqual([server('mcp_6', 6, { projectId: 'proj_000002' })]);
        expect(await storage.mcpServers.forProject('proj_missing')).toEqual([]);
      });

      it('breaks createdAt ties by id in both orders', async () => {
        for (const id of ['mcp_b', 'mcp_c', 'mcp_a']) await storage.mcpServers.insert(server(id, 1, { name: id }));
        const page = await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 });
        expect(page.items.map((m) => m.id)).toEqual(['mcp_c', 'mcp_b', 'mcp_a']);
        expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_a', 'mcp_b', 'mcp_c']);
      });

      it('refuses a duplicate name within a project with conflict, but not across projects', async () => {
        await storage.mcpServers.insert(server('mcp_1', 1, { name: 'github' }));
        await expect(storage.mcpServers.insert(stdio('mcp_2', 2, { name: 'github' }))).rejects.toMatchObject({
          name: 'PlatformError',
          code: 'conflict',
          message: expect.stringContaining('"github"'),
        });
        expect(await storage.mcpServers.get('user_a', 'mcp_2')).toBeUndefined();
        await storage.mcpServers.insert(server('mcp_3', 3, { name: 'github', projectId: 'proj_000002' }));
        await storage.mcpServers.insert(server('mcp_4', 4, { name: 'github', userId: 'user_b', projectId: 'proj_000003' }));
        await storage.mcpServers.insert(server('mcp_5', 5, { name: 'GitHub' }));
        expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_1', 'mcp_5']);
        expect((await storage.mcpServers.forProject('proj_000002')).map((m) => m.id)).toEqual(['mcp_3']);
        // Deleting frees the name.
        expect(await storage.mcpServers.delete('user_a', 'mcp_1')).toBe(true);
        await storage.mcpServers.insert(server('mcp_6', 6, { name: 'github' }));
        expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_5', 'mcp_6']);
      });

      it('deleting a project removes its servers only', async () => {
        await storage.mcpServers.insert(server('mcp_1', 1));
        await storage.mcpServers.insert(stdio('mcp_2', 2));
        await storage.mcpServers.insert(server('mcp_3', 3, { projectId: 'proj_000002' }));
        expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
        expect(await storage.mcpServers.get('user_a', 'mcp_1')).toBeUndefined();
        expect(await storage.mcpServers.get('user_a', 'mcp_2')).toBeUndefined();
        expect(await storage.mcpServers.forProject('proj_000001')).toEqual([]);
        expect((await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(0);
        expect(await storage.mcpServers.get('user_a', 'mcp_3')).toEqual(server('mcp_3', 3, { projectId: 'proj_000002' }));
        // A new project can reuse the name.
        await storage.projects.insert(project('user_a', 1));
        await storage.mcpServers.insert(server('mcp_4', 4, { name: 'server_1' }));
        expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_4']);
      });

      it('commits servers in a transaction and leaves nothing of a rolled-back one', async () => {
        await storage.transaction(async (tx) => {
          await tx.mcpServers.insert(server('mcp_1', 1));
        });
        expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(server('mcp_1', 1));

        await expect(
          storage.transaction(async (tx) => {
            await tx.mcpServers.insert(stdio('mcp_2', 2));
            await tx.mcpServers.delete('user_a', 'mcp_1');
            expect(await tx.mcpServers.get('user_a', 'mcp_2')).toEqual(stdio('mcp_2', 2));
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await storage.mcpServers.get('user_a', 'mcp_2')).toBeUndefined();
        expect((await storage.mcpServers.forProject('proj_000001')).map((m) => m.id)).toEqual(['mcp_1']);

        await expect(
          storage.transaction(async (tx) => {
            await tx.mcpServers.insert(server('mcp_3', 3));
            await tx.mcpServers.insert(server('mcp_4', 4, { name: 'server_1' }));
          }),
        ).rejects.toMatchObject({ code: 'conflict' });
        expect(await storage.mcpServers.get('user_a', 'mcp_3')).toBeUndefined();
        expect((await storage.mcpServers.list({ userId: 'user_a', projectId: 'proj_000001', limit: 10, offset: 0 })).total).toBe(1);
      });

      it('copies rows in and out', async () => {
        const s = stdio('mcp_1', 1);
        const input = { ...s, args: [...s.args] };
        await storage.mcpServers.insert(input);
        input.args.push('mutated');
        const read = (await storage.mcpServers.get('user_a', 'mcp_1')) as McpServerRecord;
        expect(read).toEqual(s);
        (read.args as string[]).push('mutated');
        expect(await storage.mcpServers.get('user_a', 'mcp_1')).toEqual(s);
      });
    });

    describeJobQueue(() => storage, options);
    describeSharedWrites(() => storage, options);
    describeUserCounts(() => storage, options);

    if (options.reopen) {
      const reopen = options.reopen;
      it('keeps everything after close and reopen', async () => {
        const p = project('user_a', 1, { description: 'persisted', color: '#00ff00' });
        await storage.projects.insert(p);
        await storage.apiKeys.insert({ id: 'key_1', userId: 'user_a', name: 'k', lookup: 'lk', hash: 'h', createdAt: at(1), lastUsedAt: null });
        storage = await reopen(storage);
        expect(await storage.users.get('user_a')).toEqual({ id: 'user_a', createdAt: at(0) });
        expect(await storage.projects.get('user_a', p.id)).toEqual(p);
        expect((await storage.apiKeys.findByLookup('lk'))?.userId).toBe('user_a');
        expect((await storage.projects.list({ userId: 'user_a', limit: 5 })).total).toBe(1);
      });
    }
  });
}
