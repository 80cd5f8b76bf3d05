import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // The worker and the Python host are plain JavaScript and entries of their own, next to
  // index.js in dist as in src.
  entry: ['src/index.ts', 'src/js-worker.js', 'src/py-host.js'],
  dts: { entry: ['src/index.ts'] },
  external: ['quickjs-emscripten', 'pyodide', 'esbuild'],
});
