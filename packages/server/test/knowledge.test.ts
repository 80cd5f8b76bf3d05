import { readFile } from 'node:fs/promises';
import { textPdf } from '@agent-platform/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

const fixture = (name: string) => readFile(new URL(`../../core/test/fixtures/${name}`, import.meta.url));

let s: TestServer;
let projectId: string;
beforeAll(async () => {
  s = await startTestServer();
  const res = await s.call('POST', '/api/projects/create', { body: { name: 'Docs', model: 'gpt-4o-mini', provider: 'openai' } });
  projectId = res.body.project.id;
  // Warm, as a server in service is: its first document starts a reader process and loads the
  // embedder, which on a busy machine can outlast the route's 5 s wait these tests rely on.
  const warm = (await s.call('POST', '/api/projects/create', { body: { name: 'Warm-up', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const first = await s.call('POST', '/api/knowledge/documents', { body: { projectId: warm, fileName: 'warm.txt', fileType: 'txt', sourceType: 'upload', content: 'Warming up.' } });
  expect(await s.indexed(first.body.documentId)).toMatchObject({ status: 'completed' });
}, 120_000);
afterAll(async () => {
  await s.stop();
});

const addDocument = (body: Record<string, unknown>, key = s.keyA) =>
  s.call('POST', '/api/knowledge/documents', { key, body: { projectId, fileName: 'notes.md', fileType: 'md', sourceType: 'upload', ...body } });

/** Reads a whole SSE response into its events. */
async function sse(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)) as Record<string, unknown>);
}

describe('documents', () => {
  it('indexes a text document and answers completed with its id', async () => {
    const res = await addDocument({
      fileName: 'refunds.md',
      content: '# Refunds\n\nCustomers can ask for a refund within 30 days of purchase.\n\n# Shipping\n\nExpress shipping takes two days.',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, status: 'completed', documentId: expect.stringMatching(/^doc_/) });

    const doc = await s.call('GET', `/api/knowledge/documents/${res.body.documentId}`);
    expect(doc.body.document).toMatchObject({
      id: res.body.documentId,
      projectId,
      fileName: 'refunds.md',
      fileType: 'md',
      sourceType: 'upload',
      status: 'completed',
      chunkCount: 2,
      vectorCount: 2,
      error: null,
      metadata: { size: expect.any(Number), language: 'en' },
    });
  });

  it('answers failed with documentId null and the reason for a document without text', async () => {
    const res = await addDocument({ fileName: 'empty.html', fileType: 'html', content: '<script>only()</script>' });
    expect(res.body).toMatchObject({ success: false, status: 'failed', documentId: null });
    expect(res.body.message).toMatch(/^Failed to index document: .*no text/);
  });

  it('rejects bad document input with 400 naming the field, and writes nothing', async () => {
    const before = (await s.call('GET', `/api/knowledge/documents?projectId=${projectId}`)).body.total;
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await addDocument(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(field);
    };
    await bad({ content: '' }, 'content');
    await bad({ content: '   \n ' }, 'content');
    await bad({ content: 42 }, 'content');
    await bad({ content: 'x', fileName: '' }, 'fileName');
    await bad({ content: 'x', sourceType: undefined }, 'sourceType');
    await bad({ content: 'x', projectId: 7 }, 'projectId');
    const malformed = await s.call('POST', '/api/knowledge/documents', { raw: '{"projectId":' });
    expect(malformed.status).toBe(400);
    expect((await addDocument({ content: 'x', projectId: 'proj_missing' })).status).toBe(404);
    expect((await s.call('GET', `/api/knowledge/documents?projectId=${projectId}`)).body.total).toBe(before);
  });

  it('lists documents by status with paging', async () => {
    const all = await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&limit=1`);
    expect(all.body).toMatchObject({ success: true, total: 2, hasMore: true, nextOffset: 1 });
    // The spec's list form, plus vectorCount (the console's table shows it).
    expect(Object.keys(all.body.documents[0]).sort()).toEqual(['chunkCount', 'createdAt', 'fileName', 'fileType', 'id', 'projectId', 'sourceType', 'status', 'updatedAt', 'vectorCount']);
    const completed = (await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&status=completed`)).body.documents[0];
    expect(completed.vectorCount).toBe(completed.chunkCount);
    expect(completed.vectorCount).toBeGreaterThan(0);
    const failed = await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&status=failed`);
    expect(failed.body.documents.map((d: { fileName: string }) => d.fileName)).toEqual(['empty.html']);
    expect((await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&status=done`)).status).toBe(400);
  });

  it('answers a missing document with success false and document null', async () => {
    const res = await s.call('GET', '/api/knowledge/documents/doc_missing');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false, document: null });
  });

  it('streams indexing progress as Server-Sent Events', async () => {
    const res = await fetch(`${s.url}/api/knowledge/documents/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ projectId, fileName: 'faq.txt', fileType: 'txt', sourceType: 'upload', content: 'The office opens at nine.' }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = await sse(res);
    expect(events.map((e) => [e.type, e.progress, e.message])).toEqual([
      ['progress', 10, 'Parsing document'],
      ['progress', 30, 'Extracting text'],
      ['progress', 60, 'Creating embeddings'],
      ['progress', 90, 'Storing vectors'],
      ['complete', 100, 'Document indexed successfully'],
    ]);
    expect(events[4]?.documentId).toMatch(/^doc_/);
  });

  it('streams an error event when indexing fails', async () => {
    const res = await fetch(`${s.url}/api/knowledge/documents/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ projectId, fileName: 'fake.pdf', fileType: 'pdf', sourceType: 'upload', content: 'not a pdf' }),
    });
    const events = await sse(res);
    expect(events.at(-1)).toMatchObject({ type: 'error', message: expect.stringMatching(/^Failed to index document: Invalid PDF file fake.pdf/) });
  });

  it('uploads several files: each indexes or fails on its own', async () => {
    const form = new FormData();
    form.set('projectId', projectId);
    form.append('files', new Blob([await fixture('sample.pdf')], { type: 'application/pdf' }), 'manual.pdf');
    form.append('files', new Blob([await fixture('sample.docx')]), 'guide.docx');
    form.append('files', new Blob(['this is not a pdf']), 'broken.pdf');
    form.append('files', new Blob(['MZ']), 'tool.exe');
    const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: form });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { success: boolean; files: Record<string, unknown>[] };
    expect(body.success).toBe(true);
    const byName = Object.fromEntries(body.files.map((f) => [f.fileName, f]));
    expect(byName['manual.pdf']).toMatchObject({ status: 'completed', fileType: 'pdf', fileId: expect.stringMatching(/^file_/), documentId: expect.stringMatching(/^doc_/) });
    expect(byName['guide.docx']).toMatchObject({ status: 'completed', fileType: 'docx' });
    expect(byName['broken.pdf']).toMatchObject({ status: 'failed', error: expect.stringMatching(/Invalid PDF file broken.pdf/) });
    expect(byName['tool.exe']).toMatchObject({ status: 'failed', documentId: null, error: expect.stringMatching(/Unsupported file type/) });

    const pdf = await s.call('GET', `/api/knowledge/documents/${(byName['manual.pdf'] as { documentId: string }).documentId}`);
    expect(pdf.body.document.metadata).toMatchObject({ pages: 3, language: 'en' });
  });

  it('refuses a 20 MB upload with 413 and a form without files with 400', async () => {
    const form = new FormData();
    form.set('projectId', projectId);
    form.append('files', new Blob([new Uint8Array(20 * 1024 * 1024)]), 'big.txt');
    const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: form });
    expect(res.status).toBe(413);
    const empty = new FormData();
    empty.set('projectId', projectId);
    const none = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: empty });
    expect(none.status).toBe(400);
    expect(((await none.json()) as { message: string }).message).toMatch(/files/);
    const json = await s.call('POST', '/api/knowledge/upload', { body: { projectId } });
    expect(json.status).toBe(400);
  });
});

describe('the fileType of a text document', () => {
  let typed: string;
  beforeAll(async () => {
    typed = (await s.call('POST', '/api/projects/create', { body: { name: 'Typed', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  });
  const post = (fileName: string, fileType: string, content: string, path = '/api/knowledge/documents') =>
    s.call('POST', path, { body: { projectId: typed, fileName, fileType, sourceType: 'upload', content } });
  /** The text of the document's chunk, as search finds it. */
  const chunkText = async (documentId: string, query: string) => {
    const hits = (await s.call('POST', '/api/knowledge/search', { body: { projectId: typed, query, searchType: 'hybrid', alpha: 0, topK: 10 } })).body.documents;
    return hits.find((h: { metadata: { documentId: string } }) => h.metadata.documentId === documentId)?.content as string | undefined;
  };

  it('decides the parser when the file name has no extension of a supported type', async () => {
    for (const fileName of ['page', 'page.log']) {
      const res = await post(fileName, 'html', '<p>The refund <b>window</b> is thirty days.</p>');
      expect(res.body, fileName).toMatchObject({ status: 'completed' });
      expect(await chunkText(res.body.documentId, 'refund window')).toBe('The refund window is thirty days.');
    }
    // Names of one type agree: an alias or another case is no contradiction.
    expect((await post('notes.MARKDOWN', 'md', '# Notes\n\nAgreeing names.')).body).toMatchObject({ status: 'completed' });
    expect((await post('notes.htm', 'text/html', '<p>Agreeing names.</p>')).body).toMatchObject({ status: 'completed' });
  });

  it('is refused with 400 naming both when the file name says another type, and nothing is stored', async () => {
    const before = (await s.call('GET', `/api/knowledge/documents?projectId=${typed}`)).body.total;
    const res = await post('notes.txt', 'md', '# Title\n\nBody.');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      code: 'invalid_request',
      message:
        'fileType: "md" contradicts the file name notes.txt, whose extension says txt: give a fileType and a file name that agree (or a name without a supported extension, and the fileType decides)',
      details: { fileName: 'notes.txt', fileType: 'md', fileNameType: 'txt', issues: [{ path: ['fileType'], code: 'custom', message: 'contradicts the file name notes.txt (txt)' }] },
    });
    const streamed = await post('report.pdf', 'txt', 'Plain text.', '/api/knowledge/documents/stream');
    expect(streamed.status).toBe(400);
    expect(streamed.body.message).toMatch(/^fileType: "txt" contradicts the file name report\.pdf, whose extension says pdf/);
    expect((await s.call('GET', `/api/knowledge/documents?projectId=${typed}`)).body.total).toBe(before);
  });
});

describe('chunks of a PDF', () => {
  it('say on which page they start and end (pageNumber, pageEnd), also when they span pages', async () => {
    const paged = (await s.call('POST', '/api/projects/create', { body: { name: 'Paged', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
    // Small chunks, so that one fits in a page and another runs over a page end.
    expect((await s.call('PUT', '/api/knowledge/settings', { body: { projectId: paged, settings: { chunkSize: 24, chunkOverlap: 0 } } })).status).toBe(200);
    const pdf = textPdf([
      ['Refund policy, part one.', 'Returns within thirty days.', 'Keep the receipt and box.', 'Refunds go to the card.'],
      ['Refund policy, part two.', 'Opened software: no refund.'],
      ['Refund policy, part three.', 'Gift cards: never refunded.'],
    ]);
    const form = new FormData();
    form.set('projectId', paged);
    form.append('files', new Blob([Buffer.from(pdf)], { type: 'application/pdf' }), 'refunds.pdf');
    const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: form });
    const [file] = ((await res.json()) as { files: { documentId: string }[] }).files;
    expect(await s.indexed((file as { documentId: string }).documentId)).toMatchObject({ status: 'completed', metadata: { pages: 3 } });

    const hits = (await s.call('POST', '/api/knowledge/search', { body: { projectId: paged, query: 'refund policy', searchType: 'hybrid', alpha: 0, topK: 10 } })).body.documents as {
      content: string;
      metadata: { chunkIndex: number; pageNumber: number; pageEnd: number };
    }[];
    const pages = hits.sort((a, b) => a.metadata.chunkIndex - b.metadata.chunkIndex).map((h) => [h.metadata.pageNumber, h.metadata.pageEnd]);
    expect(pages).toEqual([
      [1, 1],
      [2, 3],
    ]);
    expect(hits[1]?.content).toMatch(/^Refund policy, part two\.\nOpened software: no refund\.\n\nRefund policy, part three\./);
  });
});

describe('search', () => {
  beforeAll(async () => {
    await addDocument({ fileName: 'pumps.md', content: '# Pumps\n\nError code E1234 means the pump overheated and must cool down for an hour.' });
    await addDocument({ fileName: 'holidays.md', content: '# Leave\n\nEvery employee gets 28 days of paid holiday each year.' });
  });

  it('finds the relevant chunk semantically, with scores in 0..1 and metadata', async () => {
    const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'How many vacation days do staff get?' } });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    // Both the holiday note and the onboarding guide (docx) answer it.
    expect(res.body.documents[0].content).toMatch(/28 days of paid (holiday|leave)/);
    const note = res.body.documents.find((d: { metadata: { fileName: string } }) => d.metadata.fileName === 'holidays.md');
    expect(note.metadata).toMatchObject({ fileType: 'md', chunkIndex: 0, section: 'Leave', documentId: expect.any(String) });
    for (const hit of res.body.documents) {
      expect(hit.score).toBeGreaterThanOrEqual(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
    expect(res.body.documents.length).toBeLessThanOrEqual(5);
  });

  it('finds an exact code with hybrid search', async () => {
    const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'E1234', searchType: 'hybrid', alpha: 0.3, topK: 1 } });
    expect(res.body.documents[0].content).toContain('E1234');
  });

  it('answers mrr searches and honours topK and minScore', async () => {
    const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'pump error', searchType: 'mrr', topK: 2 } });
    expect(res.body.documents).toHaveLength(2);
    const none = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'pump error', minScore: 0.999 } });
    expect(none.body).toEqual({ success: true, documents: [], message: 'No documents matched the query' });
  });

  it('rejects bad search input, naming the field', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'x', ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(field);
    };
    await bad({ searchType: 'fuzzy' }, 'searchType');
    await bad({ topK: 0 }, 'topK');
    await bad({ topK: 1_000_000 }, 'topK');
    await bad({ minScore: 1.5 }, 'minScore');
    await bad({ alpha: -0.1 }, 'alpha');
    await bad({ query: '   ' }, 'query');
  });
});

describe('settings', () => {
  it('validates settings and refuses a vector store that is not available', async () => {
    const put = (settings: Record<string, unknown>) => s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings } });
    expect((await put({ searchType: 'hybrid', topK: 4, minScore: 0.1 })).body).toEqual({ success: true, message: 'Knowledge settings updated', reindex: 'none' });
    expect((await put({ chunkSize: 256, chunkOverlap: 32 })).body).toEqual({
      success: true,
      message: 'Knowledge settings updated; documents indexed before keep their chunks until re-indexed (POST /api/knowledge/reindex)',
      reindex: 'suggested',
    });
    const overlap = await put({ chunkSize: 256, chunkOverlap: 300 });
    expect(overlap.status).toBe(400);
    expect(overlap.body.message).toContain('chunkOverlap');
    const store = await put({ vectorstoreProvider: 'qdrant', vectorStoreConfig: {} });
    expect(store.status).toBe(400);
    expect(store.body).toMatchObject({ success: false, message: expect.stringMatching(/^Invalid vectorstore configuration: /) });
    const model = await put({ embeddingModel: 'no-such-model' });
    expect(model.status).toBe(400);
    expect(model.body.message).toContain('embeddingModel');
  });
});

describe('settings change as a user expects', () => {
  const ALL = ['vectorstoreProvider', 'vectorStoreConfig', 'embeddingModel', 'chunkSize', 'chunkOverlap', 'searchType', 'topK', 'minScore', 'alpha'];
  const fresh = async () => (await s.call('POST', '/api/projects/create', { body: { name: 'Settings', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id as string;
  const get = async (id: string) => (await s.call('GET', `/api/knowledge/settings?projectId=${id}`)).body;
  const put = (id: string, settings: unknown) => s.call('PUT', '/api/knowledge/settings', { body: { projectId: id, settings } });

  it('GET answers every setting in effect and which are defaults', async () => {
    const id = await fresh();
    expect(await get(id)).toEqual({
      success: true,
      settings: { vectorstoreProvider: 'builtin', vectorStoreConfig: null, embeddingModel: 'builtin', chunkSize: 512, chunkOverlap: 64, searchType: 'hybrid', topK: 5, minScore: null, alpha: 0.15 },
      defaults: ALL,
    });
  });

  it('a PUT with one member changes that member alone; null resets one to its default', async () => {
    const id = await fresh();
    expect((await put(id, { chunkSize: 256, chunkOverlap: 32, topK: 8, minScore: 0.3 })).status).toBe(200);
    expect((await put(id, { topK: 3 })).body).toMatchObject({ success: true, reindex: 'none' });
    let read = await get(id);
    expect(read.settings).toMatchObject({ chunkSize: 256, chunkOverlap: 32, topK: 3, minScore: 0.3, searchType: 'hybrid' });
    expect(read.defaults).toEqual(ALL.filter((n) => !['chunkSize', 'chunkOverlap', 'topK', 'minScore'].includes(n)));

    expect((await put(id, { minScore: null, searchType: 'semantic' })).status).toBe(200);
    read = await get(id);
    expect(read.settings).toMatchObject({ chunkSize: 256, chunkOverlap: 32, topK: 3, minScore: null, searchType: 'semantic' });
    expect(read.defaults).toContain('minScore');
    expect(read.defaults).not.toContain('searchType');
    // The search defaults follow: topK 3 is what a search without topK gets.
    await s.call('POST', '/api/knowledge/documents', {
      body: { projectId: id, fileName: 'many.md', fileType: 'md', sourceType: 'upload', content: Array.from({ length: 6 }, (_, i) => `# Pump ${i}\n\nPump ${i} needs oil.`).join('\n\n') },
    });
    expect((await s.call('POST', '/api/knowledge/search', { body: { projectId: id, query: 'pump oil' } })).body.documents).toHaveLength(3);

    // An empty change changes nothing; all members null is back to every default.
    expect((await put(id, {})).status).toBe(200);
    expect((await get(id)).settings.topK).toBe(3);
    expect((await put(id, Object.fromEntries(ALL.map((n) => [n, null])))).status).toBe(200);
    expect((await get(id)).defaults).toEqual(ALL);
  });

  it('checks chunkOverlap against the chunk size in effect, naming both, and changes nothing when refused', async () => {
    const id = await fresh();
    expect((await put(id, { chunkOverlap: 100 })).status).toBe(200); // under the default 512
    const smaller = await put(id, { chunkSize: 100 });
    expect(smaller.status).toBe(400);
    expect(smaller.body.message).toBe('settings.chunkOverlap: must be smaller than chunkSize (100), is 100');
    const overDefault = await put(id, { chunkSize: null, chunkOverlap: 600 });
    expect(overDefault.status).toBe(400);
    expect(overDefault.body.message).toBe('settings.chunkOverlap: must be smaller than chunkSize (512, the default), is 600');
    expect((await get(id)).settings).toMatchObject({ chunkSize: 512, chunkOverlap: 100 });
    expect((await put(id, { chunkSize: 100, chunkOverlap: 10 })).status).toBe(200);
    expect((await get(id)).settings).toMatchObject({ chunkSize: 100, chunkOverlap: 10 });
  });

  it('refuses bad members with a 400 naming them, whatever was stored', async () => {
    const id = await fresh();
    await put(id, { topK: 4 });
    for (const [settings, field] of [
      [{ topK: '4' }, 'settings.topK'],
      [{ chunkSize: 1.5 }, 'settings.chunkSize'],
      [{ searchType: 'fuzzy' }, 'settings.searchType'],
      [{ constructor: 1 }, 'settings'],
      [null, 'settings'],
      [[], 'settings'],
    ] as const) {
      const res = await put(id, settings);
      expect(res.status, JSON.stringify(settings)).toBe(400);
      expect(res.body.message).toMatch(new RegExp(`^${field.replace('.', '\\.')}`));
    }
    const proto = await s.call('PUT', '/api/knowledge/settings', { raw: `{"projectId":"${id}","settings":{"__proto__":{"topK":1}}}` });
    expect(proto.status).toBe(400);
    expect((await get(id)).settings.topK).toBe(4);
  });

  it('a chunking change on a project with documents suggests re-indexing; one without documents does not', async () => {
    const id = await fresh();
    expect((await put(id, { chunkSize: 300 })).body.reindex).toBe('none');
    await s.call('POST', '/api/knowledge/documents', { body: { projectId: id, fileName: 'a.md', fileType: 'md', sourceType: 'upload', content: 'Pumps need oil.' } });
    expect((await put(id, { chunkSize: 200 })).body).toMatchObject({ reindex: 'suggested', message: expect.stringContaining('POST /api/knowledge/reindex') });
    expect((await put(id, { chunkSize: 200, topK: 2 })).body.reindex).toBe('none');
    expect((await put(id, { chunkOverlap: 20 })).body.reindex).toBe('suggested');
    expect((await put(id, { chunkOverlap: null })).body.reindex).toBe('suggested');
  });
});

describe('isolation and deletion', () => {
  it("refuses another user's project everywhere with 404", async () => {
    expect((await addDocument({ content: 'x' }, s.keyB)).status).toBe(404);
    expect((await s.call('GET', `/api/knowledge/documents?projectId=${projectId}`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('POST', '/api/knowledge/search', { key: s.keyB, body: { projectId, query: 'pump' } })).status).toBe(404);
    expect((await s.call('PUT', '/api/knowledge/settings', { key: s.keyB, body: { projectId, settings: {} } })).status).toBe(404);
    const list = await s.call('GET', `/api/knowledge/documents?projectId=${projectId}&limit=100`);
    const id = list.body.documents[0].id;
    expect((await s.call('GET', `/api/knowledge/documents/${id}`, { key: s.keyB })).status).toBe(404);
    expect((await s.call('DELETE', `/api/knowledge/documents/${id}`, { key: s.keyB })).status).toBe(404);
  });

  it('deletes a document with its chunks and vectors: search no longer finds it', async () => {
    const added = await addDocument({ fileName: 'secret.md', content: 'The vault combination is ZX-9981.' });
    const find = () => s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'ZX-9981 vault combination', searchType: 'hybrid', topK: 10 } });
    expect((await find()).body.documents.some((d: { content: string }) => d.content.includes('ZX-9981'))).toBe(true);
    expect((await s.call('DELETE', `/api/knowledge/documents/${added.body.documentId}`)).status).toBe(200);
    expect((await find()).body.documents.some((d: { content: string }) => d.content.includes('ZX-9981'))).toBe(false);
    expect((await s.call('GET', `/api/knowledge/documents/${added.body.documentId}`)).status).toBe(404);
  });
});
