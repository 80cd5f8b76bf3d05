import type { AuditEventRecord, AuditOutcome, StorageAdapter } from '@agent-platform/core';
import { type Selectable, type SqlBool, sql } from 'kysely';
import type { Database } from '../database.js';
import { readTime } from '../dialect.js';
import type { RepositoryContext } from './context.js';

/** Rows one statement of the retention's purge deletes at most: a long purge never holds the write lock for long. */
const PURGE_BATCH = 5000;

const toEvent = (r: Selectable<Database['audit_events']>): AuditEventRecord => ({
  id: r.id,
  at: readTime(r.at),
  workspaceId: r.workspace_id,
  userId: r.user_id,
  keyId: r.key_id,
  action: r.action,
  resource: r.resource,
  resourceId: r.resource_id,
  fields: JSON.parse(r.fields) as string[],
  outcome: r.outcome as AuditOutcome,
  address: r.address,
  userAgent: r.user_agent,
});

/** The audit log (see `AuditRepository`): inserts, one guarded update of a pending outcome, filtered keyset pages, deletes by age. */
export function auditRepository({ db, dialect }: RepositoryContext): Pick<StorageAdapter, 'audit'> {
  const { time } = dialect;
  return {
    audit: {
      async append(e) {
        await db
          .insertInto('audit_events')
          .values({
            id: e.id,
            at: time(e.at),
            workspace_id: e.workspaceId,
            user_id: e.userId,
            key_id: e.keyId,
            action: e.action,
            resource: e.resource,
            resource_id: e.resourceId,
            fields: JSON.stringify(e.fields),
            outcome: e.outcome,
            address: e.address,
            user_agent: e.userAgent,
          })
          .execute();
      },
      async settle(id, outcome, resourceId) {
        const set = await db
          .updateTable('audit_events')
          .set((eb) => ({ outcome, resource_id: eb.fn.coalesce('resource_id', eb.val(resourceId ?? null)) }))
          .where('id', '=', id)
          .where('outcome', '=', 'pending')
          .executeTakeFirst();
        return Number(set.numUpdatedRows) > 0;
      },
      async list(q) {
        const after = q.after;
        const rows = await db
          .selectFrom('audit_events')
          .selectAll()
          .$if(q.workspaceId !== undefined, (s) => (q.workspaceId === null ? s.where('workspace_id', 'is', null) : s.where('workspace_id', '=', q.workspaceId as string)))
          .$if(q.userId !== undefined, (s) => s.where('user_id', '=', q.userId as string))
          .$if(q.resource !== undefined, (s) => s.where('resource', '=', q.resource as string))
          .$if(q.resourceId !== undefined, (s) => s.where('resource_id', '=', q.resourceId as string))
          .$if(q.action !== undefined, (s) => s.where('action', '=', q.action as string))
          .$if(q.outcome !== undefined, (s) => s.where('outcome', '=', q.outcome as string))
          .$if(q.from !== undefined, (s) => s.where('at', '>=', time(q.from as Date)))
          .$if(q.to !== undefined, (s) => s.where('at', '<', time(q.to as Date)))
          .$if(after !== undefined, (s) => s.where(sql<SqlBool>`(at, id) < (${time((after as { createdAt: Date }).createdAt)}, ${(after as { id: string }).id})`))
          .orderBy('at', 'desc')
          .orderBy('id', 'desc')
          .limit(q.limit)
          .execute();
        return rows.map(toEvent);
      },
      async purge(before) {
        let total = 0;
        for (;;) {
          const oldest = db.selectFrom('audit_events').select('id').where('at', '<', time(before)).limit(PURGE_BATCH);
          const gone = await db.deleteFrom('audit_events').where('id', 'in', oldest).executeTakeFirst();
          const n = Number(gone.numDeletedRows);
          total += n;
          if (n < PURGE_BATCH) return total;
        }
      },
    },
  };
}
