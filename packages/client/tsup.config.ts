import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  // Types only: the modules are empty at run time; ./openai augments the openai package's types.
  entry: ['src/index.ts', 'src/openai.ts'],
  external: ['openai'],
});
