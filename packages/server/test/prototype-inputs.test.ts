import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// Client input used as a key (a file name's extension, a declared file type, a front matter
// key, a static file's name) must never find what `Object.prototype` holds under that name.

let s: TestServer;
let projectId: string;
beforeAll(async () => {
  s = await startTestServer();
  const res = await s.call('POST', '/api/projects/create', { body: { name: 'p', model: 'gpt-4o-mini', provider: 'openai' } });
  projectId = res.body.project.id;
});
afterAll(async () => {
  await s.stop();
});

describe('keys from client input', () => {
  it('answers 404 for a /docs file named like a member of Object.prototype', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const res = await s.call('GET', `/docs/${name}`, { key: null });
      expect(res.status, name).toBe(404);
      expect(res.body).toMatchObject({ success: false, code: 'not_found' });
    }
  });

  it('answers a document whose file type or extension is a name of Object.prototype as an unsupported type', async () => {
    for (const [fileName, fileType] of [
      ['a.constructor', 'constructor'],
      ['a.toString', 'x'],
      ['notes', '__proto__'],
      ['notes', 'hasOwnProperty'],
    ] as const) {
      const res = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName, fileType, sourceType: 'upload', content: 'Some text.' } });
      // As any unsupported type (e.g. `xyz`): the spec's failed answer, naming the file and its type.
      expect(res.body, `${fileName} ${fileType}`).toMatchObject({ success: false, status: 'failed', documentId: null });
      expect(res.body.message).toContain(`Unsupported file type of ${fileName} (${fileType})`);
    }
  });

  it('answers an uploaded file named like a member of Object.prototype as unsupported', async () => {
    const form = new FormData();
    form.set('projectId', projectId);
    form.append('files', new Blob(['text'], { type: 'constructor' }), 'a.valueOf');
    form.append('files', new Blob(['text'], { type: 'text/plain' }), 'b.txt');
    const res = await fetch(`${s.url}/api/knowledge/upload`, { method: 'POST', headers: { authorization: `Bearer ${s.keyA}` }, body: form });
    const body = (await res.json()) as { files: { fileName: string; status: string; error?: string }[] };
    expect(res.status).toBeLessThan(500);
    expect(body.files.find((f) => f.fileName === 'a.valueOf')).toMatchObject({ error: expect.stringMatching(/Unsupported file type/) });
    expect(body.files.find((f) => f.fileName === 'b.txt')?.error).toBeFalsy();
  });
});
