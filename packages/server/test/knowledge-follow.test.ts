import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Following an uploaded document's indexing (GET /api/knowledge/documents/{id}/events, with
// POST /api/knowledge/upload?wait=false), and reading a chunk by id (GET /api/knowledge/chunks/{id}),
// over HTTP against the real server with the built-in embedder, two users.
let s: TestServer;
let projectA: string;
beforeAll(async () => {
  s = await startTestServer();
  projectA = (await s.call('POST', '/api/projects/create', { body: { name: 'follow', model: 'm', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
});

interface IndexingEvent {
  type: 'progress' | 'complete' | 'error';
  progress?: number;
  message: string;
  documentId?: string;
}

/** Every event of an SSE answer until it ends, parsed. */
async function events(path: string, key = s.keyA): Promise<{ status: number; type: string | null; events: IndexingEvent[] }> {
  const res = await fetch(s.url + path, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  const data = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as IndexingEvent);
  return { status: res.status, type: res.headers.get('content-type'), events: data };
}

async function upload(name: string, bytes: string, wait: boolean) {
  const form = new FormData();
  form.set('projectId', projectA);
  form.append('files', new Blob([bytes]), name);
  const res = await fetch(`${s.url}/api/knowledge/upload${wait ? '' : '?wait=false'}`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: form });
  const body = (await res.json()) as { files: { documentId: string; status: string; error: string | null }[] };
  return body.files[0] as { documentId: string; status: string; error: string | null };
}

describe('following a document', () => {
  it('upload?wait=false answers before indexing, and the events route follows the document to its end', async () => {
    const file = await upload('notes.md', '# Notes\n\nPears ripen after picking. Apples do not.', false);
    // The first document of the server also waits for the built-in model to load: still running.
    expect(file.status).toBe('processing');
    const followed = await events(`/api/knowledge/documents/${file.documentId}/events`);
    expect(followed.status).toBe(200);
    expect(followed.type).toContain('text/event-stream');
    const last = followed.events.at(-1);
    expect(last).toEqual({ type: 'complete', progress: 100, message: 'Document indexed successfully', documentId: file.documentId });
    // Whatever was heard before the end is progress, in order.
    const progress = followed.events.slice(0, -1);
    expect(progress.every((e) => e.type === 'progress')).toBe(true);
    expect(progress.map((e) => e.progress)).toEqual([...progress.map((e) => e.progress)].sort((a, b) => (a ?? 0) - (b ?? 0)));
    expect((await s.call('GET', `/api/knowledge/documents/${file.documentId}`)).body.document.status).toBe('completed');

    // An indexed document answers its final event alone, at once.
    expect((await events(`/api/knowledge/documents/${file.documentId}/events`)).events).toEqual([last]);
  });

  it('a failed document answers its error; another user, or no such document, is 404 before any event', async () => {
    const broken = await upload('broken.pdf', 'this is not a PDF', true);
    expect(broken.status).toBe('failed');
    const followed = await events(`/api/knowledge/documents/${broken.documentId}/events`);
    expect(followed.events).toEqual([{ type: 'error', message: broken.error, documentId: broken.documentId }]);

    const foreign = await s.call('GET', `/api/knowledge/documents/${broken.documentId}/events`, { key: s.keyB });
    expect(foreign).toMatchObject({ status: 404, body: { success: false, message: `Document ${broken.documentId} not found` } });
    expect((await s.call('GET', '/api/knowledge/documents/doc_missing/events')).status).toBe(404);
  });
});

describe('a chunk by id', () => {
  it("answers the caller's chunk with its text and metadata, and 404 for another user or an unknown id", async () => {
    const added = await s.call('POST', '/api/knowledge/documents', {
      body: { projectId: projectA, fileName: 'plums.txt', fileType: 'txt', sourceType: 'upload', content: 'Plums are stone fruits that dry into prunes.' },
    });
    expect(added.body.status).toBe('completed');
    const hit = (await s.call('POST', '/api/knowledge/search', { body: { projectId: projectA, query: 'plums prunes', topK: 1, searchType: 'hybrid' } })).body.documents[0];
    const chunk = await s.call('GET', `/api/knowledge/chunks/${hit.id}`);
    expect(chunk).toMatchObject({
      status: 200,
      body: {
        success: true,
        chunk: { id: hit.id, documentId: added.body.documentId, projectId: projectA, index: 0, content: hit.content, metadata: { fileName: 'plums.txt' } },
      },
    });
    expect(chunk.body.chunk.tokenCount).toBeGreaterThan(0);
    expect(await s.call('GET', `/api/knowledge/chunks/${hit.id}`, { key: s.keyB })).toMatchObject({ status: 404, body: { message: `Chunk ${hit.id} not found` } });
    expect((await s.call('GET', '/api/knowledge/chunks/chunk_missing')).status).toBe(404);
    expect((await s.call('GET', '/api/knowledge/chunks/constructor')).status).toBe(404);
  });
});
