import { execFile, execFileSync } from 'node:child_process';
import dns from 'node:dns';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PlatformError } from '@agent-platform/core';
import { describeEmbeddingModel } from '@agent-platform/core/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { hubModelFolder, readModelFolder, transformersEmbedder, transformersHubEmbedder } from '../src/transformers.js';
// @ts-expect-error: a plain JavaScript script of the tests, without types.
import { embeddingTable, HIDDEN_SIZE, makeTinyModel, VOCAB } from './fixtures/make-tiny-model.mjs';

// Tiny ONNX sentence-embedding models generated for these tests (a few KB each; nothing is
// downloaded): an embedding lookup shaped like BERT, with a WordPiece tokenizer.
const root = await mkdtemp(join(tmpdir(), 'tiny-models-'));
const plain = await makeTinyModel(join(root, 'tiny-bert'));
const clsModel = await makeTinyModel(join(root, 'tiny-cls'), { sentenceTransformers: 'cls' });
const meanNoNorm = await makeTinyModel(join(root, 'tiny-mean'), { sentenceTransformers: 'mean', normalize: false, maxLength: 12 });
afterAll(() => rm(root, { recursive: true, force: true }));

const table: Float32Array = embeddingTable();
const vocab = VOCAB as Record<string, number>;
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);
/** The unit vector of the mean of the table rows of `tokens`: mean pooling by hand. */
const handMean = (tokens: string[]) => {
  const v = new Float32Array(HIDDEN_SIZE);
  for (const token of tokens) {
    const id = vocab[token] as number;
    for (let i = 0; i < HIDDEN_SIZE; i++) (v[i] as number) += (table[id * HIDDEN_SIZE + i] as number) / tokens.length;
  }
  const norm = Math.sqrt(dot(v, v));
  return v.map((x) => x / norm);
};
const expectClose = (actual: Float32Array | undefined, expected: Float32Array) => {
  expect(actual).toBeInstanceOf(Float32Array);
  for (let i = 0; i < expected.length; i++) expect(actual?.[i]).toBeCloseTo(expected[i] as number, 5);
};

describe('transformersEmbedder: offline loading', () => {
  // Runs first, while @huggingface/transformers is not loaded yet in this process: the import of
  // the library and ONNX Runtime, the model load and the first embedding happen with every
  // socket connection, DNS lookup and fetch refused and counted.
  it('loads a local folder and embeds without any network call', async () => {
    const attempts: string[] = [];
    const saved = { connect: net.Socket.prototype.connect, lookup: dns.lookup, promisesLookup: dns.promises.lookup, fetch: globalThis.fetch };
    const deny = (what: string) =>
      function denied(): never {
        attempts.push(what);
        throw new Error(`network blocked in this test: ${what}`);
      };
    net.Socket.prototype.connect = deny('net.Socket.connect') as never;
    dns.lookup = deny('dns.lookup') as never;
    dns.promises.lookup = deny('dns.promises.lookup') as never;
    globalThis.fetch = deny('fetch') as never;
    const model = transformersEmbedder({ model: plain });
    try {
      const vectors = await model.embed(['hello world', 'the cat sat on the mat']);
      expect(vectors).toHaveLength(2);
      expect(vectors[0]).toHaveLength(HIDDEN_SIZE);
    } finally {
      Object.assign(net.Socket.prototype, { connect: saved.connect });
      dns.lookup = saved.lookup;
      dns.promises.lookup = saved.promisesLookup;
      globalThis.fetch = saved.fetch;
      await model.close();
    }
    expect(attempts).toEqual([]);
  });
});

describeEmbeddingModel('transformers (tiny generated ONNX model)', { create: () => transformersEmbedder({ model: plain }) });

describe('transformersEmbedder', () => {
  it('reads dimensions, pooling and maximum length from the folder', () => {
    const model = transformersEmbedder({ model: plain });
    expect(model.dimensions).toBe(HIDDEN_SIZE);
    expect(model.id).toBe(`local:tiny-bert-${HIDDEN_SIZE}`);
    expect(model.info).toMatchObject({ folder: plain, modelType: 'bert', dimensions: HIDDEN_SIZE, pooling: 'mean', normalize: true, maxLength: 16 });
    expect(readModelFolder(clsModel)).toMatchObject({ pooling: 'cls', normalize: true, maxLength: 16 });
    expect(readModelFolder(meanNoNorm)).toMatchObject({ pooling: 'mean', normalize: false, maxLength: 12 });
    expect(transformersEmbedder({ model: plain, id: 'custom', maxLength: 8 })).toMatchObject({ id: 'custom', info: { maxLength: 8 } });
    // Never above the model's own limit.
    expect(transformersEmbedder({ model: plain, maxLength: 1000 }).info.maxLength).toBe(16);
  });

  it('mean-pools the token vectors (special tokens included) into a unit vector, as computed by hand', async () => {
    const model = transformersEmbedder({ model: plain });
    try {
      // "Hello, World!" lower-cases and splits on punctuation: [CLS] hello , world ! [SEP].
      const [a, b, c] = await model.embed(['hello world', 'Hello, World!', 'cat xy']);
      expectClose(a, handMean(['[CLS]', 'hello', 'world', '[SEP]']));
      expectClose(b, handMean(['[CLS]', 'hello', ',', 'world', '!', '[SEP]']));
      // An unknown word falls back to characters: xy -> x ##y.
      expectClose(c, handMean(['[CLS]', 'cat', 'x', '##y', '[SEP]']));
      expect(Math.sqrt(dot(a as Float32Array, a as Float32Array))).toBeCloseTo(1, 6);
    } finally {
      await model.close();
    }
  });

  it('pools as the sentence-transformers config says (CLS token)', async () => {
    const model = transformersEmbedder({ model: clsModel });
    try {
      const [a, b] = await model.embed(['hello world', 'something else entirely']);
      expectClose(a, handMean(['[CLS]']));
      expectClose(b, handMean(['[CLS]']));
      // The option overrides the folder's config.
      const mean = transformersEmbedder({ model: clsModel, pooling: 'mean' });
      expectClose((await mean.embed(['hello world']))[0], handMean(['[CLS]', 'hello', 'world', '[SEP]']));
      await mean.close();
    } finally {
      await model.close();
    }
  });

  it('gives unit vectors even when the model config does not normalise', async () => {
    const model = transformersEmbedder({ model: meanNoNorm });
    try {
      const [v] = await model.embed(['the cat sat on the mat']);
      expect(Math.sqrt(dot(v as Float32Array, v as Float32Array))).toBeCloseTo(1, 5);
      expectClose(v, handMean(['[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '[SEP]']));
    } finally {
      await model.close();
    }
  });

  it('truncates inputs to the maximum length, keeping the closing [SEP]', async () => {
    const model = transformersEmbedder({ model: plain });
    const short = transformersEmbedder({ model: plain, maxLength: 5 });
    try {
      // 16 tokens at most: [CLS], 14 words, [SEP].
      const long = Array.from({ length: 40 }, (_, i) => (i < 14 ? 'hello' : 'world')).join(' ');
      const [v] = await model.embed([long]);
      expectClose(v, handMean(['[CLS]', ...Array(14).fill('hello'), '[SEP]']));
      const [w, x] = await short.embed(['the cat sat on the mat', 'the cat sat']);
      expectClose(w, handMean(['[CLS]', 'the', 'cat', 'sat', '[SEP]']));
      expectClose(x, handMean(['[CLS]', 'the', 'cat', 'sat', '[SEP]']));
    } finally {
      await model.close();
      await short.close();
    }
  });

  it('embeds in batches of similar lengths and returns the vectors in order', async () => {
    const model = transformersEmbedder({ model: plain, batchSize: 3 });
    try {
      const texts = ['hello', 'the cat sat on the mat and the note', 'a', 'about the password reset', 'world', 'text of a note', 'on'];
      const batch = await model.embed(texts);
      for (const [i, text] of texts.entries()) {
        const [single] = await model.embed([text]);
        expect(dot(batch[i] as Float32Array, single as Float32Array)).toBeGreaterThan(0.99999);
      }
      expectClose(batch[2], handMean(['[CLS]', 'a', '[SEP]']));
    } finally {
      await model.close();
    }
  });

  it('rejects an aborted call with the reason, and loads again after close', async () => {
    const model = transformersEmbedder({ model: plain });
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(model.embed(['hello'], { signal: controller.signal })).rejects.toThrow('stop');
    const [a] = await model.embed(['hello world']);
    await model.close();
    await model.close();
    const [b] = await model.embed(['hello world']);
    await model.close();
    expect(dot(a as Float32Array, b as Float32Array)).toBeGreaterThan(0.99999);
  });

  describe('fails clearly, naming the folder', () => {
    const expectInvalid = (make: () => unknown, pattern: RegExp) => {
      let error: unknown;
      try {
        make();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(PlatformError);
      expect((error as PlatformError).code).toBe('invalid_request');
      expect((error as PlatformError).message).toMatch(pattern);
    };

    it('for a missing folder', () => {
      const missing = join(root, 'no-such-model');
      // Named by its name (or the label given), never by the absolute path: messages reach API callers.
      expectInvalid(() => transformersEmbedder({ model: missing }), /^Embedding model folder "no-such-model" does not exist$/);
      expectInvalid(() => transformersEmbedder({ model: missing, label: 'models/no-such-model' }), /^Embedding model folder "models\/no-such-model" does not exist$/);
    });

    it('for a folder without config.json, tokenizer.json or ONNX weights', async () => {
      const empty = join(root, 'empty');
      await mkdir(empty, { recursive: true });
      expectInvalid(() => transformersEmbedder({ model: empty }), /"empty" is not a transformers.js model folder: it has no config.json/);
      const noWeights = await makeTinyModel(join(root, 'no-weights'));
      await rm(join(noWeights, 'onnx'), { recursive: true });
      expectInvalid(() => transformersEmbedder({ model: noWeights }), /"[^"]*no-weights" is not a transformers.js model folder: it has no onnx\/model.onnx/);
      expectInvalid(() => transformersEmbedder({ model: plain, dtype: 'q8' }), /it has no onnx\/model_quantized.onnx/);
    });

    it('for a malformed config.json', async () => {
      const broken = await makeTinyModel(join(root, 'broken-config'));
      await writeFile(join(broken, 'config.json'), '{ "model_type": "bert", ');
      expectInvalid(() => transformersEmbedder({ model: broken }), /"[^"]*broken-config" has an unreadable config.json/);
      await writeFile(join(broken, 'config.json'), '{ "model_type": "bert" }');
      expectInvalid(() => transformersEmbedder({ model: broken }), /"[^"]*broken-config" has an invalid config.json: no hidden_size/);
    });

    it('for corrupt ONNX weights or tokenizer, when the model loads', async () => {
      const corrupt = await makeTinyModel(join(root, 'corrupt-onnx'));
      await writeFile(join(corrupt, 'onnx', 'model.onnx'), 'not a protobuf at all');
      const model = transformersEmbedder({ model: corrupt });
      const error = await model.embed(['hello']).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PlatformError);
      // ONNX Runtime's message names the weights file: relative to the folder, never absolute.
      expect((error as PlatformError).message).toBe('Embedding model folder "corrupt-onnx" could not be loaded: Load model from corrupt-onnx/onnx/model.onnx failed:Protobuf parsing failed.');
      await model.close();
      const badTokenizer = await makeTinyModel(join(root, 'bad-tokenizer'));
      await writeFile(join(badTokenizer, 'tokenizer.json'), '{ "truncated": ');
      const other = transformersEmbedder({ model: badTokenizer });
      await expect(other.embed(['hello'])).rejects.toThrow(/"bad-tokenizer" could not be loaded: /);
      await other.close();
    });

    it('for invalid options', () => {
      expect(() => transformersEmbedder({ model: '' })).toThrow(/model/);
      expect(() => transformersEmbedder({ model: plain, batchSize: 0 })).toThrow(/batchSize/);
      expect(() => transformersEmbedder({ model: plain, maxLength: 1 })).toThrow(/maxLength/);
    });
  });

  it('uses a hub model already in the cache offline, and refuses to download when told not to', async () => {
    const cacheDir = join(root, 'hub-cache');
    await makeTinyModel(join(cacheDir, 'tiny-org', 'tiny-model'));
    const fetches: unknown[] = [];
    const savedFetch = globalThis.fetch;
    globalThis.fetch = ((input: unknown) => {
      fetches.push(input);
      throw new Error('no network in this test');
    }) as typeof fetch;
    const hub = transformersHubEmbedder({ model: 'tiny-org/tiny-model', cacheDir });
    try {
      expect(hub.id).toBe('hf:tiny-org/tiny-model');
      expect(hub.dimensions).toBe(HIDDEN_SIZE);
      expectClose((await hub.embed(['hello world']))[0], handMean(['[CLS]', 'hello', 'world', '[SEP]']));
    } finally {
      globalThis.fetch = savedFetch;
      await hub.close();
    }
    expect(fetches).toEqual([]);
    const absent = transformersHubEmbedder({ model: 'tiny-org/absent', cacheDir, download: false });
    expect(absent.dimensions).toBe(0);
    await expect(absent.embed(['hello'])).rejects.toThrow(/absent" does not hold tiny-org\/absent yet \(downloads are off\)/);
    expect(await absent.embed([])).toEqual([]);
  });

  it('places hub models under the cache folder (the download itself is not exercised here)', () => {
    expect(hubModelFolder('/data/models/hub', 'Xenova/all-MiniLM-L6-v2')).toBe('/data/models/hub/Xenova/all-MiniLM-L6-v2');
    expect(hubModelFolder('/c', 'BAAI/bge-small-en-v1.5', 'v2')).toBe('/c/BAAI/bge-small-en-v1.5/v2');
    expect(() => hubModelFolder('/c', '../etc')).toThrow(/Invalid Hugging Face model id/);
    expect(() => hubModelFolder('/c', 'a/../../b')).toThrow(/Invalid Hugging Face model id/);
  });
});

// The built package in plain Node, in a new network namespace with no interface up (`unshare
// -rn`: not even loopback), with sockets, DNS and fetch also made to throw by a preload: the
// model loads and embeds all the same.
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(new URL('../dist/transformers.js', import.meta.url));
const canUnshare = (() => {
  try {
    execFileSync('unshare', ['-rn', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
describe.skipIf(!built || !canUnshare)('the built package (dist) in a namespace without network', () => {
  it('loads the tiny model and embeds', async () => {
    const preload = `
      import net from 'node:net'; import dns from 'node:dns';
      const blocked = (what) => () => { process.stderr.write('NETWORK ' + what + '\\n'); throw new Error('network blocked: ' + what); };
      net.Socket.prototype.connect = blocked('connect');
      dns.lookup = blocked('dns.lookup');
      dns.promises.lookup = blocked('dns.promises.lookup');
      globalThis.fetch = blocked('fetch');`;
    const script = `
      import { transformersEmbedder } from '@agent-platform/adapters-embedding/transformers';
      const model = transformersEmbedder({ model: ${JSON.stringify(plain)} });
      const vectors = await model.embed(['hello world', 'the cat sat on the mat']);
      console.log(JSON.stringify({ resolved: import.meta.resolve('@agent-platform/adapters-embedding/transformers'), id: model.id, vectors: vectors.map((v) => [...v]) }));
      await model.close();`;
    const { stdout, stderr } = await promisify(execFile)('unshare', ['-rn', process.execPath, '--import', `data:text/javascript,${encodeURIComponent(preload)}`, '--input-type=module', '-e', script], {
      cwd: packageDir,
      timeout: 60_000,
    });
    expect(stderr).not.toMatch(/NETWORK/);
    const result = JSON.parse(stdout) as { resolved: string; id: string; vectors: number[][] };
    expect(result.resolved).toMatch(/\/dist\/transformers\.js$/);
    expect(result.id).toBe(`local:${basename(plain)}-${HIDDEN_SIZE}`);
    expectClose(Float32Array.from(result.vectors[0] as number[]), handMean(['[CLS]', 'hello', 'world', '[SEP]']));
    expectClose(Float32Array.from(result.vectors[1] as number[]), handMean(['[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '[SEP]']));
  });
});
