import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  entry: ['src/index.ts', 'src/memory/index.ts', 'src/sqlite/index.ts', 'src/postgres/index.ts', 'src/blobs/index.ts'],
  external: ['better-sqlite3', 'pg'],
});
