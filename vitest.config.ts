import { defineConfig } from 'vitest/config';

// Tests import the TypeScript sources of the workspace packages (their `agent-platform:source`
// export condition; a name of our own, as dependencies publish a plain `source` condition
// pointing at TypeScript of theirs).
const sources = {
  resolve: { conditions: ['agent-platform:source'] },
  ssr: { resolve: { conditions: ['agent-platform:source'] } },
};
const timeouts = { testTimeout: 30_000, hookTimeout: 60_000 };

/**
 * The HTTP suites that run a second time with their servers in PostgreSQL mode (the "postgres"
 * project): projects, keys, documents and search, settings and re-indexing, chats, completions
 * and streams, credentials, tools, MCP, models. Left out: suites that do not use storage in a
 * way that differs (body limits, OpenAPI, outbound policy, nesting and hostile-input fuzzing,
 * local models), and the slowest that add nothing storage-specific (tools-hostile,
 * knowledge-bombs). Any HTTP suite runs on PostgreSQL with
 * `AGENT_PLATFORM_TEST_STORAGE=postgres vitest run --project sqlite FILE` (see README, Testing).
 */
const POSTGRES_SUITES = [
  'http',
  'chats',
  'completions',
  'completions-project-model',
  'credentials',
  'credential-precedence',
  'knowledge',
  'knowledge-files',
  'knowledge-transformers',
  'vector-stores',
  'relevance-floor',
  'secrets-at-rest',
  'tools',
  'mcp',
  'models',
  'providers',
  'routes',
  'prototype-keys',
  'prototype-inputs',
].map((name) => `packages/server/test/${name}.test.ts`);

export default defineConfig({
  ...sources,
  test: {
    // Run-wide, shared by both projects: a run folder for the run's private PostgreSQL server,
    // started by the first test that asks (postgresDatabase() in @agent-platform/core/testing) and
    // stopped at the end of the run; and a Chroma server when the run's environment sets
    // AGENT_PLATFORM_TEST_STORAGE=postgres.
    globalSetup: ['packages/core/src/testing/postgres-global-setup.ts', 'packages/server/test/chroma-global-setup.ts'],
    projects: [
      { ...sources, test: { name: 'sqlite', include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts'], ...timeouts } },
      {
        ...sources,
        test: {
          name: 'postgres',
          include: POSTGRES_SUITES,
          env: { AGENT_PLATFORM_TEST_STORAGE: 'postgres' },
          // This project's own Chroma server (the run-wide one is started only on request).
          globalSetup: ['packages/server/test/chroma-global-setup.ts'],
          ...timeouts,
        },
      },
    ],
  },
});
