import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { CLUSTER_FILE, type PostgresCluster, stopPostgresCluster } from './postgres-cluster.js';

/**
 * vitest global setup: a run folder for the run's PostgreSQL cluster (started on first use by
 * `postgresDatabase()`), and at the end of the run the cluster stopped and the folder removed.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'ap-pg-run-'));
  // The server's own folder goes inside: the server's user must be able to reach it.
  await chmod(dir, 0o755);
  project.provide('postgresRunDir', dir);
  return async () => {
    const body = await readFile(join(dir, CLUSTER_FILE), 'utf8').catch(() => undefined);
    const cluster = body === undefined ? undefined : (JSON.parse(body) as PostgresCluster | { error: string });
    if (cluster && !('error' in cluster)) await stopPostgresCluster(cluster);
    await rm(dir, { recursive: true, force: true });
  };
}
