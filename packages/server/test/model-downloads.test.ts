import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeHub, startFakeHub } from '../../adapters-embedding/test/fixtures/fake-hub.js';
// @ts-expect-error: a plain JavaScript script of the embedding package's tests, without types.
import { makeTinyModel } from '../../adapters-embedding/test/fixtures/make-tiny-model.mjs';
import { startTestServer, type TestServer } from './helpers.js';

/**
 * `embeddingModel: "hf:<owner>/<name>"` over HTTP: hub downloads are the operator's opt-in
 * (`allowModelDownloads`, the server's `--allow-model-downloads`), and a download from a hub
 * (here a loopback one speaking the hub's wire format, as HF_ENDPOINT) writes only inside
 * `<data>/models/hub`.
 */

const REPO = 'tiny-org/tiny-model';
let source: string;
let hub: FakeHub;
beforeAll(async () => {
  source = await makeTinyModel(join(await mkdtemp(join(tmpdir(), 'hub-src-')), 'model'), { sentenceTransformers: 'mean' });
  hub = await startFakeHub(REPO, source);
});
afterAll(async () => {
  await hub.close();
  await rm(join(source, '..'), { recursive: true, force: true });
});

const project = async (s: TestServer) => (await s.call('POST', '/api/projects/create', { body: { name: 'hub', model: 'm', provider: 'openai' } })).body.project.id as string;
const put = (s: TestServer, projectId: string, embeddingModel: string) => s.call('PUT', '/api/knowledge/settings', { body: { projectId, settings: { embeddingModel } } });

async function document(s: TestServer, projectId: string, content: string) {
  const added = await s.call('POST', '/api/knowledge/documents', { body: { projectId, fileName: 'a.md', fileType: 'md', sourceType: 'upload', content } });
  // Failed within the request's wait: the answer says why (and keeps no document).
  if (added.body.status === 'failed') return { status: 'failed', error: added.body.message as string };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const doc = (await s.call('GET', `/api/knowledge/documents/${added.body.documentId}`)).body.document as { status: string; error: string | null } | null;
    if (!doc) throw new Error(`no document: ${JSON.stringify(added.body)}`);
    if (doc.status === 'completed' || doc.status === 'failed') return doc;
    if (Date.now() > deadline) throw new Error(`document still ${doc.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every file of the data folder outside `models/hub`, but the server's own (database, key, vectors, files). */
async function strays(dataDir: string): Promise<string[]> {
  const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dataDir, join(e.parentPath, e.name)))
    .filter((f) => !/^(models[/\\]hub[/\\]|agent-platform\.db|secret\.key|vectors[/\\]|files[/\\]|tools[/\\])/.test(f));
}

describe('hf: models without --allow-model-downloads', () => {
  it('answers 400 naming the flag, unless the model is in the cache already', async () => {
    const s = await startTestServer({ env: { HF_ENDPOINT: hub.url } });
    try {
      const projectId = await project(s);
      const before = hub.requests.length;
      const refused = await put(s, projectId, `hf:${REPO}`);
      expect(refused.status).toBe(400);
      expect(refused.body.message).toBe(
        `settings.embeddingModel: "hf:${REPO}" is not in the model cache and model downloads are off; the operator can allow them with --allow-model-downloads (AGENT_PLATFORM_ALLOW_MODEL_DOWNLOADS=true)`,
      );
      expect(hub.requests.length).toBe(before);
      // The operator puts the model in the cache: now it is usable, offline.
      await makeTinyModel(join(s.dataDir, 'models', 'hub', 'tiny-org', 'tiny-model'));
      expect((await put(s, projectId, `hf:${REPO}`)).status).toBe(200);
      expect(await document(s, projectId, '# Cats\n\nThe cat sat on the mat.')).toMatchObject({ status: 'completed' });
      expect(hub.requests.length).toBe(before);
    } finally {
      await s.stop();
    }
  });
});

describe('hf: models with --allow-model-downloads', () => {
  it('downloads a model from the hub into <data>/models/hub on first use, and indexes with it', async () => {
    const s = await startTestServer({ env: { HF_ENDPOINT: hub.url }, allowModelDownloads: true });
    try {
      const projectId = await project(s);
      hub.overrides.clear();
      expect((await put(s, projectId, `hf:${REPO}`)).status).toBe(200);
      expect(await document(s, projectId, '# Cats\n\nThe cat sat on the mat.')).toMatchObject({ status: 'completed' });
      expect(existsSync(join(s.dataDir, 'models', 'hub', 'tiny-org', 'tiny-model', 'onnx', 'model.onnx'))).toBe(true);
      expect(await strays(s.dataDir)).toEqual([]);
    } finally {
      await s.stop();
    }
  });

  it('fails the document, writing nothing outside the cache, when modules.json names a path outside the model folder', async () => {
    const s = await startTestServer({ env: { HF_ENDPOINT: hub.url }, allowModelDownloads: true });
    try {
      const projectId = await project(s);
      // From <data>/models/hub/tiny-org/tiny-model, "x#/.." is the model folder and four more ".." the data folder.
      const path = 'x#/../../../../../leak';
      hub.overrides.set('modules.json', { body: JSON.stringify([{ idx: 1, name: '1', path, type: 'sentence_transformers.models.Pooling' }]) });
      expect((await put(s, projectId, `hf:${REPO}`)).status).toBe(200);
      const failed = await document(s, projectId, '# Cats\n\nThe cat sat on the mat.');
      expect(failed.status).toBe('failed');
      expect(failed.error).toContain(`the repository names a file outside the model folder: "${path}/config.json"`);
      expect(existsSync(join(s.dataDir, 'leak'))).toBe(false);
      expect(await strays(s.dataDir)).toEqual([]);
    } finally {
      hub.overrides.clear();
      await s.stop();
    }
  });
});
