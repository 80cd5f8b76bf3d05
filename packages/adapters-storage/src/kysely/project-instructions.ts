import { type Kysely, sql } from 'kysely';

/**
 * A project's `instructions`, its system prompt (SQLite migration 0018, PostgreSQL 0009).
 * Before it, the description was sent to the model as the system prompt: every existing project
 * gets its description as its instructions, so no agent answers differently after the upgrade;
 * from then on the description is never sent to the model. New projects start without any.
 */
export async function addProjectInstructions(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('projects')
    .addColumn('instructions', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`update projects set instructions = description`.execute(db);
}
