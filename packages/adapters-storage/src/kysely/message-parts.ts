import type { Kysely } from 'kysely';

/**
 * The parts of a user message that held images (`ChatMessageRecord.parts`: its text and the
 * references of its images, as JSON), null for every other message and for those stored before.
 */
export async function addMessageParts(db: Kysely<any>, type: 'text' | 'json'): Promise<void> {
  await db.schema.alterTable('chat_messages').addColumn('parts', type).execute();
}

/**
 * What a provider gave with an assistant message and needs back (`ChatMessageRecord.provider` and
 * `reasoning`: its name, and its reasoning blocks with their signatures as JSON), null for every
 * other message and for those stored before. Calls' metadata lives in `tool_calls` with them.
 */
export async function addMessageReasoning(db: Kysely<any>, type: 'text' | 'json'): Promise<void> {
  await db.schema.alterTable('chat_messages').addColumn('provider', 'text').execute();
  await db.schema.alterTable('chat_messages').addColumn('reasoning', type).execute();
}
