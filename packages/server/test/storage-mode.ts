/** Where the HTTP suites' test servers keep their data. */
export type TestStorage = 'sqlite' | 'postgres';

/**
 * The storage of this test run's servers, from AGENT_PLATFORM_TEST_STORAGE: `sqlite` (unset, the
 * default) or `postgres` (the vitest project "postgres" sets it; see vitest.config.ts). Anything
 * else stops the run naming the choices, rather than quietly testing SQLite.
 */
export const testStorage: TestStorage = (() => {
  const value = process.env.AGENT_PLATFORM_TEST_STORAGE || 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`AGENT_PLATFORM_TEST_STORAGE must be sqlite or postgres, got "${value}"`);
  return value;
})();

/** True when the servers run on PostgreSQL: tests about SQLite files or one process skip themselves with `it.skipIf(onPostgres)`. */
export const onPostgres = testStorage === 'postgres';
