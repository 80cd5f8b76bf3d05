import type { Clock } from '../clock.js';
import type { JobLease, LeaseState, StorageAdapter } from '../storage/types.js';

/** How long a claimed job stays leased without a heartbeat. */
export const DEFAULT_LEASE_MS = 30_000;
/** How often a running job's lease is extended (a third of the lease: two heartbeats may fail). */
export const DEFAULT_HEARTBEAT_MS = 10_000;
/** How often an instance with free slots looks for jobs it was not woken for (other instances', expired leases). */
export const DEFAULT_POLL_MS = 1_000;
/** Jobs an instance runs beyond its concurrency, each of a tenant with no job running anywhere. */
export const DEFAULT_SPARE_JOBS = 1;
/** How long after it was queued a job that does not fit the room left in the byte budget may be overtaken by jobs that do. */
export const DEFAULT_OVERTAKE_MS = 10_000;

/** A job this instance holds, as its run sees it. */
export interface RunningJob {
  readonly lease: JobLease;
  /** Aborted when the run must stop: shutdown, cancelled here, or the lease lost or cancelled (`reason` is the `LeaseState`). */
  readonly signal: AbortSignal;
  /**
   * Runs `fn` in a transaction fenced by the lease: the job's row is written first (its lease
   * extended), so `fn`'s writes land only while this run holds the job. False (and the run
   * aborted) when it no longer does; then nothing of `fn` ran.
   */
  fenced(fn: (tx: StorageAdapter) => Promise<void>): Promise<boolean>;
  /** Extends the lease now; aborts the run unless it is still `held`. */
  heartbeat(): Promise<LeaseState>;
}

export interface JobQueueOptions {
  readonly storage: StorageAdapter;
  readonly clock: Clock;
  /** This instance's id, the owner of its leases. */
  readonly owner: string;
  /** Most jobs running at once on this instance. */
  readonly concurrency: number;
  /**
   * Jobs this instance takes beyond `concurrency` and the byte budget, each of a tenant with no
   * job leased anywhere and no larger than `concurrentBytes`: a tenant arriving while others'
   * jobs hold every slot, use the budget or wait for room starts at once. Sources being indexed
   * stay under `concurrentBytes` (or one larger job, alone) plus `spare × concurrentBytes`.
   */
  readonly spare: number;
  /** Most bytes of sources running at once on this instance (a larger job runs alone). */
  readonly concurrentBytes: number;
  /**
   * How long (ms) after it was queued a job that does not fit the room left in the byte budget
   * may be passed over by jobs that do; then this instance takes it and claims nothing else until
   * its running jobs leave room for it (or none is left: it runs alone). So it is never starved.
   */
  readonly overtakeMs: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  /** Runs a claimed job to its end; never rejects. */
  run(job: RunningJob): Promise<void>;
}

/** A job this instance holds: running, or waiting for room in the byte budget. */
interface Held {
  readonly lease: JobLease;
  readonly controller: AbortController;
  /** Extends the lease now; aborts the controller unless it is still `held`. */
  readonly heartbeat: () => Promise<LeaseState>;
  readonly timer: ReturnType<typeof setInterval>;
  /** Taken in a spare slot: beyond `concurrency` and the byte budget, for a tenant with nothing leased. */
  readonly spare: boolean;
  running: boolean;
}

/**
 * Claims jobs from storage and runs them, up to the concurrency and byte limits: at once when
 * woken (this instance queued a job, or a run ended), and every `pollMs` once started (jobs of
 * other instances, leases that ran out). Storage picks each job fairly between tenants (see
 * `JobRepository.claim`); a job that does not fit the room left in the byte budget is passed over
 * for one that does, until it has waited `overtakeMs`; a tenant with nothing leased gets a spare
 * slot when the others' jobs leave no room (`spare`). While a job is held its lease is extended
 * every `heartbeatMs`; a heartbeat that finds the lease lost or the job cancelled aborts the run.
 */
export class JobQueue {
  readonly #o: JobQueueOptions;
  /** Held jobs by job id and generation (an instance may claim its own job again once its lease ran out). */
  readonly #held = new Map<string, Held>();
  /** The held job waiting for room in the byte budget (claimed overdue); no other is claimed meanwhile. */
  #waiting: Held | undefined;
  #activeBytes = 0;
  /** Held jobs taken in a spare slot (`JobQueueOptions.spare`). */
  #spares = 0;
  #claiming = false;
  #again = false;
  #closed = false;
  #poll: ReturnType<typeof setInterval> | undefined;

  constructor(options: JobQueueOptions) {
    this.#o = options;
  }

  /** Polls for claimable jobs from now on (after a start). */
  start(): void {
    if (this.#poll || this.#closed) return;
    this.#poll = setInterval(() => this.wake(), this.#o.pollMs);
    // Polling never keeps the process alive.
    this.#poll.unref?.();
    this.wake();
  }

  /** Claims jobs now, while there is room. */
  wake(): void {
    if (this.#closed) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = true;
    void this.#fill()
      .catch(() => {
        // Storage unreachable: the next wake (a poll) tries again.
      })
      .finally(() => {
        this.#claiming = false;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** Aborts this instance's run of the document, if any (its job is being cancelled), but not a run of job `except` (its new job). */
  abort(documentId: string, except?: string): void {
    for (const r of this.#held.values()) if (r.lease.documentId === documentId && r.lease.jobId !== except) r.controller.abort('cancelled');
  }

  /** Stops claiming, aborts the running jobs and releases their leases, so any instance can take them at once. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    const held = [...this.#held.values()];
    for (const r of held) r.controller.abort('closed');
    await Promise.all(held.map((r) => this.#o.storage.jobs.release(r.lease).catch(() => false)));
  }

  async #fill(): Promise<void> {
    const { storage, clock, owner, concurrency, spare, concurrentBytes, leaseMs, overtakeMs } = this.#o;
    while (!this.#closed) {
      const waiting = this.#waiting;
      if (waiting && (this.#activeBytes + waiting.lease.size <= concurrentBytes || this.#held.size === 1)) {
        // The overdue job over the budget has room now (or runs alone): it goes first.
        this.#waiting = undefined;
        this.#begin(waiting);
        continue;
      }
      const held = this.#held.size;
      const now = clock.now();
      // With jobs running, a job over the room left is passed over until it is overdue; with
      // none, any job runs (one larger than the whole budget alone).
      const room = held > 0 ? Math.max(0, concurrentBytes - this.#activeBytes) : undefined;
      let lease: JobLease | undefined;
      // A regular slot, unless a job waits for room (nothing is claimed before it).
      if (!waiting && held - this.#spares < concurrency) {
        lease = await storage.jobs.claim({
          owner,
          now,
          leaseMs,
          ...(room !== undefined ? { maxBytes: room, overdueAt: new Date(now.getTime() - overtakeMs) } : {}),
        });
      }
      // Nothing for a regular slot while jobs run (the slots are held, the budget is used, or a
      // job waits for room): a spare slot takes a job of a tenant with no job leased anywhere,
      // up to the size of the whole budget, so another tenant's jobs never hold it back.
      const asSpare = !lease && held > 0 && this.#spares < spare;
      if (asSpare) lease = await storage.jobs.claim({ owner, now, leaseMs, maxBytes: concurrentBytes, idleTenantsOnly: true });
      if (!lease) return;
      if (this.#closed) {
        await storage.jobs.release(lease);
        return;
      }
      const entry = this.#hold(lease, asSpare);
      if (!asSpare && room !== undefined && lease.size > room) this.#waiting = entry;
      else this.#begin(entry);
    }
  }

  /** Keeps a claimed job's lease alive (heartbeats) until it is dropped. */
  #hold(lease: JobLease, spare: boolean): Held {
    const { storage, clock, leaseMs, heartbeatMs } = this.#o;
    const controller = new AbortController();
    const heartbeat = async (): Promise<LeaseState> => {
      const state = await storage.jobs.heartbeat(lease, { now: clock.now(), leaseMs });
      if (state !== 'held') controller.abort(state);
      return state;
    };
    const timer = setInterval(() => {
      // A heartbeat that fails (storage unreachable) is retried at the next tick; the lease
      // runs out only after two more missed ones.
      heartbeat().catch(() => {});
    }, heartbeatMs);
    timer.unref?.();
    const entry: Held = { lease, controller, heartbeat, timer, spare, running: false };
    if (spare) this.#spares++;
    this.#held.set(`${lease.jobId}:${lease.generation}`, entry);
    // A job waiting for room that is cancelled, lost or closed meanwhile goes without running.
    controller.signal.addEventListener('abort', () => {
      if (this.#waiting !== entry) return;
      this.#waiting = undefined;
      this.#drop(entry);
    });
    return entry;
  }

  #drop(entry: Held): void {
    clearInterval(entry.timer);
    this.#held.delete(`${entry.lease.jobId}:${entry.lease.generation}`);
    if (entry.spare) this.#spares--;
    if (entry.running) this.#activeBytes -= entry.lease.size;
    this.wake();
  }

  #begin(entry: Held): void {
    const { storage, clock, leaseMs } = this.#o;
    const { lease, controller } = entry;
    entry.running = true;
    this.#activeBytes += lease.size;
    const job: RunningJob = {
      lease,
      signal: controller.signal,
      heartbeat: entry.heartbeat,
      fenced: (fn) =>
        storage.transaction(async (tx) => {
          const state = await tx.jobs.heartbeat(lease, { now: clock.now(), leaseMs });
          if (state !== 'held') {
            controller.abort(state);
            return false;
          }
          await fn(tx);
          return true;
        }),
    };
    void this.#o.run(job).finally(() => this.#drop(entry));
  }
}
