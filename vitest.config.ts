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
    // A run folder for the run's private PostgreSQL server, started by the first test that asks
    // (postgresDatabase() in @agent-platform/core/testing) and stopped at the end of the run.
    globalSetup: ['packages/core/src/testing/postgres-global-setup.ts'],
  },
});
