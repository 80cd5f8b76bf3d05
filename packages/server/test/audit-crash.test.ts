import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { databasePath } from '../src/server.js';
import { createKey, keyCall, serveBuilt } from './built-server.js';

/**
 * A change never lacks its audit event, even when its process is killed (`pnpm build` first):
 * the built server writes the event before the change, so a SIGKILL while the change is being
 * made leaves it `pending` (the change may or may not have happened), readable after a restart.
 * The `keys create` command records the key it makes, with no key and no address.
 */

let dir: string;
/** An MCP server address that takes a request and never answers: adding it stays in progress until the kill. */
let hanging: Server;
let arrived: Promise<void>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-audit-crash-'));
  let received: () => void = () => {};
  arrived = new Promise((resolve) => {
    received = resolve;
  });
  hanging = createServer(() => received());
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  hanging?.closeAllConnections();
  await new Promise((resolve) => hanging?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

it('a server killed while it makes a change leaves the change its pending event; keys create records its key', async () => {
  const key = await createKey(dir, 'crash');
  const first = await serveBuilt(dir, ['--allow-host', '127.0.0.1'], {});
  let killed = false;
  try {
    const project = await keyCall(first.url, key, 'POST', '/api/projects/create', { name: 'p', model: 'gpt-test', provider: 'openai' });
    expect(project.status).toBe(201);
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/mcp`;
    const adding = keyCall(first.url, key, 'POST', '/api/mcp/add-server', { projectId: project.body.project.id, name: 'slow', transport: 'http', url }).catch(() => undefined);
    // The server is connecting to the MCP server: the change is under way.
    await arrived;
    first.child.kill('SIGKILL');
    killed = true;
    await new Promise((resolve) => first.child.once('exit', resolve));
    await adding;
  } finally {
    if (!killed) first.child.kill('SIGKILL');
  }

  const storage = await sqliteStorage({ path: databasePath(dir) });
  let userId: string;
  try {
    const events = await storage.audit.list({ limit: 10 });
    expect(events.map((e) => [e.resource, e.action, e.outcome])).toEqual([
      ['mcp-server', 'create', 'pending'],
      ['project', 'create', 'succeeded'],
      ['key', 'key.create', 'succeeded'],
    ]);
    const [pending, created, cli] = events as [(typeof events)[0], (typeof events)[0], (typeof events)[0]];
    userId = cli.userId;
    expect(pending).toMatchObject({ userId, keyId: created.keyId, address: expect.stringMatching(/127\.0\.0\.1$/), fields: ['projectId', 'name', 'transport', 'url'] });
    // The CLI's key: made without a key, from no address, and named by the event.
    expect(cli).toMatchObject({ keyId: null, address: null, userAgent: null, workspaceId: userId, fields: ['name'] });
    expect(created.keyId).toBe(cli.resourceId);
  } finally {
    await storage.close();
  }

  // After a restart the event is there for its user, still pending: its process never answered.
  const second = await serveBuilt(dir, [], {});
  try {
    const listed = await keyCall(second.url, key, 'GET', '/api/v1/audit?outcome=pending');
    expect(listed.status).toBe(200);
    expect(listed.body.events).toEqual([expect.objectContaining({ resource: 'mcp-server', action: 'create', userId, outcome: 'pending' })]);
  } finally {
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  }
}, 120_000);
