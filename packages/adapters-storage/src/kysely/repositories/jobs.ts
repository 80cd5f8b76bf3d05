import type { JobLease, JobRepository, StorageAdapter } from '@agent-platform/core';
import type { Selectable } from 'kysely';
import type { Database } from '../database.js';
import { readTime } from '../dialect.js';
import type { RepositoryContext } from './context.js';

type JobRow = Selectable<Database['jobs']>;

const toLease = (row: JobRow): JobLease => ({
  jobId: row.id,
  documentId: row.document_id,
  tenant: row.tenant,
  owner: row.owner as string,
  generation: row.generation,
  attempts: row.attempts,
  size: Number(row.size),
  expiresAt: readTime(row.lease_expires_at as Date | number),
});

/**
 * The job queue (see `JobRepository`). Every write of a lease's job names the lease's owner and
 * generation in its WHERE clause, so one statement both checks and writes: a stale holder's
 * write changes no row.
 */
export function jobRepository({ db, dialect, records }: RepositoryContext): Pick<StorageAdapter, 'jobs'> {
  const { time } = dialect;
  const { toJob } = records;
  const held = (lease: JobLease) => db.updateTable('jobs').where('id', '=', lease.jobId).where('owner', '=', lease.owner).where('generation', '=', lease.generation);
  const jobs: JobRepository = {
    async insert(job) {
      await db
        .insertInto('jobs')
        .values({
          id: job.id,
          kind: job.kind,
          document_id: job.documentId,
          tenant: job.tenant,
          payload: JSON.stringify(job.payload),
          attempts: job.attempts ?? 0,
          created_at: time(job.createdAt),
          size: job.size ?? 0,
          owner: null,
          lease_expires_at: null,
          generation: 0,
        })
        .execute();
    },
    async list() {
      const rows = await db.selectFrom('jobs').selectAll().orderBy('created_at').orderBy('id').execute();
      return rows.map(toJob);
    },
    async get(id) {
      const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toJob(row);
    },
    async delete(id) {
      await db.deleteFrom('jobs').where('id', '=', id).execute();
    },
    async claim({ owner, now, leaseMs, maxBytes, overdueAt, idleTenantsOnly }) {
      const at = time(now);
      // One statement: the job is picked and leased together. The tenants' running jobs are
      // counted in it from the jobs' leases (every instance's), so the pick is fair across
      // instances. PostgreSQL locks the picked row and skips rows other claims have locked (each
      // claim gets another job, none waits; a row leased meanwhile is re-checked and passed
      // over); SQLite runs the statement under its database-wide write lock (see
      // `StorageDialect.skipLocked`), so its counts are exact.
      const row = await db
        .updateTable('jobs')
        .set((eb) => ({
          owner,
          lease_expires_at: time(new Date(now.getTime() + leaseMs)),
          attempts: eb('attempts', '+', 1),
          generation: eb('generation', '+', 1),
        }))
        .where('id', '=', (eb) =>
          eb
            .selectFrom('jobs as j')
            .leftJoin(
              (q) =>
                q
                  .selectFrom('jobs as l')
                  .select((c) => ['l.tenant', c.fn.countAll<number>().as('running')])
                  .where('l.owner', 'is not', null)
                  .where('l.lease_expires_at', '>', at)
                  .groupBy('l.tenant')
                  .as('r'),
              (join) => join.onRef('r.tenant', '=', 'j.tenant'),
            )
            .select('j.id')
            .where((w) => w.or([w('j.owner', 'is', null), w('j.lease_expires_at', '<=', at)]))
            // A job that does not fit is passed over for the next that does, until it is overdue.
            .$if(maxBytes !== undefined, (q) =>
              q.where((w) => (overdueAt ? w.or([w('j.size', '<=', maxBytes as number), w('j.created_at', '<=', time(overdueAt))]) : w('j.size', '<=', maxBytes as number))),
            )
            .$if(idleTenantsOnly === true, (q) => q.where('r.running', 'is', null))
            .orderBy((o) => o.fn.coalesce('r.running', o.val(0)))
            .orderBy('j.created_at')
            .orderBy('j.id')
            .limit(1)
            .$if(dialect.skipLocked, (q) => q.forUpdate(['j']).skipLocked()),
        )
        .returningAll()
        .executeTakeFirst();
      return row && toLease(row);
    },
    async lockTenant(tenant) {
      // An upsert of the tenant's lock row: a second transaction's upsert of it waits for the
      // first to end (PostgreSQL's row lock; SQLite's write lock), and its count then sees the
      // first one's jobs.
      const name = `jobs:${tenant}`;
      await db
        .insertInto('locks')
        .values({ name })
        .onConflict((oc) => oc.column('name').doUpdateSet({ name }))
        .execute();
      const row = await db
        .selectFrom('jobs')
        .select((c) => c.fn.countAll<number>().as('n'))
        .where('tenant', '=', tenant)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async heartbeat(lease, { now, leaseMs }) {
      const extended = await held(lease)
        .set({ lease_expires_at: time(new Date(now.getTime() + leaseMs)) })
        .returning('id')
        .executeTakeFirst();
      if (extended) return 'held';
      const row = await db.selectFrom('jobs').select('id').where('id', '=', lease.jobId).executeTakeFirst();
      return row ? 'lost' : 'cancelled';
    },
    async finish(lease) {
      const result = await db.deleteFrom('jobs').where('id', '=', lease.jobId).where('owner', '=', lease.owner).where('generation', '=', lease.generation).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async release(lease) {
      const row = await held(lease)
        .set((eb) => ({ owner: null, lease_expires_at: null, generation: eb('generation', '+', 1) }))
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },
    async releaseOwner(owner) {
      const result = await db
        .updateTable('jobs')
        .set((eb) => ({ owner: null, lease_expires_at: null, generation: eb('generation', '+', 1) }))
        .where('owner', '=', owner)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },
    async cancel(documentId) {
      const result = await db.deleteFrom('jobs').where('document_id', '=', documentId).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
  return { jobs };
}
