import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import the TypeScript sources of the workspace packages (their `agent-platform:source`
  // export condition; a name of our own, as dependencies publish a plain `source` condition
  // pointing at TypeScript of theirs).
  resolve: { conditions: ['agent-platform:source'] },
  ssr: { resolve: { conditions: ['agent-platform:source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
