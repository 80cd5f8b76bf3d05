// A private PostgreSQL server for benchmarks, started the way the tests start theirs
// (startPostgresCluster of @agent-platform/core/testing: initdb in a temporary folder, 127.0.0.1,
// a free port, durability off), with pg_stat_statements preloaded so a benchmark can read the
// database's own time per statement. Resolves undefined, with the reason, when the PostgreSQL
// binaries are not installed, so `pnpm bench` still runs on a machine without them.
import { createPostgresDatabase, findServerBinaries, startPostgresCluster, stopPostgresCluster } from '@agent-platform/core/testing';
import pg from 'pg';

export async function startBenchPostgres() {
  try {
    findServerBinaries();
  } catch (error) {
    return { skipped: error.message };
  }
  const cluster = await startPostgresCluster({ settings: ['shared_preload_libraries=pg_stat_statements', 'pg_stat_statements.track=top'] });
  // A killed run must not leave the server behind: stop it when this process exits.
  const killOnExit = () => {
    try {
      process.kill(cluster.pid, 'SIGKILL');
    } catch {}
  };
  process.once('exit', killOnExit);
  const admins = [];
  return {
    cluster,
    /** A new database with pg_stat_statements; answers its URL and an admin client on it. */
    async database(name) {
      const url = await createPostgresDatabase(cluster, name);
      const admin = new pg.Client({ connectionString: url, application_name: 'bench-admin' });
      await admin.connect();
      await admin.query('create extension if not exists pg_stat_statements');
      admins.push(admin);
      return { url, admin };
    },
    async stop() {
      for (const a of admins) await a.end().catch(() => {});
      await stopPostgresCluster(cluster);
      process.removeListener('exit', killOnExit);
    },
  };
}

/**
 * The database's own time since the last reset, from pg_stat_statements: total execution ms and
 * calls of the statements run on `admin`'s database by everyone but `bench-admin`, split into the
 * job queue's (statements on `jobs`: claim polls and leases, which run in the background) and the
 * rest (what requests ran).
 */
export async function statementTime(admin) {
  const { rows } = await admin.query(
    `select s.query, s.calls::float8 as calls, s.total_exec_time as ms from pg_stat_statements s
     where s.dbid = (select oid from pg_database where datname = current_database())`,
  );
  const out = { ms: 0, calls: 0, queueMs: 0, queueCalls: 0 };
  for (const r of rows) {
    if (/pg_stat_statements|pg_stat_activity|pg_total_relation_size/.test(r.query)) continue;
    if (/\bjobs\b/.test(r.query)) {
      out.queueMs += r.ms;
      out.queueCalls += r.calls;
    } else {
      out.ms += r.ms;
      out.calls += r.calls;
    }
  }
  return out;
}

export const resetStatements = (admin) => admin.query('select pg_stat_statements_reset()');

/** Client connections to `admin`'s database, other than the admin's own. */
export async function connections(admin) {
  const { rows } = await admin.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and application_name <> 'bench-admin'");
  return rows[0].n;
}
