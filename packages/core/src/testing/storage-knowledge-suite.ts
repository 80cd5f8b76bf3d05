import { beforeEach, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../storage/types.js';
import { describeChunks } from './storage-chunks-suite.js';
import { at, chunk, document, project, type StorageUnderTest } from './storage-rows.js';

/**
 * Documents, files and the blobs they name, knowledge settings, queued jobs, and what deleting a
 * project takes with it; the chunk cases (`describeChunks`) run in the same block.
 */
export function describeKnowledge(suite: StorageUnderTest): void {
  describe('knowledge', () => {
    let storage: StorageAdapter;
    beforeEach(async () => {
      storage = suite.current();
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

    it('keeps files per user and deletes one only when no document of its owner refers to it', async () => {
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

    describeChunks(suite);

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
        id: 'job_1',
        kind: 'index_document',
        documentId: 'doc_000001',
        tenant: 'user_a',
        payload: { n: 1 },
        attempts: 2,
        createdAt: at(1),
        size: 123,
        owner: null,
        leaseExpiresAt: null,
        generation: 0,
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
}
