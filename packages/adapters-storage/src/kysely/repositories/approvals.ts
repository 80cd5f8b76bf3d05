import type { ApprovalRecord, StorageAdapter } from '@agent-platform/core';
import { atomically, lockUser, type RepositoryContext } from './context.js';

const jsonOrNull = (value: Record<string, unknown> | null): string | null => (value === null ? null : JSON.stringify(value));

/**
 * Pending questions of runs (see `ApprovalRepository`). A decision is one UPDATE guarded by
 * `state = 'pending'`, made under the user's lock: concurrent deciders of one group (on any
 * instance) take turns, so exactly one of them sees the group with nothing left pending.
 */
export function approvalRepository({ db, dialect, records }: RepositoryContext): Pick<StorageAdapter, 'approvals'> {
  const { time } = dialect;
  const { toApproval } = records;
  return {
    approvals: {
      async insert(rows) {
        if (rows.length === 0) return;
        await db
          .insertInto('approvals')
          .values(
            rows.map((r: ApprovalRecord) => ({
              id: r.id,
              user_id: r.userId,
              project_id: r.projectId,
              chat_id: r.chatId,
              kind: r.kind,
              group_id: r.groupId,
              call_id: r.callId,
              tool: r.tool,
              arguments: r.arguments,
              message: r.message,
              schema: jsonOrNull(r.schema),
              resume: jsonOrNull(r.resume),
              state: r.state,
              reason: r.reason,
              content: jsonOrNull(r.content),
              created_at: time(r.createdAt),
              expires_at: time(r.expiresAt),
              decided_at: r.decidedAt === null ? null : time(r.decidedAt),
            })),
          )
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('approvals').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toApproval(row);
      },
      async list(query) {
        const filter = db
          .selectFrom('approvals')
          .where('user_id', '=', query.userId)
          .$if(query.chatId !== undefined, (q) => q.where('chat_id', '=', query.chatId as string))
          .$if(query.state !== undefined, (q) => q.where('state', '=', query.state as string));
        const rows = await filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toApproval), total: Number(n), start: query.offset };
      },
      async group(userId, groupId) {
        const rows = await db.selectFrom('approvals').selectAll().where('user_id', '=', userId).where('group_id', '=', groupId).orderBy('created_at').orderBy('id').execute();
        return rows.map(toApproval);
      },
      decide(userId, id, decision) {
        return atomically(db, async (tx) => {
          await lockUser(tx, dialect, userId);
          const row = await tx
            .updateTable('approvals')
            .set({ state: decision.state, reason: decision.reason, content: jsonOrNull(decision.content), decided_at: time(decision.decidedAt) })
            .where('id', '=', id)
            .where('user_id', '=', userId)
            .where('state', '=', 'pending')
            .returningAll()
            .executeTakeFirst();
          if (!row) {
            const found = await tx.selectFrom('approvals').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
            return found ? { outcome: 'conflict' as const, record: toApproval(found) } : { outcome: 'not_found' as const };
          }
          const { n } = await tx
            .selectFrom('approvals')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('user_id', '=', userId)
            .where('group_id', '=', row.group_id)
            .where('state', '=', 'pending')
            .executeTakeFirstOrThrow();
          return { outcome: 'decided' as const, record: toApproval(row), remaining: Number(n) };
        });
      },
    },
  };
}
