import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script of the embedding package's tests, without types.
import { makeTinyModel } from '../../adapters-embedding/test/fixtures/make-tiny-model.mjs';
import { startTestServer, type TestServer } from './helpers.js';

// Files belong to the user who uploaded them: a document may name only the caller's own file,
// and the blob a document's source lives under is recorded by the service, so deleting or
// re-indexing a document never touches another user's file. Two users over HTTP; the
// documents "from before the fix" are rows as the old code let a caller make them.
let s: TestServer;
let projectA: string;
let projectB: string;
beforeAll(async () => {
  s = await startTestServer();
  await makeTinyModel(join(s.dataDir, 'models', 'tiny'));
  const create = async (key: string) => (await s.call('POST', '/api/projects/create', { key, body: { name: 'files', model: 'm', provider: 'openai' } })).body.project.id as string;
  projectA = await create(s.keyA);
  projectB = await create(s.keyB);
});
afterAll(async () => {
  await s.stop();
});

/** Whether the server's blob store (its `files/` folder, or the database's `blobs` table) holds `key`. */
const hasBlob = async (key: string) => (await s.stored.blobs.get(key)) !== undefined;

async function upload(key: string, projectId: string, name: string, text: string): Promise<{ fileId: string; documentId: string }> {
  const form = new FormData();
  form.set('projectId', projectId);
  form.append('files', new Blob([text]), name);
  const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const body = (await res.json()) as { files: { fileId: string; documentId: string; status: string }[] };
  const file = body.files[0] as { fileId: string; documentId: string };
  // The first document also waits for the built-in embedder to start.
  expect(await settled(file.documentId, key)).toBe('completed');
  return file;
}

/** The document's status once it is no longer pending or processing (or after 30 s). */
async function settled(documentId: string, key = s.keyA): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = (await s.call('GET', `/api/knowledge/documents/${documentId}`, { key })).body.document?.status as string;
    if ((status !== 'pending' && status !== 'processing') || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const addDocument = (key: string, body: Record<string, unknown>, path = '/api/knowledge/documents') =>
  s.call('POST', path, { key, body: { projectId: projectA, fileName: 'a.txt', fileType: 'txt', sourceType: 'upload', content: 'Apples grow on trees.', ...body } });

/** A's document naming B's file with source type upload, as the old code stored it (its text under its own id). */
async function legacyLink(fileId: string, text: string): Promise<string> {
  const { userId } = (await s.platform.authenticate(s.keyA)) as { userId: string };
  const id = s.platform.ids.next('document');
  const now = new Date();
  await s.stored.blobs.put(id, new TextEncoder().encode(text));
  await s.platform.storage.documents.insert({
    id,
    userId,
    projectId: projectA,
    fileId,
    sourceKey: id,
    fileName: 'linked.txt',
    fileType: 'txt',
    sourceType: 'upload',
    status: 'completed',
    chunkCount: 0,
    vectorCount: 0,
    error: null,
    metadata: { size: text.length },
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

describe("another user's file", () => {
  it('is answered 404 File not found, exactly as a missing one, and nothing is written', async () => {
    const theirs = await upload(s.keyB, projectB, 'secret.txt', 'Bananas are the secret of user B.');
    const before = await s.stored.blobs.keys();
    for (const path of ['/api/knowledge/documents', '/api/knowledge/documents/stream']) {
      const other = await addDocument(s.keyA, { fileId: theirs.fileId }, path);
      const missing = await addDocument(s.keyA, { fileId: 'file_missing' }, path);
      expect(other.status, path).toBe(404);
      expect(other.body, path).toEqual({ success: false, message: 'File not found', code: 'not_found' });
      expect(missing, path).toMatchObject({ status: 404, body: other.body });
    }
    expect((await s.call('GET', `/api/knowledge/documents?projectId=${projectA}`)).body.total).toBe(0);
    expect(await s.stored.blobs.keys()).toEqual(before);
    // B still has the file and its document.
    expect((await s.call('GET', `/api/knowledge/documents/${theirs.documentId}`, { key: s.keyB })).body.document).toMatchObject({ fileId: theirs.fileId, status: 'completed' });
  });

  it("is never removed by deleting the caller's document, even one that names it", async () => {
    const theirs = await upload(s.keyB, projectB, 'kept.txt', 'Cherries belong to user B.');
    const linked = await legacyLink(theirs.fileId, 'Text of user A.');
    expect((await s.call('DELETE', `/api/knowledge/documents/${linked}`)).status).toBe(200);
    expect(await hasBlob(theirs.fileId)).toBe(true);
    expect(await hasBlob(linked)).toBe(false);
    // B can still delete (and so release) their own file.
    expect((await s.call('DELETE', `/api/knowledge/documents/${theirs.documentId}`, { key: s.keyB })).status).toBe(200);
    expect(await hasBlob(theirs.fileId)).toBe(false);
  });

  it("is never read by re-indexing the caller's documents", async () => {
    const theirs = await upload(s.keyB, projectB, 'private.txt', 'Durian notes of user B only.');
    const linked = await legacyLink(theirs.fileId, 'Elderberry notes of user A.');
    const res = await s.call('PUT', '/api/knowledge/settings', { body: { projectId: projectA, settings: { embeddingModel: 'local:tiny', ...s.ownVectorStore() } } });
    expect(res.body.message).toMatch(/re-indexing [1-9]\d* documents? with local:tiny/);
    expect(await settled(linked)).toBe('completed');
    expect((await s.platform.storage.chunks.listByDocument(linked)).map((c) => c.text)).toEqual(['Elderberry notes of user A.']);
    const hits = (await s.call('POST', '/api/knowledge/search', { body: { projectId: projectA, query: 'durian notes', searchType: 'hybrid' } })).body.documents;
    expect(JSON.stringify(hits)).not.toContain('Durian');
  });
});

describe("the caller's own file", () => {
  it('may be named by another document, and its blob goes only when no document refers to it', async () => {
    const mine = await upload(s.keyA, projectA, 'mine.txt', 'Figs are my own file.');
    const linked = await addDocument(s.keyA, { fileId: mine.fileId, fileName: 'summary.txt', content: 'A summary of my figs.' });
    expect(linked.body).toMatchObject({ success: true });
    expect(await settled(linked.body.documentId)).toBe('completed');
    expect((await s.call('GET', `/api/knowledge/documents/${linked.body.documentId}`)).body.document.fileId).toBe(mine.fileId);
    // Its text is its own source, not the file: the file's text is not among its chunks.
    expect((await s.platform.storage.chunks.listByDocument(linked.body.documentId)).map((c) => c.text)).toEqual(['A summary of my figs.']);
    expect((await s.call('DELETE', `/api/knowledge/documents/${mine.documentId}`)).status).toBe(200);
    expect(await hasBlob(mine.fileId)).toBe(true);
    expect((await s.call('DELETE', `/api/knowledge/documents/${linked.body.documentId}`)).status).toBe(200);
    expect(await hasBlob(mine.fileId)).toBe(false);
    expect(await hasBlob(linked.body.documentId)).toBe(false);
    // Gone means gone: naming it now is 404.
    expect((await addDocument(s.keyA, { fileId: mine.fileId })).status).toBe(404);
  });
});

describe('deleting a project', () => {
  it("removes the blobs of its texts and uploaded files, and no other project's or user's", async () => {
    const doomed = (await s.call('POST', '/api/projects/create', { body: { name: 'doomed', model: 'm', provider: 'openai' } })).body.project.id as string;
    const file = await upload(s.keyA, doomed, 'doomed.txt', 'Gooseberries of a project about to go.');
    const text = await addDocument(s.keyA, { projectId: doomed, content: 'Honeydew notes of the same project.' });
    expect(await settled(text.body.documentId)).toBe('completed');
    // Elsewhere: a document of another project naming the doomed file (its own text is its source),
    // and another user's upload.
    const naming = await addDocument(s.keyA, { fileId: file.fileId, content: 'A note about gooseberries.' });
    expect(await settled(naming.body.documentId)).toBe('completed');
    const theirs = await upload(s.keyB, projectB, 'theirs.txt', 'Ice apples of user B.');
    for (const key of [file.fileId, text.body.documentId, naming.body.documentId, theirs.fileId]) expect(await hasBlob(key)).toBe(true);

    // Another user cannot delete it, and nothing goes.
    expect((await s.call('DELETE', `/api/v1/projects/${doomed}`, { key: s.keyB })).status).toBe(404);
    expect(await hasBlob(file.fileId)).toBe(true);

    expect((await s.call('DELETE', `/api/v1/projects/${doomed}`)).status).toBe(200);
    expect(await hasBlob(file.fileId)).toBe(false);
    expect(await hasBlob(text.body.documentId)).toBe(false);
    expect(await hasBlob(naming.body.documentId)).toBe(true);
    expect(await hasBlob(theirs.fileId)).toBe(true);
    expect((await s.call('GET', `/api/knowledge/documents/${naming.body.documentId}`)).body.document.status).toBe('completed');
  });
});
