import { ListAuditQuery, ListAuditResponse } from '@agent-platform/core/schemas';
import { type ApiRoute, route } from '../route.js';

/** The audit log: its route, in the order of the table (routes/index.ts). */
export const auditRoutes: readonly ApiRoute[] = [
  route({
    method: 'GET',
    path: '/api/v1/audit',
    summary:
      "The audit log: who changed what, when and from where, newest first (filters: workspaceId, userId, resource, resourceId, action, outcome, from, to; a page at a time with cursor). Today a user reads their personal workspace's events",
    tag: 'Audit',
    query: ListAuditQuery,
    errors: ['not_found'],
    response: ListAuditResponse,
    handler: (p, i) => p.audit.list(i.caller, i.query),
  }),
];
