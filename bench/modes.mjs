// The storage modes of the real server, for the benchmarks that run on either (BENCH_STORAGE):
//   sqlite     the embedded default: SQLite and the built-in vector store under a data folder;
//   postgres   the server's PostgreSQL mode (docs/DEPLOY.md): a database of a private cluster
//              (bench/postgres.mjs, pg_stat_statements loaded), AGENT_PLATFORM_SECRET, and a real
//              Chroma server (the chromadb npm package) as the shared vector store
//              (--vector-store chroma); the data folder keeps only what is local to an instance.
// A mode gives a benchmark what it needs to run the same steps on both: the env the server (a
// child process, bench/child.mjs) and `openPlatform` read, the platform for setup writes
// (users, projects), and the mode's storage and vector store for writing chunks and vectors the
// way the pipeline writes them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresStorage } from '@agent-platform/adapters-storage/postgres';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { builtinVectorStore } from '@agent-platform/adapters-vector/builtin';
import { createChromaVectorStore } from '@agent-platform/adapters-vector/chroma';
import { databasePath, openPlatform } from '@agent-platform/server';
import { startChild } from './child.mjs';
import { startBenchPostgres } from './postgres.mjs';
import { startChroma } from './vectors.mjs';

/** The master key every instance of a PostgreSQL-mode benchmark is given. */
const SECRET = 'bench-shared-secret';

/** The modes BENCH_STORAGE names: `sqlite` (the default, so recorded figures stay comparable), `postgres`, or `both` (SQLite first). */
export function benchStorageKinds(value = process.env.BENCH_STORAGE || 'sqlite') {
  const modes = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] }[value];
  if (!modes) throw new Error(`BENCH_STORAGE must be sqlite, postgres or both, got "${value}"`);
  return modes;
}

/** How a mode is named in results: `SQLite`, `PostgreSQL`. */
export const modeLabel = (kind) => (kind === 'postgres' ? 'PostgreSQL' : 'SQLite');

/**
 * What PostgreSQL mode needs, once per run: the private cluster and a Chroma server. `skipped`
 * (the reason) instead when the PostgreSQL binaries are not installed. `database(name)` makes a
 * database and answers its URL, an admin client on it (pg_stat_statements), and
 * `env(indexName, more)`: the server's environment for it with Chroma collection `indexName`.
 */
export async function startSharedServices() {
  const postgres = await startBenchPostgres();
  if (postgres.skipped) return { skipped: postgres.skipped, stop: async () => {} };
  const chromaDir = await mkdtemp(join(tmpdir(), 'ap-bench-chroma-'));
  const chroma = await startChroma(chromaDir);
  const endpoint = `http://127.0.0.1:${chroma.port}`;
  return {
    chroma: { ...chroma, endpoint },
    /** The cluster's postmaster: its child processes are the database's backends. */
    postgresPid: postgres.cluster.pid,
    async database(name) {
      const db = await postgres.database(name);
      return {
        ...db,
        env: (indexName, more = {}) => ({
          AGENT_PLATFORM_DATABASE_URL: db.url,
          AGENT_PLATFORM_SECRET: SECRET,
          AGENT_PLATFORM_VECTOR_STORE: 'chroma',
          AGENT_PLATFORM_VECTOR_STORE_CONFIG: JSON.stringify({ endpoint, indexName }),
          ...more,
        }),
      };
    },
    async stop() {
      await postgres.stop();
      await chroma.stop();
      await rm(chromaDir, { recursive: true, force: true });
    },
  };
}

/**
 * One mode for one benchmark (`name`, letters, digits and `-`: the database and the Chroma
 * collection are named after it): a new data folder, and in PostgreSQL mode a new database of
 * `services` (from {@link startSharedServices}) and its own Chroma collection.
 * - `env`: the server's environment in this mode (empty for SQLite);
 * - `openPlatform()`: the platform of the mode without knowledge, for setup writes; close it before the server starts;
 * - `openStores()`: `{ storage, vectors }` the server uses for projects without a store of their own;
 * - `start(env)`: the real server (bench/servers.mjs `ours`) in a child process, with `env` added;
 * - `db`: PostgreSQL mode's database (`url`, `admin` client), for pg_stat_statements;
 * - `databasePid`: PostgreSQL mode's postmaster, whose children do the database's work;
 * - `close()`: removes the data folder.
 */
export async function openMode(kind, name, services) {
  const dir = await mkdtemp(join(tmpdir(), `ap-bench-${name}-${kind}-`));
  const common = { kind, label: modeLabel(kind), dir, close: () => rm(dir, { recursive: true, force: true }) };
  if (kind === 'sqlite') {
    return {
      ...common,
      env: {},
      openPlatform: () => openPlatform(dir),
      openStores: async () => ({
        storage: await sqliteStorage({ path: databasePath(dir) }),
        vectors: await builtinVectorStore({ dir: join(dir, 'vectors') }),
      }),
      start: (env = {}) => startChild('ours', dir, env),
    };
  }
  if (!services || services.skipped) throw new Error(`PostgreSQL mode needs the PostgreSQL binaries: ${services?.skipped ?? 'not started'}`);
  const db = await services.database(name.replaceAll('-', '_'));
  const env = db.env(name);
  return {
    ...common,
    env,
    db,
    databasePid: services.postgresPid,
    openPlatform: () => openPlatform(dir, { env: { ...process.env, ...env } }),
    openStores: async () => ({
      storage: await postgresStorage({ connectionString: db.url }),
      vectors: createChromaVectorStore({ endpoint: services.chroma.endpoint, indexName: name }),
    }),
    start: (more = {}) => startChild('ours', dir, { ...env, ...more }),
  };
}

/**
 * Runs `fn(modes)` with the modes BENCH_STORAGE names, each opened for benchmark `name`
 * (see {@link openMode}); starts PostgreSQL mode's services only when a mode needs them, and
 * cleans everything up after.
 */
export async function withStorageModes(name, fn, kinds = benchStorageKinds()) {
  const services = kinds.includes('postgres') ? await startSharedServices() : undefined;
  const modes = [];
  try {
    for (const kind of kinds) modes.push(await openMode(kind, name, services));
    return await fn(modes);
  } finally {
    for (const mode of modes) await mode.close();
    await services?.stop();
  }
}
