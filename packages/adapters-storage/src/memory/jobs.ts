import type { JobLease, JobRecord, JobRepository } from '@agent-platform/core';
import { clone, compareNewestFirst, insertUnique, type Tables } from './tables.js';

/**
 * The job queue in memory. Each method does its reads and writes without awaiting in between, so
 * it is atomic; a job's lease is checked by owner and generation as in the SQL adapters.
 */
export function memoryJobs(tables: () => Tables): JobRepository {
  const heldBy = (lease: JobLease) => {
    const job = tables().jobs.get(lease.jobId);
    return job && job.owner === lease.owner && job.generation === lease.generation ? job : undefined;
  };
  const reset = (job: JobRecord): JobRecord => ({ ...job, owner: null, leaseExpiresAt: null, generation: job.generation + 1 });
  return {
    async insert(job) {
      const t = tables();
      if (!t.documents.has(job.documentId)) throw new Error(`Document ${job.documentId} does not exist`);
      insertUnique(t.jobs, job.id, clone({ size: 0, attempts: 0, ...job, owner: null, leaseExpiresAt: null, generation: 0 }), 'Job');
    },
    async list() {
      return [...tables().jobs.values()].sort((a, b) => compareNewestFirst(b, a)).map(clone);
    },
    async get(id) {
      const job = tables().jobs.get(id);
      return job && clone(job);
    },
    async delete(id) {
      tables().jobs.delete(id);
    },
    async claim({ owner, now, leaseMs, maxBytes, overdueAt, idleTenantsOnly }) {
      const t = tables();
      const live = (j: JobRecord) => j.owner !== null && j.leaseExpiresAt !== null && j.leaseExpiresAt.getTime() > now.getTime();
      const leased = new Map<string, number>();
      for (const j of t.jobs.values()) if (live(j)) leased.set(j.tenant, (leased.get(j.tenant) ?? 0) + 1);
      const running = (j: JobRecord) => leased.get(j.tenant) ?? 0;
      const fits = (j: JobRecord) => maxBytes === undefined || j.size <= maxBytes || (overdueAt !== undefined && j.createdAt.getTime() <= overdueAt.getTime());
      const job = [...t.jobs.values()].filter((j) => !live(j) && fits(j) && (!idleTenantsOnly || running(j) === 0)).sort((a, b) => running(a) - running(b) || compareNewestFirst(b, a))[0];
      if (!job) return undefined;
      const claimed: JobRecord = { ...job, owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), attempts: job.attempts + 1, generation: job.generation + 1 };
      t.jobs.set(job.id, claimed);
      return {
        jobId: job.id,
        documentId: job.documentId,
        tenant: job.tenant,
        owner,
        generation: claimed.generation,
        attempts: claimed.attempts,
        size: job.size,
        expiresAt: claimed.leaseExpiresAt as Date,
      };
    },
    async lockTenant(tenant) {
      // Memory transactions run one at a time: counting is enough.
      let n = 0;
      for (const j of tables().jobs.values()) if (j.tenant === tenant) n++;
      return n;
    },
    async heartbeat(lease, { now, leaseMs }) {
      const job = heldBy(lease);
      if (job) {
        tables().jobs.set(job.id, { ...job, leaseExpiresAt: new Date(now.getTime() + leaseMs) });
        return 'held';
      }
      return tables().jobs.has(lease.jobId) ? 'lost' : 'cancelled';
    },
    async finish(lease) {
      return heldBy(lease) ? tables().jobs.delete(lease.jobId) : false;
    },
    async release(lease) {
      const job = heldBy(lease);
      if (job) tables().jobs.set(job.id, reset(job));
      return job !== undefined;
    },
    async releaseOwner(owner) {
      const t = tables();
      let n = 0;
      for (const job of [...t.jobs.values()]) {
        if (job.owner !== owner) continue;
        t.jobs.set(job.id, reset(job));
        n++;
      }
      return n;
    },
    async cancel(documentId) {
      const t = tables();
      let n = 0;
      for (const job of [...t.jobs.values()]) if (job.documentId === documentId && t.jobs.delete(job.id)) n++;
      return n;
    },
  };
}
