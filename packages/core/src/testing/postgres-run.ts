import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { CLUSTER_FILE, createPostgresDatabase, type PostgresCluster, startPostgresCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder (made by the global setup) where the run's shared PostgreSQL cluster lives. */
    postgresRunDir: string;
  }
}

let cluster: Promise<PostgresCluster> | undefined;

/**
 * The run's one cluster, started by whichever test file asks first (runs that touch no
 * PostgreSQL test start none): a `mkdir` in the run folder elects the starter, the others
 * wait for the record it writes. A failed start is recorded too, so every asking test fails
 * with its message.
 */
function runCluster(): Promise<PostgresCluster> {
  cluster ??= (async () => {
    const dir = inject('postgresRunDir');
    if (!dir) throw new Error('No PostgreSQL run folder: the vitest config must list packages/core/src/testing/postgres-global-setup.ts in globalSetup.');
    const record = join(dir, CLUSTER_FILE);
    const elected = await mkdir(join(dir, 'starting')).then(
      () => true,
      () => false,
    );
    if (elected) {
      let body: string;
      try {
        body = JSON.stringify(await startPostgresCluster({ parent: dir }));
      } catch (error) {
        body = JSON.stringify({ error: error instanceof Error ? error.message : String(error) });
      }
      await writeFile(`${record}.tmp`, body);
      await rename(`${record}.tmp`, record);
    }
    const deadline = Date.now() + 120_000;
    for (;;) {
      const body = await readFile(record, 'utf8').catch(() => undefined);
      if (body !== undefined) {
        const parsed = JSON.parse(body) as PostgresCluster | { error: string };
        if ('error' in parsed) throw new Error(parsed.error);
        return parsed;
      }
      if (Date.now() > deadline) throw new Error("Timed out waiting for the test run's PostgreSQL cluster to start");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return cluster;
}

/**
 * A new, empty database on the test run's private PostgreSQL server; answers its connection
 * string (`postgres://postgres@127.0.0.1:PORT/NAME`). Each call makes another database, so test
 * files (and tests) never share data. Fails, never skips, when PostgreSQL is not installed.
 */
export async function postgresDatabase(): Promise<string> {
  return createPostgresDatabase(await runCluster(), `t_${randomBytes(8).toString('hex')}`);
}
