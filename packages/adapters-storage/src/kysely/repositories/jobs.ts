import type { JobLease, JobRepository, StorageAdapter } from '@agent-platform/core';
import type { Selectable } from 'kysely';
import type { Database } from '../database.js';
import { readTime } from '../dialect.js';
import type { RepositoryContext } from './context.js';

type JobRow = Selectable<Database['jobs']>;

const toLease = (row: JobRow): JobLease => ({
  jobId: row.id,
  documentId: row.document_id,
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
    async claim({ owner, now, leaseMs, maxBytes }) {
      // One statement: the oldest claimable job is picked and leased together. PostgreSQL locks
      // the picked row and skips rows other claims have locked (each claim gets another job, none
      // waits; a row leased meanwhile is re-checked and passed over); SQLite runs the statement
      // under its database-wide write lock (see `StorageDialect.skipLocked`).
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
            .select('j.id')
            .where((w) => w.or([w('j.owner', 'is', null), w('j.lease_expires_at', '<=', time(now))]))
            .orderBy('j.created_at')
            .orderBy('j.id')
            .limit(1)
            .$if(dialect.skipLocked, (q) => q.forUpdate().skipLocked()),
        )
        // The oldest job over the budget is not passed by younger ones: it waits for the
        // claimer's running jobs to end (and then runs alone).
        .$if(maxBytes !== undefined, (q) => q.where('size', '<=', maxBytes as number))
        .returningAll()
        .executeTakeFirst();
      return row && toLease(row);
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
      const result = await db
        .deleteFrom('jobs')
        .where('id', '=', lease.jobId)
        .where('owner', '=', lease.owner)
        .where('generation', '=', lease.generation)
        .executeTakeFirst();
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
