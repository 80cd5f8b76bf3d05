import type { z } from 'zod';
import { type AuditEntry, auditEvent, MAX_ID } from '../audit-events.js';
import type { Caller, PlatformContext } from '../context.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { AuditEventView, ListAuditQuery, ListAuditResponse } from '../schemas/audit.js';
import type { AuditEventRecord, AuditOutcome } from '../storage/types.js';
import { auditReadScope } from './policy.js';

/** Days an audit event is kept by default (`AuditOptions.retentionDays`). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;
/** How often each instance deletes expired events by default: hourly. */
export const DEFAULT_AUDIT_PURGE_INTERVAL_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** How long the audit log keeps its events. */
export interface AuditOptions {
  /** Days an event is kept; 0 keeps every event forever. Default 365. */
  readonly retentionDays?: number;
  /** How often each instance deletes the events past retention, in ms (once at `start` too). Default 1 hour. */
  readonly purgeIntervalMs?: number;
}

const view = (e: AuditEventRecord): AuditEventView => ({ ...e, at: e.at.toISOString(), fields: [...e.fields] });

/**
 * The audit log: every change made through the API's routes is written here by the server
 * before it is made (`begin`, outcome `pending`) and settled once it answered (`settle`), so a
 * process killed in between leaves its event behind; reading it is `list`; events past the
 * retention are deleted by every instance, periodically (`start`).
 */
export class AuditService {
  readonly #ctx: PlatformContext;
  readonly #retentionDays: number;
  readonly #purgeIntervalMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(ctx: PlatformContext, options: AuditOptions = {}) {
    this.#ctx = ctx;
    this.#retentionDays = options.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
    this.#purgeIntervalMs = options.purgeIntervalMs ?? DEFAULT_AUDIT_PURGE_INTERVAL_MS;
  }

  /** Appends the event of a change about to be made, `pending` until `settle`; answers its id. */
  async begin(caller: Caller, entry: AuditEntry): Promise<string> {
    const { ids, clock, storage } = this.#ctx;
    const event = auditEvent(ids.next('auditEvent'), clock.now(), caller, entry, 'pending');
    await storage.audit.append(event);
    return event.id;
  }

  /** Settles the event `begin` answered: the change succeeded (with a create's new id) or failed. */
  async settle(id: string, outcome: Exclude<AuditOutcome, 'pending'>, resourceId?: string): Promise<void> {
    await this.#ctx.storage.audit.settle(id, outcome, resourceId === undefined ? undefined : resourceId.slice(0, MAX_ID));
  }

  /** `GET /api/v1/audit`: a page of the events the caller may read (`auditReadScope`), newest first. */
  async list(caller: Caller, q: z.output<typeof ListAuditQuery>): Promise<ListAuditResponse> {
    const scope = auditReadScope(caller, q.workspaceId);
    const rows = await this.#ctx.storage.audit.list({
      workspaceId: scope.workspaceId,
      ...(q.userId !== undefined ? { userId: q.userId } : {}),
      ...(q.resource !== undefined ? { resource: q.resource } : {}),
      ...(q.resourceId !== undefined ? { resourceId: q.resourceId } : {}),
      ...(q.action !== undefined ? { action: q.action } : {}),
      ...(q.outcome !== undefined ? { outcome: q.outcome } : {}),
      ...(q.from !== undefined ? { from: new Date(q.from) } : {}),
      ...(q.to !== undefined ? { to: new Date(q.to) } : {}),
      ...(q.cursor !== undefined ? { after: decodeCursor(q.cursor) } : {}),
      limit: q.limit + 1,
    });
    const events = rows.slice(0, q.limit);
    const last = events.at(-1);
    const hasMore = rows.length > q.limit;
    return { success: true, events: events.map(view), hasMore, nextCursor: hasMore && last ? encodeCursor({ createdAt: last.at, id: last.id }) : null };
  }

  /** Deletes the events older than the retention (none when it is 0), answering how many went. */
  async purge(): Promise<number> {
    if (this.#retentionDays === 0) return 0;
    return this.#ctx.storage.audit.purge(new Date(this.#ctx.clock.now().getTime() - this.#retentionDays * DAY_MS));
  }

  /**
   * Purges now and then every `purgeIntervalMs` (nothing with retention 0). Every instance does:
   * a purge is one idempotent delete, so instances purging at once delete each event once. A
   * failed purge (the database unreachable for a moment) is retried at the next interval.
   */
  start(): void {
    if (this.#retentionDays === 0 || this.#timer) return;
    const run = () => void this.purge().catch(() => {});
    run();
    this.#timer = setInterval(run, this.#purgeIntervalMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
