import type { Kysely } from 'kysely';

/**
 * The audit log (SQLite migration 0032, PostgreSQL 0023): `audit_events`, one row per change
 * (`AuditRepository`). No foreign keys: an event outlives its user, workspace and resource.
 * `fields` is a JSON array of field names. Indexes serve the list's filters newest first
 * (a workspace's, a user's, a resource's events) and the retention's delete by age.
 */
export async function addAuditEvents(db: Kysely<any>, time: 'integer' | 'timestamptz'): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', time, (c) => c.notNull())
    .addColumn('workspace_id', 'text')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('resource', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text')
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('address', 'text')
    .addColumn('user_agent', 'text')
    .execute();
  await db.schema.createIndex('audit_events_workspace').on('audit_events').columns(['workspace_id', 'at desc', 'id desc']).execute();
  await db.schema.createIndex('audit_events_user').on('audit_events').columns(['user_id', 'at desc', 'id desc']).execute();
  await db.schema.createIndex('audit_events_resource').on('audit_events').columns(['resource', 'resource_id', 'at desc', 'id desc']).execute();
  await db.schema.createIndex('audit_events_at').on('audit_events').columns(['at desc', 'id desc']).execute();
}
