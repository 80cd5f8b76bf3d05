import { type Kysely, sql } from 'kysely';

/**
 * The migration that gives each job its tenant (`JobRecord.tenant`; SQLite 0019, PostgreSQL
 * 0010), the same on both: the column, filled for the jobs an older release left from their
 * document's user, and an index on it (the bound per tenant counts a tenant's jobs).
 */
export async function addJobTenants(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('jobs')
    .addColumn('tenant', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`update jobs set tenant = coalesce((select d.user_id from documents d where d.id = jobs.document_id), '')`.execute(db);
  await db.schema.createIndex('jobs_tenant').on('jobs').columns(['tenant', 'created_at', 'id']).execute();
}
