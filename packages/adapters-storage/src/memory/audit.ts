import type { AuditEventRecord, AuditQuery, AuditRepository } from '@agent-platform/core';
import { clone, compareNewestFirst, insertUnique, type Tables } from './tables.js';

const position = (e: AuditEventRecord) => ({ createdAt: e.at, id: e.id });

/** Whether an event matches every member a query gives (the position of `after` included). */
function matches(e: AuditEventRecord, q: AuditQuery): boolean {
  if (q.workspaceId !== undefined && e.workspaceId !== q.workspaceId) return false;
  if (q.userId !== undefined && e.userId !== q.userId) return false;
  if (q.resource !== undefined && e.resource !== q.resource) return false;
  if (q.resourceId !== undefined && e.resourceId !== q.resourceId) return false;
  if (q.action !== undefined && e.action !== q.action) return false;
  if (q.outcome !== undefined && e.outcome !== q.outcome) return false;
  if (q.from !== undefined && e.at.getTime() < q.from.getTime()) return false;
  if (q.to !== undefined && e.at.getTime() >= q.to.getTime()) return false;
  return q.after === undefined || compareNewestFirst(q.after, position(e)) < 0;
}

/** The audit log in memory. */
export function memoryAudit(tables: () => Tables): AuditRepository {
  return {
    async append(event) {
      insertUnique(tables().audit, event.id, clone(event), 'Audit event');
    },
    async settle(id, outcome, resourceId) {
      const t = tables();
      const event = t.audit.get(id);
      if (event?.outcome !== 'pending') return false;
      t.audit.set(id, { ...event, outcome, resourceId: event.resourceId ?? resourceId ?? null });
      return true;
    },
    async list(query) {
      const rows = [...tables().audit.values()].filter((e) => matches(e, query));
      return rows
        .sort((a, b) => compareNewestFirst(position(a), position(b)))
        .slice(0, query.limit)
        .map(clone);
    },
    async purge(before) {
      const t = tables();
      let n = 0;
      for (const [id, event] of t.audit) if (event.at.getTime() < before.getTime() && t.audit.delete(id)) n++;
      return n;
    },
  };
}
