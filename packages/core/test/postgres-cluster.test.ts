import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createPostgresDatabase, findServerBinaries, postgresDatabase, startPostgresCluster, stopPostgresCluster } from '../src/testing/index.js';

const run = promisify(execFile);
const psql = (url: string, query: string) => run(join(findServerBinaries(), 'psql'), ['-At', '-X', url, '-c', query]).then((r) => r.stdout.trim());

describe('test PostgreSQL cluster', () => {
  it('gives each call its own empty database on a server listening on 127.0.0.1 only', async () => {
    const [a, b] = await Promise.all([postgresDatabase(), postgresDatabase()]);
    expect(a).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/t_[0-9a-f]{16}$/);
    expect(a).not.toBe(b);
    await psql(a, 'create table only_in_a (x int)');
    expect(await psql(a, "select count(*) from pg_tables where tablename = 'only_in_a'")).toBe('1');
    expect(await psql(b, "select count(*) from pg_tables where tablename = 'only_in_a'")).toBe('0');
    expect(await psql(a, "select setting from pg_settings where name = 'listen_addresses'")).toBe('127.0.0.1');
    expect(await psql(a, 'show server_version_num').then(Number)).toBeGreaterThanOrEqual(150000);
  });

  it('starts a cluster with extra server settings (a benchmark preloads pg_stat_statements)', async () => {
    const cluster = await startPostgresCluster({ settings: ['shared_preload_libraries=pg_stat_statements', 'max_connections=123'] });
    try {
      const url = await createPostgresDatabase(cluster, 'settings_check');
      expect(await psql(url, 'show max_connections')).toBe('123');
      await psql(url, 'create extension pg_stat_statements');
      expect(Number(await psql(url, 'select count(*) from pg_stat_statements'))).toBeGreaterThan(0);
    } finally {
      await stopPostgresCluster(cluster);
    }
  }, 60_000);

  it('names the package to install when the server binaries are missing', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'ap-no-pg-'));
    try {
      expect(() => findServerBinaries([empty], empty)).toThrow(/PostgreSQL is not installed.*apt-get install -y postgresql/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
