import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // The schema worker (plain JavaScript; schema-worker-url.ts finds it) and the document reader
  // process are entries of their own, at the root of dist next to the code that starts them
  // (dist/index.js or a shared chunk there), as they sit next to it in src.
  entry: {
    index: 'src/index.ts',
    schemas: 'src/schemas.ts',
    internal: 'src/internal.ts',
    'testing/index': 'src/testing/index.ts',
    'schema-worker': 'src/schema-worker.js',
    'document-process': 'src/knowledge/document-process.ts',
  },
  dts: { entry: { index: 'src/index.ts', schemas: 'src/schemas.ts', internal: 'src/internal.ts', 'testing/index': 'src/testing/index.ts' } },
  external: ['vitest'],
});
