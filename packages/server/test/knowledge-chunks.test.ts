import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// GET /api/knowledge/documents/{id}/chunks: a document's chunks, paged in document order (the
// console's chunk viewer). The paging itself is in the storage conformance suite, on every backend.

let s: TestServer;
let projectId: string;
let documentId: string;
const SECTIONS = ['Refunds', 'Shipping', 'Returns', 'Warranty', 'Contact'];

beforeAll(async () => {
  s = await startTestServer();
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Handbook', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  // One chunk per section: each heading starts a chunk.
  const content = SECTIONS.map((name, i) => `# ${name}\n\nParagraph ${i + 1} about ${name.toLowerCase()} and what customers ask about it.`).join('\n\n');
  const added = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'handbook.md', fileType: 'md', sourceType: 'upload', content } });
  documentId = added.body.documentId;
  expect(await s.indexed(documentId)).toMatchObject({ status: 'completed', chunkCount: SECTIONS.length });
}, 120_000);
afterAll(async () => {
  await s.stop();
});

const chunks = (id: string, query = '', key = s.keyA) => s.call('GET', `/api/knowledge/documents/${id}/chunks${query}`, { key });

describe("a document's chunks", () => {
  it('pages them in document order with text, token count and metadata, like the other lists', async () => {
    const first = await chunks(documentId, '?limit=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, total: 5, hasMore: true, nextOffset: 2 });
    expect(first.body.chunks.map((c: { index: number }) => c.index)).toEqual([0, 1]);
    expect(first.body.chunks[0]).toEqual({
      id: expect.any(String),
      documentId,
      projectId,
      index: 0,
      content: expect.stringContaining('Paragraph 1 about refunds'),
      tokenCount: expect.any(Number),
      metadata: expect.objectContaining({ fileName: 'handbook.md', section: 'Refunds' }),
    });
    expect(first.body.chunks[0].tokenCount).toBeGreaterThan(0);
    const last = await chunks(documentId, '?limit=2&offset=4');
    expect(last.body).toMatchObject({ total: 5, hasMore: false, nextOffset: 5 });
    expect(last.body.chunks.map((c: { metadata: { section: string } }) => c.metadata.section)).toEqual(['Contact']);
    // The default page is 20: the whole document, in order; each chunk reads the same by its id.
    const all = (await chunks(documentId)).body.chunks as { id: string; index: number; content: string; metadata: { section: string } }[];
    expect(all.map((c) => c.metadata.section)).toEqual(SECTIONS);
    expect(all.map((c) => c.index)).toEqual([0, 1, 2, 3, 4]);
    const one = await s.call('GET', `/api/knowledge/chunks/${all[2]?.id}`);
    expect(one.body.chunk).toEqual((await chunks(documentId, '?limit=1&offset=2')).body.chunks[0]);
    expect((await chunks(documentId, '?offset=50')).body).toMatchObject({ success: true, chunks: [], total: 5, hasMore: false });
  });

  it("answers another user's document and an unknown one as missing (404), and a bad page with 400 naming the field", async () => {
    expect(await chunks(documentId, '', s.keyB)).toMatchObject({ status: 404, body: { success: false, code: 'not_found', message: `Document ${documentId} not found` } });
    expect(await chunks('doc_missing')).toMatchObject({ status: 404, body: { message: 'Document doc_missing not found' } });
    expect(await chunks('constructor')).toMatchObject({ status: 404 });
    for (const query of ['?limit=0', '?limit=101', '?limit=two']) {
      const res = await chunks(documentId, query);
      expect(res.status, query).toBe(400);
      expect(res.body.message).toMatch(/^limit: /);
    }
    expect((await chunks(documentId, '?offset=-1')).body.message).toMatch(/^offset: /);
  });

  it('lists none for a document without text, and 404 once the document is deleted', async () => {
    const failed = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'empty.html', fileType: 'html', sourceType: 'upload', content: '<script>only()</script>' } });
    const failedId = (await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&status=failed`)).body.documents[0]?.id;
    expect(failed.body.status).toBe('failed');
    expect((await chunks(failedId)).body).toMatchObject({ success: true, chunks: [], total: 0, hasMore: false, nextOffset: 0 });
    const added = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'short.md', fileType: 'md', sourceType: 'upload', content: '# Short\n\nOne chunk.' } });
    expect(await s.indexed(added.body.documentId)).toMatchObject({ status: 'completed' });
    expect((await chunks(added.body.documentId)).body.total).toBe(1);
    expect((await s.call('DELETE', `/api/knowledge/documents/${added.body.documentId}`)).status).toBe(200);
    expect((await chunks(added.body.documentId)).status).toBe(404);
  });
});
