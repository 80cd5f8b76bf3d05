import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript script of the embedding package's tests, without types.
import { makeTinyModel } from '../../adapters-embedding/test/fixtures/make-tiny-model.mjs';
import { embedderResolver } from '../src/knowledge.js';
import { startTestServer, type TestServer } from './helpers.js';

// `embeddingModel: "local:<folder>"` with a tiny ONNX model generated for the test (see
// packages/adapters-embedding/test/fixtures/make-tiny-model.mjs): nothing is downloaded.
let s: TestServer;
let projectId: string;
beforeAll(async () => {
  s = await startTestServer();
  await makeTinyModel(join(s.dataDir, 'models', 'tiny'));
  const res = await s.call('POST', '/api/projects/create', { body: { name: 'Local model', model: 'gpt-4o-mini', provider: 'openai' } });
  projectId = res.body.project.id;
});
afterAll(async () => {
  await s.stop();
});

const put = (settings: Record<string, unknown>) => s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings } });

describe('embeddingModel "local:<folder>"', () => {
  it('re-indexes a project with a model folder of the data directory and searches with it', async () => {
    const added = await s.call('POST', '/api/knowledge/documents', {
      body: { projectId, fileName: 'cat.md', fileType: 'md', sourceType: 'upload', content: '# Cat\n\nThe cat sat on the mat.' },
    });
    expect(await s.indexed(added.body.documentId)).toMatchObject({ status: 'completed' });
    // On PostgreSQL the project's default store is a collection of 512 dimensions: the tiny
    // model (8) goes to a collection of its own (a model change of dimension into it is refused,
    // see vector-stores.test.ts).
    expect((await put({ embeddingModel: 'local:tiny', ...s.ownVectorStore() })).body).toMatchObject({ success: true });
    const deadline = Date.now() + 20_000;
    let document: { status: string; vectorCount: number } | undefined;
    while (Date.now() < deadline) {
      document = (await s.call('GET', `/api/knowledge/documents/${added.body.documentId}`)).body.document;
      if (document?.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(document).toMatchObject({ status: 'completed', vectorCount: 1 });
    const res = await s.call('POST', '/api/knowledge/search', { body: { projectId, query: 'the cat sat', searchType: 'semantic' } });
    expect(res.status).toBe(200);
    expect(res.body.documents[0].content).toContain('The cat sat on the mat.');
  });

  it('answers 400 naming the folder in the data folder when it is missing or not a model folder, never by its absolute path', async () => {
    const missing = await put({ embeddingModel: 'local:nope' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ message: 'Embedding model folder "models/nope" does not exist', details: { folder: 'models/nope' } });
    // Weights that do not load: ONNX Runtime's message names the file, relative to the data folder.
    const corrupt = await makeTinyModel(join(s.dataDir, 'models', 'corrupt'));
    await writeFile(join(corrupt, 'onnx', 'model.onnx'), 'not a protobuf at all');
    const other = (await s.call('POST', '/api/projects/create', { body: { name: 'corrupt model', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
    expect((await s.call('PUT', '/api/knowledge/settings', { body: { projectId: other, settings: { embeddingModel: 'local:corrupt', ...s.ownVectorStore() } } })).status).toBe(200);
    // The model is loaded when there is something to embed (a search of a project without
    // knowledge embeds nothing): the document's indexing fails with the message.
    const posted = await s.call('POST', '/api/knowledge/documents', { body: { projectId: other, fileName: 'cat.txt', fileType: 'txt', sourceType: 'text', content: 'A cat.' } });
    expect(posted.body).toMatchObject({ status: 'failed', documentId: null });
    expect(posted.body.message).toBe(
      'Failed to index document: Embedding model folder "models/corrupt" could not be loaded: Load model from models/corrupt/onnx/model.onnx failed:Protobuf parsing failed.',
    );
    for (const res of [missing, posted]) expect(JSON.stringify(res.body)).not.toContain(s.dataDir);
    const traversal = await put({ embeddingModel: 'local:../secret' });
    expect(traversal.status).toBe(400);
    expect(traversal.body.message).toContain('embeddingModel');
  });
});

describe('embedderResolver', () => {
  it('resolves builtin, local folders of the data folder (one embedder per folder; never other paths) and hub ids', async () => {
    const resolver = embedderResolver({}, { dataDir: s.dataDir });
    const caller = {} as never;
    try {
      expect(resolver(undefined, caller).id).toBe('builtin:use-lite-512');
      const byName = resolver('local:tiny', caller);
      expect(byName.id).toBe('local:tiny-8');
      expect(byName.dimensions).toBe(8);
      expect(resolver('local:tiny', caller)).toBe(byName);
      // A caller cannot make the server read other paths of its disk.
      expect(() => resolver(`local:${join(s.dataDir, 'models', 'tiny')}`, caller)).toThrow(/must name a folder/);
      expect(() => resolver('local:/etc', caller)).toThrow(/must name a folder/);
      const [vector] = await byName.embed(['hello world']);
      expect(vector).toHaveLength(8);
      // Without the operator's consent no hub model is downloaded: one not in the cache is refused.
      expect(() => resolver('hf:Xenova/all-MiniLM-L6-v2', caller)).toThrow(/not in the model cache and model downloads are off.*--allow-model-downloads/);
      expect(() => resolver('hf:not-an-id', caller)).toThrow(/hf:<owner>\/<name>/);
      expect(() => resolver('something', caller)).toThrow(/unknown embedding model/);
      expect(() => embedderResolver({})('local:tiny', caller)).toThrow(/needs a data folder/);
    } finally {
      await resolver.close();
    }
    // With downloads allowed, a hub model is not downloaded until first used (not here).
    const downloading = embedderResolver({}, { dataDir: s.dataDir, allowDownloads: true });
    try {
      expect(downloading('hf:Xenova/all-MiniLM-L6-v2', caller)).toMatchObject({ id: 'hf:Xenova/all-MiniLM-L6-v2', dimensions: 0 });
    } finally {
      await downloading.close();
    }
  });
});
