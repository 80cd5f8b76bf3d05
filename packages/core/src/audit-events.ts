import { type Caller, workspaceOf } from './context.js';
import type { AuditEventRecord, AuditOutcome } from './storage/types.js';

/**
 * Audit events as every writer makes them: the server's routes (through `AuditService.begin`)
 * and the operator's key commands (`AuthService`, in the key's own transaction).
 */

/** The most characters of a `User-Agent` an event keeps. */
export const MAX_USER_AGENT = 256;
const MAX_ADDRESS = 100;
const MAX_FIELDS = 50;
const MAX_NAME = 100;
export const MAX_ID = 200;
/** A change about to be made, as its audit event tells it. */
export interface AuditEntry {
  readonly action: string;
  readonly resource: string;
  readonly resourceId?: string | undefined;
  /** Names of the fields the change sets (never values). */
  readonly fields?: readonly string[] | undefined;
  /** The workspace changed; default the caller's (`workspaceOf`); null for the server itself (the operator's). */
  readonly workspaceId?: string | null | undefined;
  readonly address?: string | undefined;
  readonly userAgent?: string | undefined;
}

const cut = (value: string | undefined, max: number): string | null => (value === undefined || value === '' ? null : value.slice(0, max));

/** The event `entry` of `caller` makes at `at`, bounded in size (a user agent is cut, fields are names within limits). */
export function auditEvent(id: string, at: Date, caller: Caller, entry: AuditEntry, outcome: AuditOutcome): AuditEventRecord {
  return {
    id,
    at,
    workspaceId: entry.workspaceId === undefined ? workspaceOf(caller) : entry.workspaceId,
    userId: caller.userId,
    keyId: caller.keyId ?? null,
    action: entry.action,
    resource: entry.resource,
    resourceId: cut(entry.resourceId, MAX_ID),
    fields: [...new Set(entry.fields ?? [])].filter((f) => f.length <= MAX_NAME).slice(0, MAX_FIELDS),
    outcome,
    address: cut(entry.address, MAX_ADDRESS),
    userAgent: cut(entry.userAgent, MAX_USER_AGENT),
  };
}
