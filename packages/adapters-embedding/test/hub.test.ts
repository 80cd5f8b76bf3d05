import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createGuardedFetch, createOutboundPolicy, type GuardedFetch } from '@agent-platform/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PRIVATE_TRAP, startTrap, trapsAvailable } from '../../core/test/traps.js';
import { downloadHubModel, hubModelFolder, isHubModelCached, readModelFolder, transformersHubEmbedder } from '../src/transformers.js';
import { type FakeHub, startFakeHub } from './fixtures/fake-hub.js';
// @ts-expect-error: a plain JavaScript script of the tests, without types.
import { HIDDEN_SIZE, makeTinyModel } from './fixtures/make-tiny-model.mjs';

/**
 * Hub downloads against a loopback hub that speaks the hub's wire format (fixtures/fake-hub.ts),
 * serving a tiny generated model. The hub is reached as `hub.test`, a name only the guarded
 * fetch's own resolver knows: a request that went around the guarded fetch could not reach it.
 * Each test works in a temp root holding the cache folder; after it, the whole root is listed:
 * nothing may lie outside the cache.
 */

const REPO = 'tiny-org/tiny-model';
let source: string;
let hub: FakeHub;
let guarded: GuardedFetch;
let root: string;
let cacheDir: string;

beforeAll(async () => {
  source = await makeTinyModel(join(await mkdtemp(join(tmpdir(), 'fake-hub-src-')), 'model'), { sentenceTransformers: 'cls' });
  hub = await startFakeHub(REPO, source);
  // The fake hub listens on 127.0.0.1: allowed as the server allows the operator's HF_ENDPOINT.
  guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }), {
    lookup: async (host) => {
      if (host !== 'hub.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return [{ address: '127.0.0.1', family: 4 }];
    },
  });
});
afterAll(async () => {
  await guarded.close();
  await hub.close();
  await rm(join(source, '..'), { recursive: true, force: true });
});

const setUp = async () => {
  root = await mkdtemp(join(tmpdir(), 'hub-root-'));
  cacheDir = join(root, 'models', 'hub');
  await mkdir(cacheDir, { recursive: true });
  hub.requests.length = 0;
  hub.overrides.clear();
};
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every file under `dir`, relative to it. */
async function files(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}
const outsideCache = async () => (await files(root)).filter((f) => !f.startsWith(join('models', 'hub')));
const remoteHost = () => `http://hub.test:${hub.port}/`;

describe('hub downloads', () => {
  it('downloads a model through the given fetch into its cache folder, then embeds with it', async () => {
    await setUp();
    const model = transformersHubEmbedder({ model: REPO, cacheDir, remoteHost: remoteHost(), fetch: guarded });
    try {
      expect(model.dimensions).toBe(0);
      const [vector] = await model.embed(['hello world']);
      expect(vector).toHaveLength(HIDDEN_SIZE);
      expect(model.dimensions).toBe(HIDDEN_SIZE);
    } finally {
      await model.close();
    }
    expect(isHubModelCached(cacheDir, REPO)).toBe(true);
    expect(readModelFolder(hubModelFolder(cacheDir, REPO)).pooling).toBe('cls');
    expect(hub.requests).toEqual(expect.arrayContaining([`GET /${REPO}/resolve/main/config.json`, `GET /${REPO}/resolve/main/onnx/model.onnx`, `GET /${REPO}/resolve/main/1_Pooling/config.json`]));
    expect(await outsideCache()).toEqual([]);
  });

  it('refuses a modules.json whose Pooling path leads outside the model folder, and writes nothing outside the cache', async () => {
    for (const path of ['x#/../../../../../escaped', '../../../../escaped', '/tmp/escaped-abs', '1_Pooling/../../../../../escaped']) {
      await setUp();
      hub.overrides.set('modules.json', {
        body: JSON.stringify([
          { idx: 0, name: '0', path: '', type: 'sentence_transformers.models.Transformer' },
          { idx: 1, name: '1', path, type: 'sentence_transformers.models.Pooling' },
        ]),
      });
      const error = await downloadHubModel({ model: REPO, cacheDir, remoteHost: remoteHost(), fetch: guarded }).catch((e: unknown) => e);
      expect(error, path).toMatchObject({ code: 'invalid_request', message: expect.stringContaining(`the repository names a file outside the model folder: "${path}/config.json"`) });
      expect(await outsideCache(), path).toEqual([]);
      // Only the repository's own files were asked for: nothing was fetched for the refused path.
      expect(
        hub.requests.filter((r) => !/\/resolve\/main\/(config|tokenizer|tokenizer_config|sentence_bert_config|modules)\.json$|onnx\/model\.onnx$/.test(r)),
        path,
      ).toEqual([]);
      await rm(root, { recursive: true, force: true });
    }
    await setUp();
  });

  it('refuses to read a Pooling config outside a model folder (a cached or local folder)', async () => {
    await setUp();
    const folder = await makeTinyModel(join(cacheDir, 'tiny-org', 'sneaky'), { sentenceTransformers: 'mean' });
    await mkdir(join(root, 'outside'), { recursive: true });
    await writeFile(join(root, 'outside', 'config.json'), JSON.stringify({ pooling_mode_cls_token: true }));
    await writeFile(join(folder, 'modules.json'), JSON.stringify([{ idx: 1, name: '1', path: '../../../../outside', type: 'sentence_transformers.models.Pooling' }]));
    expect(() => readModelFolder(folder)).toThrow(/names a file outside the folder: "..\/..\/..\/..\/outside\/config.json"/);
  });

  it('keeps every hub folder inside the cache: ids and revisions are plain names', () => {
    expect(hubModelFolder('/c', 'a/b')).toBe('/c/a/b');
    for (const id of ['./.', 'a/.', '../x', 'a/..', 'a/b/c', 'a', '.../b']) {
      expect(() => hubModelFolder('/c', id), id).toThrow(/Invalid Hugging Face model id/);
    }
    for (const revision of ['..', '../../x', 'a/b', '.']) {
      expect(() => hubModelFolder('/c', 'a/b', revision), revision).toThrow(/Invalid Hugging Face revision/);
    }
  });

  it.skipIf(!trapsAvailable)('refuses a hub redirect to a refused address; nothing reaches it', async () => {
    await setUp();
    const trap = await startTrap(PRIVATE_TRAP);
    try {
      hub.overrides.set('config.json', { redirect: ` http://0x0a000001:${trap.port}/config.json` });
      const error = await downloadHubModel({ model: REPO, cacheDir, remoteHost: remoteHost(), fetch: guarded }).catch((e: unknown) => e);
      expect(error).toMatchObject({ message: expect.stringContaining('Refused to connect to 10.0.0.1: private address') });
      expect(trap.connections).toBe(0);
      expect(await outsideCache()).toEqual([]);
    } finally {
      await trap.close();
    }
  });
});
