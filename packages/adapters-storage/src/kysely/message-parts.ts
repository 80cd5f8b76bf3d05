import type { Kysely } from 'kysely';

/**
 * The parts of a user message that held images (`ChatMessageRecord.parts`: its text and the
 * references of its images, as JSON), null for every other message and for those stored before.
 */
export async function addMessageParts(db: Kysely<any>, type: 'text' | 'json'): Promise<void> {
  await db.schema.alterTable('chat_messages').addColumn('parts', type).execute();
}
