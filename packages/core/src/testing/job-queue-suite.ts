import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobLease, StorageAdapter } from '../storage/types.js';
import type { StorageSuiteOptions } from './storage-options.js';

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0 + ms);
const LEASE = 30_000;

/**
 * The job queue part of the storage suite (`describeStorageAdapter` calls it): leases, takeover
 * after a lease runs out, fencing by generation, cancelling, claims racing from two adapters on
 * the same data (`share`) that never get the same job, fair claims between tenants counted from
 * every instance's leases, jobs over the byte budget passed over (not waited for) until overdue,
 * and the per-tenant lock that makes a bound on queued jobs exact.
 */
export function describeJobQueue(current: () => StorageAdapter, options: StorageSuiteOptions): void {
  describe('job queue', () => {
    let storage: StorageAdapter;
    let other: StorageAdapter;
    const job = (n: number, size = 0, tenant = 'tenant_a') => ({
      id: `job_${String(n).padStart(4, '0')}`,
      kind: 'index_document' as const,
      documentId: `doc_${n}`,
      tenant,
      payload: {},
      size,
      createdAt: at(n),
    });
    const claim = (owner: string, now: number, s = storage, maxBytes?: number) => s.jobs.claim({ owner, now: at(now), leaseMs: LEASE, ...(maxBytes !== undefined ? { maxBytes } : {}) });
    /** Queues job `n` (queued at `n` ms, of document `doc_n`) of `tenant`. */
    async function add(n: number, tenant = 'tenant_a', size = 0, s = storage) {
      await s.documents.insert({
        id: `doc_${n}`,
        userId: 'user_a',
        projectId: 'proj_q',
        fileId: null,
        sourceKey: `doc_${n}`,
        fileName: 'f.txt',
        fileType: 'txt',
        sourceType: 'text',
        status: 'pending',
        chunkCount: 0,
        vectorCount: 0,
        error: null,
        metadata: {},
        createdAt: at(n),
        updatedAt: at(n),
      });
      await s.jobs.insert(job(n, size, tenant));
    }
    async function queue(count: number, size = (_n: number) => 0) {
      for (let n = 1; n <= count; n++) await add(n, 'tenant_a', size(n));
    }
    const ids = (leases: (JobLease | undefined)[]) => leases.map((l) => l?.jobId);

    beforeEach(async () => {
      storage = current();
      await storage.projects.insert({
        id: 'proj_q',
        userId: 'user_a',
        name: 'q',
        description: '',
        instructions: '',
        icon: '',
        color: '',
        model: 'm',
        provider: 'openai',
        credentialId: null,
        providerOptions: null,
        createdAt: at(0),
        updatedAt: at(0),
      });
      other = options.share ? await options.share(storage) : storage;
    });
    afterEach(async () => {
      if (other !== storage) await other.close();
    });

    it('claims the oldest unleased job, leasing it, counting a start and bumping its generation', async () => {
      await queue(2, (n) => n * 100);
      const lease = await claim('instance_a', 0);
      expect(lease).toEqual({ jobId: 'job_0001', documentId: 'doc_1', tenant: 'tenant_a', owner: 'instance_a', generation: 1, attempts: 1, size: 100, expiresAt: at(LEASE) });
      expect(await storage.jobs.get('job_0001')).toMatchObject({ owner: 'instance_a', leaseExpiresAt: at(LEASE), attempts: 1, generation: 1 });
      expect((await claim('instance_b', 1000))?.jobId).toBe('job_0002');
      expect(await claim('instance_b', 2000)).toBeUndefined();
    });

    it('never gives two claimers the same job, however many claims race', async () => {
      await queue(40);
      const claims = await Promise.all(Array.from({ length: 60 }, (_, i) => claim(i % 2 ? 'instance_a' : 'instance_b', 1000, i % 2 ? storage : other)));
      const leases = claims.filter((l): l is JobLease => l !== undefined);
      expect(leases).toHaveLength(40);
      expect(new Set(leases.map((l) => l.jobId)).size).toBe(40);
      expect(leases.every((l) => l.attempts === 1 && l.generation === 1)).toBe(true);
      for (const l of leases) expect((await storage.jobs.get(l.jobId))?.owner).toBe(l.owner);
    });

    it('takes a job over once its lease ran out, with a new generation: the old holder is refused', async () => {
      await queue(1);
      const old = (await claim('instance_a', 0)) as JobLease;
      expect(await claim('instance_b', LEASE - 1, other)).toBeUndefined();
      // The holder's heartbeat extends the lease.
      expect(await storage.jobs.heartbeat(old, { now: at(20_000), leaseMs: LEASE })).toBe('held');
      expect(await claim('instance_b', LEASE, other)).toBeUndefined();
      const taken = (await claim('instance_b', 20_000 + LEASE, other)) as JobLease;
      expect(taken).toMatchObject({ jobId: 'job_0001', owner: 'instance_b', generation: 2, attempts: 2 });
      expect(await storage.jobs.heartbeat(old, { now: at(60_000), leaseMs: LEASE })).toBe('lost');
      expect(await storage.jobs.release(old)).toBe(false);
      expect(await storage.jobs.finish(old)).toBe(false);
      // A transaction fenced by the old lease writes nothing; the holder's does.
      const fencedWrite = (s: StorageAdapter, lease: JobLease, status: 'failed' | 'completed') =>
        s.transaction(async (tx) => {
          if ((await tx.jobs.heartbeat(lease, { now: at(60_000), leaseMs: LEASE })) !== 'held') return false;
          await tx.documents.update('doc_1', { status, updatedAt: at(60_000) });
          return tx.jobs.finish(lease);
        });
      expect(await fencedWrite(storage, old, 'failed')).toBe(false);
      expect((await storage.documents.get('user_a', 'doc_1'))?.status).toBe('pending');
      expect(await fencedWrite(other, taken, 'completed')).toBe(true);
      expect((await storage.documents.get('user_a', 'doc_1'))?.status).toBe('completed');
      expect(await storage.jobs.list()).toEqual([]);
      expect(await storage.jobs.heartbeat(old, { now: at(60_000), leaseMs: LEASE })).toBe('cancelled');
    });

    it('cancels a running job: its holder hears cancelled and can finish nothing', async () => {
      await queue(2);
      const running = (await claim('instance_a', 0)) as JobLease;
      expect(await other.jobs.cancel('doc_1')).toBe(1);
      expect(await storage.jobs.heartbeat(running, { now: at(1000), leaseMs: LEASE })).toBe('cancelled');
      expect(await storage.jobs.finish(running)).toBe(false);
      expect(await storage.jobs.cancel('doc_1')).toBe(0);
      expect((await storage.jobs.list()).map((j) => j.id)).toEqual(['job_0002']);
    });

    it('puts released jobs back at once, and every job of an owner that started again', async () => {
      await queue(3);
      const a = (await claim('instance_a', 0)) as JobLease;
      await claim('instance_a', 0);
      await claim('instance_b', 0);
      expect(await storage.jobs.release(a)).toBe(true);
      expect(await claim('instance_c', 1000)).toMatchObject({ jobId: 'job_0001', owner: 'instance_c', generation: 3, attempts: 2 });
      expect(await storage.jobs.heartbeat(a, { now: at(1000), leaseMs: LEASE })).toBe('lost');
      expect(await storage.jobs.releaseOwner('instance_a')).toBe(1);
      expect(await claim('instance_c', 1000)).toMatchObject({ jobId: 'job_0002', attempts: 2 });
      expect(await claim('instance_c', 1000)).toBeUndefined(); // instance_b's lease runs
    });

    it('claims fairly between tenants: the fewest jobs leased first (on any instance), between equals the longest waiting, each tenant oldest first', async () => {
      for (const n of [1, 2, 3]) await add(n, 'tenant_a');
      for (const n of [4, 5]) await add(n, 'tenant_b');
      await add(6, 'tenant_c');
      // Claims alternate between the instances: each counts the other's leases.
      const order = [];
      for (let i = 0; i < 7; i++) order.push(await claim(i % 2 ? 'instance_b' : 'instance_a', 0, i % 2 ? other : storage));
      expect(ids(order)).toEqual(['job_0001', 'job_0004', 'job_0006', 'job_0002', 'job_0005', 'job_0003', undefined]);
    });

    it("counts only live leases: a tenant whose jobs' leases ran out is idle again, and idleTenantsOnly takes only idle tenants' jobs", async () => {
      await add(1, 'tenant_a');
      await add(2, 'tenant_a');
      await add(3, 'tenant_b');
      expect((await claim('instance_a', 0))?.jobId).toBe('job_0001');
      const idle = (now: number, s = storage) => s.jobs.claim({ owner: 'instance_b', now: at(now), leaseMs: LEASE, idleTenantsOnly: true });
      // tenant_a holds a live lease: only tenant_b's job, then none.
      expect((await idle(1000, other))?.jobId).toBe('job_0003');
      expect(await idle(2000)).toBeUndefined();
      // Once job_0001's lease ran out, tenant_a is idle (tenant_b is not): its oldest job, the one whose lease ran out.
      expect(await idle(LEASE, other)).toMatchObject({ jobId: 'job_0001', owner: 'instance_b', generation: 2, attempts: 2 });
    });

    it('passes a job over the byte budget for the next one that fits, and takes it once overdue', async () => {
      await add(1, 'tenant_a', 600);
      await add(2, 'tenant_a', 5000);
      await add(3, 'tenant_b', 100);
      await add(4, 'tenant_b', 300);
      expect((await claim('instance_a', 0, storage, 1000))?.jobId).toBe('job_0001');
      expect((await claim('instance_a', 0, storage, 400))?.jobId).toBe('job_0003');
      // tenant_a's job_0002 comes first (it waited longest) but does not fit: job_0004 does.
      expect((await claim('instance_a', 0, other, 400))?.jobId).toBe('job_0004');
      expect(await claim('instance_a', 0, storage, 400)).toBeUndefined();
      const overdue = (overdueAt: number) => other.jobs.claim({ owner: 'instance_a', now: at(10), leaseMs: LEASE, maxBytes: 400, overdueAt: at(overdueAt) });
      expect(await overdue(1)).toBeUndefined(); // queued at 2: not overdue yet
      expect(await overdue(2)).toMatchObject({ jobId: 'job_0002', size: 5000 });
    });

    it("locks a tenant's queue in a transaction and counts its jobs, so a bound checked by instances at once is never passed", async () => {
      await add(1, 'tenant_a');
      await add(2, 'tenant_b');
      await claim('instance_a', 0); // running jobs count too
      expect(await storage.transaction((tx) => tx.jobs.lockTenant('tenant_a'))).toBe(1);
      expect(await storage.jobs.lockTenant('tenant_c')).toBe(0);
      // Twelve transactions, on two adapters where they may race, each queueing one job of
      // tenant_a when it has fewer than 5: exactly 5 in the end.
      const racer = options.share && options.concurrentTransactions !== false ? other : storage;
      const admitted = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          (i % 2 ? racer : storage).transaction(async (tx) => {
            if ((await tx.jobs.lockTenant('tenant_a')) >= 5) return false;
            await add(10 + i, 'tenant_a', 0, tx);
            return true;
          }),
        ),
      );
      expect(admitted.filter(Boolean)).toHaveLength(4);
      expect((await storage.jobs.list()).filter((j) => j.tenant === 'tenant_a')).toHaveLength(5);
    });
  });
}
