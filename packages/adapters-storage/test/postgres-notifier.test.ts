import { connect, createServer, type Server } from 'node:net';
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

/**
 * A TCP proxy on 127.0.0.1 in front of the PostgreSQL server of `url`, reading what clients send:
 * per connection's `application_name`, the round trips they start (a Sync of the extended
 * protocol, which ends a parameterized statement, or a simple Query).
 */
async function countingProxy(url: string) {
  const target = new URL(url);
  const roundTrips = new Map<string, number>();
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    let pending = Buffer.alloc(0);
    let application: string | undefined;
    client.on('data', (data) => {
      upstream.write(data);
      pending = Buffer.concat([pending, data]);
      for (;;) {
        // The startup message has no type byte: length, protocol, then name/value pairs.
        const header = application === undefined ? 0 : 1;
        if (pending.length < header + 4 || pending.length < header + pending.readInt32BE(header)) break;
        const length = header + pending.readInt32BE(header);
        if (application === undefined) {
          const params = pending.subarray(8, length).toString().split('\0');
          const at = params.indexOf('application_name');
          application = at >= 0 ? (params[at + 1] as string) : '';
        } else if (pending[0] === 0x53 || pending[0] === 0x51) {
          roundTrips.set(application, (roundTrips.get(application) ?? 0) + 1);
        }
        pending = pending.subarray(length);
      }
    });
    upstream.on('data', (data) => client.write(data));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.port = String((server.address() as { port: number }).port);
  return { url: proxied.toString(), roundTrips, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('postgres notifier', () => {
  it('sends the messages published while one is being sent together, in one round trip, in order, none dropped', async () => {
    const url = await postgresDatabase();
    const proxy = await countingProxy(url);
    const [sender, listener] = [await postgresNotifier({ connectionString: proxy.url }), await postgresNotifier({ connectionString: url })];
    try {
      const heard = nextPayloads(listener, 'burst', 51);
      // The first goes at once; the other 50 are published while it is in flight. Two of them
      // are the same message: PostgreSQL would deliver identical ones of one statement once.
      const payloads = [0, ...Array.from({ length: 48 }, (_, i) => i + 1), 'same', 'same'];
      await Promise.all(payloads.map((p) => sender.publish('burst', p)));
      expect(await heard).toEqual(payloads);
      // The first message, the next 49, and the repeated one in a statement of its own.
      expect(proxy.roundTrips.get(`${NOTIFIER_APPLICATION_NAME}_send`)).toBe(3);
    } finally {
      await sender.close();
      await listener.close();
      await proxy.close();
    }
  });

  it('reconnects and listens again when its listening connection is killed', async () => {
    const url = await postgresDatabase();
    const [a, b] = [await postgresNotifier({ connectionString: url, maxReconnectMs: 200 }), await postgresNotifier({ connectionString: url })];
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const killed = await admin.query('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [NOTIFIER_APPLICATION_NAME]);
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
