import type { Kysely } from 'kysely';

/**
 * Providers beyond an API key (SQLite migration 0023, PostgreSQL 0014): a credential's shown
 * provider fields (`credentials.fields`, JSON; its `secret` then seals every field as JSON) and
 * a project's provider options (`projects.provider_options`, JSON). Existing rows keep null:
 * a credential whose `secret` is its API key alone, a project without options.
 */
export async function addProviderSettings(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credentials').addColumn('fields', 'text').execute();
  await db.schema.alterTable('projects').addColumn('provider_options', 'text').execute();
}
