import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // The worker is plain JavaScript and an entry of its own, next to index.js in dist as in src.
  entry: ['src/index.ts', 'src/js-worker.js'],
  dts: { entry: ['src/index.ts'] },
  external: ['quickjs-emscripten'],
});
