import { type Caller, workspaceOf } from '../context.js';
import { PlatformError } from '../errors.js';

/** Which events of the audit log a reader may see: one workspace's. */
export interface AuditReadScope {
  readonly workspaceId: string;
}

/**
 * Who may read which part of the audit log: the one place that decides it (`AuditService.list`
 * asks it, nothing else does). Today a user reads the events of their personal workspace
 * (whose id is their user id) and no other: another workspace is answered as a missing one,
 * so its id does not leak. Roles replace this function: a workspace's owners and admins read
 * its events, operators every workspace's and the server's own.
 */
export function auditReadScope(caller: Caller, requested: string | undefined): AuditReadScope {
  const own = workspaceOf(caller);
  if (requested !== undefined && requested !== own) throw PlatformError.notFound(`Workspace ${requested} not found`);
  return { workspaceId: own };
}
