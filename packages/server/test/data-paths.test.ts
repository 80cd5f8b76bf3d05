import { createHash } from 'node:crypto';
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script of the embedding package's tests, without types.
import { makeTinyModel } from '../../adapters-embedding/test/fixtures/make-tiny-model.mjs';
import { startTestServer, type TestServer } from './helpers.js';

// Errors that reach API callers name files by their place in the data folder (`files/doc_1`,
// `vectors/<log>`, `models/<name>`), never by the server's absolute path. The failures are real
// ones of the file system: a file replaced by a symbolic link to itself (ELOOP, whose message
// carries the path). The embedding model's folder errors are in knowledge-transformers.test.ts.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  await makeTinyModel(join(s.dataDir, 'models', 'tiny'));
});
afterAll(async () => {
  await s.stop();
});

/** A project with one indexed document. */
async function projectWithDocument(name: string): Promise<{ projectId: string; documentId: string }> {
  const projectId = (await s.call('POST', '/api/projects/create', { body: { name, model: 'm', provider: 'openai' } })).body.project.id as string;
  const added = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'a.txt', fileType: 'txt', sourceType: 'upload', content: 'Paths stay private.' } });
  const documentId = added.body.documentId as string;
  expect(await settled(documentId)).toMatchObject({ status: 'completed' });
  return { projectId, documentId };
}

async function settled(documentId: string): Promise<{ status: string; error: string | null }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const doc = (await s.call('GET', `/api/knowledge/documents/${documentId}`)).body.document;
    if ((doc.status !== 'pending' && doc.status !== 'processing') || Date.now() > deadline) return doc;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Replaces `path` with a symbolic link to itself: opening it fails with ELOOP. */
async function loop(path: string): Promise<void> {
  await rm(path, { force: true });
  await symlink(path, path);
}

const reindexWithTinyModel = async (projectId: string) =>
  expect((await s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { embeddingModel: 'local:tiny' } } })).body.message).toMatch(/re-indexing 1 document/);

describe("errors name the data folder's files relatively", () => {
  it('a source the blob store cannot read fails the document naming files/<id>', async () => {
    const { projectId, documentId } = await projectWithDocument('unreadable source');
    await loop(join(s.dataDir, 'files', documentId));
    await reindexWithTinyModel(projectId);
    const doc = await settled(documentId);
    expect(doc.status).toBe('failed');
    expect(doc.error).toBe(`Failed to index document: ELOOP: too many symbolic links encountered, open 'files/${documentId}'`);
    expect(JSON.stringify(doc)).not.toContain(s.dataDir);
  });

  it('a vector log the built-in store cannot write fails the document naming vectors/<log>', async () => {
    const { projectId, documentId } = await projectWithDocument('unwritable vectors');
    // The log of the project's namespace under the new model (see builtinVectorStore's file names).
    const stem = createHash('sha256').update(`${projectId}:local:tiny-8`).digest('hex').slice(0, 32);
    await loop(join(s.dataDir, 'vectors', `${stem}.vectors`));
    await reindexWithTinyModel(projectId);
    const doc = await settled(documentId);
    expect(doc.status).toBe('failed');
    expect(doc.error).toBe(`Failed to index document: ELOOP: too many symbolic links encountered, open 'vectors/${stem}.vectors'`);
    expect(JSON.stringify(doc)).not.toContain(s.dataDir);
  });
});
