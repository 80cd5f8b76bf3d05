import type { Kysely } from 'kysely';

/**
 * The chat stream tables (SQLite migration 0013, PostgreSQL 0004): `streams` (times in ms since
 * the epoch, in `timeType`: SQLite's integer, PostgreSQL's bigint) and `stream_events`, one row
 * per event with its per-stream sequence number, going with its stream.
 */
export async function createStreamTables(db: Kysely<any>, timeType: 'integer' | 'bigint'): Promise<void> {
  await db.schema
    .createTable('streams')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('chat_id', 'text', (c) => c.notNull())
    .addColumn('created_at', timeType, (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('writer', 'text')
    .addColumn('expires_at', timeType)
    .addColumn('last_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('streams_user_state').on('streams').columns(['user_id', 'state']).execute();
  await db.schema.createIndex('streams_expires').on('streams').column('expires_at').execute();
  await db.schema
    .createTable('stream_events')
    .addColumn('stream_id', 'text', (c) => c.notNull().references('streams.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('stream_events_pk', ['stream_id', 'seq'])
    .execute();
}

/**
 * The writer's lease (SQLite migration 0015, PostgreSQL 0006): while a stream is `writing`,
 * `lease_until` is when its writer's lease runs out (ms since the epoch); the writer extends it
 * as it appends and by a heartbeat. Past it, whoever finds the stream ends it (the writer's
 * instance died). Null on streams not being written.
 */
export async function addStreamLeases(db: Kysely<any>, timeType: 'integer' | 'bigint'): Promise<void> {
  await db.schema.alterTable('streams').addColumn('lease_until', timeType).execute();
  await db.schema.createIndex('streams_state_lease').on('streams').columns(['state', 'lease_until']).execute();
}
