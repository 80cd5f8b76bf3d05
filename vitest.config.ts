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
 * project), chosen for what storage does under them: keys and projects (paging, filters),
 * documents, upload and blobs, fair indexing between users and the bound on a user's queue,
 * search of every type, owner-scoped chunk reads, settings, re-indexing and moving stores,
 * chats, completions, client tools continuing a chat and resumable streams, credentials, tools,
 * MCP servers, each project's own MCP server, models, secrets at rest, every route with a valid call, the per-user caps (their
 * chats, completions, client tools continuing a chat and resumable streams, stored responses, the audit log, credentials, tools,
 * MCP servers, models, secrets at rest, every route with a valid call, the per-user caps (their
 * counts and row locks, creates racing at a cap), chat history read from a chat's end within a
 * token budget, and the loopback policy (its operator URLs differ in that mode: the shared
 * vector store). Left out to keep the
 * run within CI's budget (about +4 minutes on 2 cores): suites whose storage use those cover
 * (providers, completions' project-model form, relevance floor, prototype names), suites about the embedder, the
 * outbound policy, body limits, OpenAPI, nesting, hostile input and local models. SQLite-only
 * by nature: data-paths (errors naming the data folder's `files/` and `vectors/`, which PostgreSQL
 * mode does not use), and the key file case of credentials (skipped there: the key comes from
 * AGENT_PLATFORM_SECRET); restarts and crashes of one process on one SQLite file are tested
 * with their own servers (crash, knowledge-restarts), several instances on PostgreSQL by
 * multi-instance and the *-instances suites. Any of them
 * runs on PostgreSQL with `AGENT_PLATFORM_TEST_STORAGE=postgres vitest run --project sqlite FILE`
 * (README, "Status").
 */
const POSTGRES_SUITES = [
  'http',
  'chats',
  'chat-ids',
  'completions',
  'client-tools',
  'approvals',
  'credentials',
  'credential-precedence',
  'knowledge',
  'knowledge-files',
  'knowledge-fair',
  'vector-stores',
  'chunk-owner',
  'secrets-at-rest',
  'tools',
  'mcp',
  'agent-mcp',
  'models',
  'routes',
  'user-caps',
  'chat-history',
  'loopback-policy',
  'completion-images',
  'chat-images',
  'responses',
  'audit',
  'responses-replay',
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
