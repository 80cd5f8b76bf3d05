import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import { ListAuditQuery, type ListAuditResponse } from '../schemas/audit.js';
import { parseInput } from '../validation.js';
import type { AuditService } from './service.js';

/**
 * The audit log: `AgentPlatform`'s public method of the area (installed on its prototype,
 * src/methods.ts). It parses what a library caller passes and hands the parsed value to
 * `AuditService`; the server calls the service with the values its route parsed.
 */
export const auditMethods = publicMethods<{ audit: AuditService }>()({
  /** `GET /api/v1/audit`: a page of the audit events the caller may read, newest first (`AuditService.list`). */
  async listAuditEvents(caller: Caller, query: ListAuditQuery = {}): Promise<ListAuditResponse> {
    return this.audit.list(caller, parseInput(ListAuditQuery, query ?? {}));
  },
});
