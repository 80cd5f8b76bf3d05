import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresDatabase } from '@agent-platform/core/testing';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveDeployment } from '../src/deployment.js';
import { openPlatform } from '../src/server.js';

// The storage pool of an instance in PostgreSQL mode (`--database-pool`,
// AGENT_PLATFORM_DATABASE_POOL): what an operator sizes against max_connections.

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the database pool size', () => {
  it('comes from the option, else AGENT_PLATFORM_DATABASE_POOL; a bad value names the flag', () => {
    expect(resolveDeployment({ database: 'postgres://db/x', databasePool: 4 }, { AGENT_PLATFORM_DATABASE_POOL: '7' }).databasePool).toBe(4);
    expect(resolveDeployment({ database: 'postgres://db/x' }, { AGENT_PLATFORM_DATABASE_POOL: '7' }).databasePool).toBe(7);
    expect(resolveDeployment({ database: 'postgres://db/x' }, {}).databasePool).toBeUndefined();
    for (const bad of ['0', '-1', 'ten', '2.5', '1001']) {
      expect(() => resolveDeployment({}, { AGENT_PLATFORM_DATABASE_POOL: bad })).toThrow(`--database-pool (AGENT_PLATFORM_DATABASE_POOL) must be an integer from 1 to 1000, got "${bad}"`);
    }
  });

  it('bounds the connections an instance opens to PostgreSQL under concurrent requests', async () => {
    const database = await postgresDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'ap-pool-'));
    dirs.push(dir);
    const platform = await openPlatform(dir, { database, databasePool: 2, env: { AGENT_PLATFORM_SECRET: 'pool-test-secret' } });
    const checker = new pg.Client({ connectionString: database, application_name: 'pool-checker' });
    await checker.connect();
    try {
      const { key, userId } = await platform.createUserWithKey({ name: 'pool' });
      expect(key).toBeTruthy();
      // 40 requests at once: a pool of pg's default (10) opens 10 connections for them.
      await Promise.all(Array.from({ length: 40 }, (_, i) => platform.createProject({ userId }, { name: `p${i}`, model: 'm', provider: 'openai' })));
      const { rows } = await checker.query<{ n: string }>(
        "select count(*) as n from pg_stat_activity where datname = current_database() and backend_type = 'client backend' and application_name <> 'pool-checker'",
      );
      expect(Number(rows[0]?.n)).toBeGreaterThan(0);
      expect(Number(rows[0]?.n)).toBeLessThanOrEqual(2);
      expect((await platform.listProjects({ userId }, { limit: 100 })).projects).toHaveLength(40);
    } finally {
      await checker.end();
      await platform.close();
    }
  }, 60_000);
});
