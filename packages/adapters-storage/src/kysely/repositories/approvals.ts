import type { ApprovalRecord, StorageAdapter } from '@agent-platform/core';
import { readTime } from '../dialect.js';
import { atomically, lockUser, type RepositoryContext } from './context.js';

const jsonOrNull = (value: Record<string, unknown> | null): string | null => (value === null ? null : JSON.stringify(value));

/**
 * Pending questions of runs (see `ApprovalRepository`). A decision is one UPDATE guarded by
 * `state = 'pending'`, made under the user's lock: concurrent deciders of one group (on any
 * instance) take turns, so exactly one of them sees the group with nothing left pending. The
 * continuation of a decided group is claimed the same way: read and set under the user's lock,
 * the UPDATE guarded by the claim it read.
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
      claim(userId, groupId, claim) {
        return atomically(db, async (tx) => {
          await lockUser(tx, dialect, userId);
          const rows = await tx.selectFrom('approvals').selectAll().where('user_id', '=', userId).where('group_id', '=', groupId).orderBy('created_at').orderBy('id').execute();
          const records = rows.map(toApproval);
          if (rows.some((r) => r.state === 'pending')) return { outcome: 'pending' as const, records };
          const held = rows.find((r) => r.resumed_at !== null && r.resumed_by !== null);
          if (held && readTime(held.resumed_at as number | Date).getTime() >= claim.staleBefore.getTime()) {
            return { outcome: 'taken' as const, by: held.resumed_by as string, at: readTime(held.resumed_at as number | Date), records };
          }
          const set = await tx
            .updateTable('approvals')
            .set({ resumed_by: claim.by, resumed_at: time(claim.at) })
            .where('user_id', '=', userId)
            .where('group_id', '=', groupId)
            .where((eb) => (held ? eb('resumed_by', '=', held.resumed_by) : eb('resumed_by', 'is', null)))
            .executeTakeFirst();
          if (Number(set.numUpdatedRows) !== rows.length) throw new Error(`The claim of approval group ${groupId} changed while it was taken`);
          return { outcome: 'claimed' as const, records };
        });
      },
      async renew(userId, groupId, by, at) {
        const set = await db
          .updateTable('approvals')
          .set({ resumed_at: time(at) })
          .where('user_id', '=', userId)
          .where('group_id', '=', groupId)
          .where('resumed_by', '=', by)
          .executeTakeFirst();
        return Number(set.numUpdatedRows) > 0;
      },
      async release(userId, groupId, by) {
        await db.updateTable('approvals').set({ resumed_by: null, resumed_at: null }).where('user_id', '=', userId).where('group_id', '=', groupId).where('resumed_by', '=', by).execute();
      },
    },
  };
}
