import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts', 'src/builtin/index.ts'],
  format: ['esm'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The base config, without the workspace's `source` condition: other packages' types come from their dist.
  tsconfig: '../../tsconfig.base.json',
  external: ['hnswlib-node'],
});
