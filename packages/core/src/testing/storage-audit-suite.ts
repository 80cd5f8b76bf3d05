import { beforeEach, describe, expect, it } from 'vitest';
import type { AuditEventRecord, StorageAdapter } from '../storage/types.js';
import { at, type StorageUnderTest } from './storage-rows.js';

/** The audit log: every field round-trips, filters and keyset pages newest first, one settle per event, purge by age. */
export function describeAudit(suite: StorageUnderTest): void {
  describe('audit events', () => {
    let storage: StorageAdapter;
    const event = (n: number, overrides: Partial<AuditEventRecord> = {}): AuditEventRecord => ({
      id: `aud_${String(n).padStart(6, '0')}`,
      at: at(n),
      workspaceId: 'user_a',
      userId: 'user_a',
      keyId: 'key_a',
      action: 'update',
      resource: 'project',
      resourceId: 'proj_1',
      fields: ['name', 'model'],
      outcome: 'succeeded',
      address: '127.0.0.1',
      userAgent: 'curl/8.5',
      ...overrides,
    });
    const ids = (rows: readonly AuditEventRecord[]) => rows.map((e) => e.id);

    beforeEach(() => {
      storage = suite.current();
    });

    it('round-trips every field, nulls and an empty field list included', async () => {
      const full = event(1);
      const bare = event(2, { workspaceId: null, keyId: null, resourceId: null, fields: [], address: null, userAgent: null, outcome: 'pending', action: 'key.create' });
      await storage.audit.append(full);
      await storage.audit.append(bare);
      expect(await storage.audit.list({ limit: 10 })).toEqual([bare, full]);
      await expect(storage.audit.append(full)).rejects.toThrow();
    });

    it('lists newest first, filtered by each member, and pages by position', async () => {
      await storage.audit.append(event(1));
      await storage.audit.append(event(2, { userId: 'user_b', keyId: null }));
      await storage.audit.append(event(3, { resource: 'credential', resourceId: 'cred_1', action: 'create' }));
      await storage.audit.append(event(4, { workspaceId: 'user_b', userId: 'user_b' }));
      await storage.audit.append(event(5, { workspaceId: null, resource: 'local-model', resourceId: 'tiny:latest', action: 'delete', outcome: 'failed' }));
      // Two at the same instant: the id decides.
      await storage.audit.append(event(6, { id: 'aud_000006b' }));
      await storage.audit.append(event(6, { id: 'aud_000006a' }));
      const list = (q: Omit<Parameters<StorageAdapter['audit']['list']>[0], 'limit'>, limit = 10) => storage.audit.list({ ...q, limit }).then(ids);
      expect(await list({})).toEqual(['aud_000006b', 'aud_000006a', 'aud_000005', 'aud_000004', 'aud_000003', 'aud_000002', 'aud_000001']);
      expect(await list({ workspaceId: 'user_a' })).toEqual(['aud_000006b', 'aud_000006a', 'aud_000003', 'aud_000002', 'aud_000001']);
      expect(await list({ workspaceId: null })).toEqual(['aud_000005']);
      expect(await list({ workspaceId: 'user_a', userId: 'user_b' })).toEqual(['aud_000002']);
      expect(await list({ resource: 'credential' })).toEqual(['aud_000003']);
      expect(await list({ resource: 'project', resourceId: 'proj_1', workspaceId: 'user_a' })).toEqual(['aud_000006b', 'aud_000006a', 'aud_000002', 'aud_000001']);
      expect(await list({ resourceId: 'cred_1' })).toEqual(['aud_000003']);
      expect(await list({ action: 'delete' })).toEqual(['aud_000005']);
      expect(await list({ outcome: 'failed' })).toEqual(['aud_000005']);
      // `from` takes its instant, `to` does not.
      expect(await list({ from: at(2), to: at(4) })).toEqual(['aud_000003', 'aud_000002']);
      // Keyset pages: strictly after the last row's (at, id), ties on `at` broken by id.
      expect(await list({}, 2)).toEqual(['aud_000006b', 'aud_000006a']);
      expect(await list({ after: { createdAt: at(6), id: 'aud_000006b' } }, 2)).toEqual(['aud_000006a', 'aud_000005']);
      expect(await list({ after: { createdAt: at(5), id: 'aud_000005' }, workspaceId: 'user_a' }, 2)).toEqual(['aud_000003', 'aud_000002']);
      expect(await list({ after: { createdAt: at(1), id: 'aud_000001' } })).toEqual([]);
    });

    it('settles a pending event once: its outcome, and a resource id only where it had none', async () => {
      await storage.audit.append(event(1, { outcome: 'pending', resourceId: null, action: 'create' }));
      await storage.audit.append(event(2, { outcome: 'pending' }));
      expect(await storage.audit.settle('aud_000001', 'succeeded', 'proj_new')).toBe(true);
      expect(await storage.audit.settle('aud_000002', 'failed', 'proj_other')).toBe(true);
      // Settled already: nothing changes.
      expect(await storage.audit.settle('aud_000001', 'failed', 'proj_else')).toBe(false);
      expect(await storage.audit.settle('aud_unknown', 'succeeded')).toBe(false);
      const [second, first] = await storage.audit.list({ limit: 10 });
      expect(first).toEqual(event(1, { outcome: 'succeeded', resourceId: 'proj_new', action: 'create' }));
      expect(second).toEqual(event(2, { outcome: 'failed', resourceId: 'proj_1' }));
      expect(await storage.audit.settle('aud_000002', 'succeeded')).toBe(false);
      await storage.audit.append(event(3, { outcome: 'pending', resourceId: null }));
      expect(await storage.audit.settle('aud_000003', 'succeeded')).toBe(true);
      expect((await storage.audit.list({ limit: 1 }))[0]).toMatchObject({ outcome: 'succeeded', resourceId: null });
    });

    it('purges the events older than a time, idempotently, keeping the rest', async () => {
      for (let n = 1; n <= 5; n++) await storage.audit.append(event(n));
      expect(await storage.audit.purge(at(3))).toBe(2);
      expect(await storage.audit.purge(at(3))).toBe(0);
      expect(ids(await storage.audit.list({ limit: 10 }))).toEqual(['aud_000005', 'aud_000004', 'aud_000003']);
      // Two purges at once (two instances) delete each event once.
      const [a, b] = await Promise.all([storage.audit.purge(at(5)), storage.audit.purge(at(5))]);
      expect(a + b).toBe(2);
      expect(ids(await storage.audit.list({ limit: 10 }))).toEqual(['aud_000005']);
    });

    it('keeps an event appended by the operator in a transaction only when it commits', async () => {
      await storage.transaction(async (tx) => tx.audit.append(event(1)));
      await expect(
        storage.transaction(async (tx) => {
          await tx.audit.append(event(2));
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(ids(await storage.audit.list({ limit: 10 }))).toEqual(['aud_000001']);
    });
  });
}
