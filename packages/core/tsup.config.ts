import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // The schema worker is plain JavaScript and an entry of its own, at the root of dist as in src
  // (schema-worker-url.ts finds it there).
  entry: ['src/index.ts', 'src/schemas.ts', 'src/testing/index.ts', 'src/schema-worker.js'],
  dts: { entry: ['src/index.ts', 'src/schemas.ts', 'src/testing/index.ts'] },
  external: ['vitest'],
});
