import { PlatformError, type ResponseRecord, type ResponseRecordStatus, type StorageAdapter } from '@agent-platform/core';
import type { Selectable } from 'kysely';
import type { Database } from '../database.js';
import type { RepositoryContext } from './context.js';

type Row = Selectable<Database['responses']>;

const toRecord = (r: Row): ResponseRecord => ({
  id: r.id,
  userId: r.user_id,
  projectId: r.project_id,
  chatId: r.chat_id,
  previousResponseId: r.previous_response_id,
  status: r.status as ResponseRecordStatus,
  createdAt: new Date(Number(r.created_at)),
  updatedAt: new Date(Number(r.updated_at)),
  resource: JSON.parse(r.resource) as Record<string, unknown>,
  input: JSON.parse(r.input) as Record<string, unknown>[],
});

/** Stored responses (see `ResponseRepository`): the status guard of `update` is in its WHERE, so racing writers cannot overwrite a final state. */
export function responseRepository({ db }: RepositoryContext): Pick<StorageAdapter, 'responses'> {
  return {
    responses: {
      async insert(record) {
        const result = await db
          .insertInto('responses')
          .values({
            id: record.id,
            user_id: record.userId,
            project_id: record.projectId,
            chat_id: record.chatId,
            previous_response_id: record.previousResponseId,
            status: record.status,
            created_at: record.createdAt.getTime(),
            updated_at: record.updatedAt.getTime(),
            resource: JSON.stringify(record.resource),
            input: JSON.stringify(record.input),
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .executeTakeFirst();
        if ((result.numInsertedOrUpdatedRows ?? 0n) === 0n) throw new PlatformError('conflict', `Response ${record.id} already exists`);
      },
      async get(userId, id) {
        const row = await db.selectFrom('responses').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toRecord(row);
      },
      async update(userId, id, patch, from) {
        if (from.length === 0) return false;
        const result = await db
          .updateTable('responses')
          .set({ status: patch.status, resource: JSON.stringify(patch.resource), updated_at: patch.updatedAt.getTime() })
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .where('status', 'in', [...from])
          .executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('responses').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
    },
  };
}
