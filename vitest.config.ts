import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import the TypeScript sources of the workspace packages (the `source` export condition).
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
