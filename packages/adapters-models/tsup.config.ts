import { defineConfig } from 'tsup';
import { packageBuild } from '../../tsup.base.js';

export default defineConfig({
  ...packageBuild,
  entry: [
    'src/index.ts',
    'src/openai.ts',
    'src/ollama.ts',
    'src/ai-sdk/index.ts',
    'src/anthropic/index.ts',
    'src/azure/index.ts',
    'src/openai-responses/index.ts',
    'src/google/index.ts',
    'src/bedrock/index.ts',
  ],
  external: ['openai'],
});
