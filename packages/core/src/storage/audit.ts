import type { ListPosition } from './page.js';

/**
 * What became of the change an audit event records. `pending`: written before the change was
 * made, and nothing settled it since: the request is still running, or its process stopped
 * before it answered (the change may or may not have happened). `succeeded` and `failed` are
 * final.
 */
export type AuditOutcome = 'pending' | 'succeeded' | 'failed';

/** One entry of the audit log: who changed what, when and from where. Never values, never secrets. */
export interface AuditEventRecord {
  readonly id: string;
  readonly at: Date;
  /** The workspace the change was made in; null for an operator's action on the server itself (the local model runtime). */
  readonly workspaceId: string | null;
  readonly userId: string;
  /** The API key the request came with; null when it came with none (the `agent-platform keys` commands). */
  readonly keyId: string | null;
  /** `create`, `update`, `delete`, or a named action (`approve`, `key.create`, `key.revoke`, `cancel`, ...). */
  readonly action: string;
  /** The kind of resource: `project`, `credential`, `key`, ... */
  readonly resource: string;
  /** Its id, when the change names one (a create's comes from its answer, set when it settles). */
  readonly resourceId: string | null;
  /** Names of the fields the request set, never their values. */
  readonly fields: readonly string[];
  readonly outcome: AuditOutcome;
  /** The address the request came from (the peer of its connection); null without a request. */
  readonly address: string | null;
  /** The request's `User-Agent`, cut to `MAX_USER_AGENT` characters; null without one. */
  readonly userAgent: string | null;
}

/** A filtered page of events, newest first: (at, id) descending. Every member but `limit` narrows it. */
export interface AuditQuery {
  /** One workspace's events; `null`: the operator's actions on the server; absent: every workspace's (operators). */
  readonly workspaceId?: string | null;
  readonly userId?: string;
  readonly resource?: string;
  readonly resourceId?: string;
  readonly action?: string;
  readonly outcome?: AuditOutcome;
  /** Events at or after this instant. */
  readonly from?: Date;
  /** Events before this instant. */
  readonly to?: Date;
  /** Only events strictly after this position in newest-first order (keyset paging; `createdAt` is the event's `at`). */
  readonly after?: ListPosition;
  readonly limit: number;
}

/**
 * The audit log, append-only: an event is appended once and never changed, but for its outcome,
 * which goes once from `pending` to `succeeded` or `failed` (with a create's resource id, only
 * known from its answer). Events leave only by age (`purge`), never one by one.
 */
export interface AuditRepository {
  append(event: AuditEventRecord): Promise<void>;
  /**
   * Settles a pending event: sets its outcome and, when it has none yet, its resource id. An
   * event already settled (or unknown) is left as it is, answering false.
   */
  settle(id: string, outcome: Exclude<AuditOutcome, 'pending'>, resourceId?: string): Promise<boolean>;
  /** Events matching the query, newest first, at most `limit`. */
  list(query: AuditQuery): Promise<AuditEventRecord[]>;
  /**
   * Deletes the events older than `before`, answering how many went. Idempotent: every instance
   * may run it at any time (the deletes of two instances at once remove each event once).
   */
  purge(before: Date): Promise<number>;
}
