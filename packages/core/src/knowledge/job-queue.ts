import type { Clock } from '../clock.js';
import type { JobLease, LeaseState, StorageAdapter } from '../storage/types.js';

/** How long a claimed job stays leased without a heartbeat. */
export const DEFAULT_LEASE_MS = 30_000;
/** How often a running job's lease is extended (a third of the lease: two heartbeats may fail). */
export const DEFAULT_HEARTBEAT_MS = 10_000;
/** How often an instance with free slots looks for jobs it was not woken for (other instances', expired leases). */
export const DEFAULT_POLL_MS = 1_000;

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
  /** Most bytes of sources running at once on this instance (a larger job runs alone). */
  readonly concurrentBytes: number;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  /** Runs a claimed job to its end; never rejects. */
  run(job: RunningJob): Promise<void>;
}

/**
 * Claims jobs from storage and runs them, up to the concurrency and byte limits: at once when
 * woken (this instance queued a job, or a run ended), and every `pollMs` once started (jobs of
 * other instances, leases that ran out). While a job runs its lease is extended every
 * `heartbeatMs`; a heartbeat that finds the lease lost or the job cancelled aborts the run.
 */
export class JobQueue {
  readonly #o: JobQueueOptions;
  /** Running jobs by job id and generation (an instance may claim its own job again once its lease ran out). */
  readonly #running = new Map<string, { lease: JobLease; controller: AbortController }>();
  #activeBytes = 0;
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
    for (const r of this.#running.values()) if (r.lease.documentId === documentId && r.lease.jobId !== except) r.controller.abort('cancelled');
  }

  /** Stops claiming, aborts the running jobs and releases their leases, so any instance can take them at once. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#poll);
    const running = [...this.#running.values()];
    for (const r of running) r.controller.abort('closed');
    await Promise.all(running.map((r) => this.#o.storage.jobs.release(r.lease).catch(() => false)));
  }

  async #fill(): Promise<void> {
    const { storage, clock, owner, concurrency, concurrentBytes, leaseMs } = this.#o;
    while (!this.#closed && this.#running.size < concurrency) {
      // A job over the budget waits for the running ones, and runs alone when none is left.
      const maxBytes = this.#running.size > 0 ? Math.max(0, concurrentBytes - this.#activeBytes) : undefined;
      const lease = await storage.jobs.claim({ owner, now: clock.now(), leaseMs, ...(maxBytes !== undefined ? { maxBytes } : {}) });
      if (!lease) return;
      if (this.#closed) {
        await storage.jobs.release(lease);
        return;
      }
      this.#start(lease);
    }
  }

  #start(lease: JobLease): void {
    const { storage, clock, leaseMs, heartbeatMs } = this.#o;
    const controller = new AbortController();
    this.#running.set(`${lease.jobId}:${lease.generation}`, { lease, controller });
    this.#activeBytes += lease.size;
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
    const job: RunningJob = {
      lease,
      signal: controller.signal,
      heartbeat,
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
    void this.#o.run(job).finally(() => {
      clearInterval(timer);
      this.#running.delete(`${lease.jobId}:${lease.generation}`);
      this.#activeBytes -= lease.size;
      this.wake();
    });
  }
}
