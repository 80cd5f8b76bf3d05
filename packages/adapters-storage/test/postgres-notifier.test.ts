import { describeNotifier, nextPayloads, postgresDatabase } from '@agent-platform/core/testing';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { NOTIFIER_APPLICATION_NAME, postgresNotifier } from '../src/postgres/index.js';

// Against the test run's private PostgreSQL cluster: each notifier is one instance's.
let shared: Promise<string> | undefined;
const database = () => {
  shared ??= postgresDatabase();
  return shared;
};
describeNotifier('postgres', {
  create: async () => postgresNotifier({ connectionString: await database() }),
  shared: true,
});

describe('postgres notifier', () => {
  it('reconnects and listens again when its listening connection is killed', async () => {
    const url = await postgresDatabase();
    const [a, b] = [await postgresNotifier({ connectionString: url, maxReconnectMs: 200 }), await postgresNotifier({ connectionString: url })];
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const killed = await admin.query('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [
        NOTIFIER_APPLICATION_NAME,
      ]);
      expect(killed.rows.length).toBe(2);
      // Both listeners come back; until then messages may be lost (at most once), so publish until heard.
      for (const listener of [a, b]) {
        let heard = false;
        const waiting = nextPayloads(listener, 'back').then(() => {
          heard = true;
        });
        for (let i = 0; i < 200 && !heard; i++) {
          await b.publish('back', i);
          await new Promise((r) => setTimeout(r, 25));
        }
        await waiting;
      }
    } finally {
      await admin.end();
      await a.close();
      await b.close();
    }
  });

  it('refuses a channel that is not an identifier', async () => {
    await expect(postgresNotifier({ connectionString: await postgresDatabase(), channel: 'x; DROP TABLE users' })).rejects.toThrow(/lower-case SQL identifier/);
  });
});
