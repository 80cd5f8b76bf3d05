/** A unit of background work (indexing a document), kept until done so a restart resumes it. */
export interface JobRecord {
  readonly id: string;
  readonly kind: 'index_document';
  readonly documentId: string;
  /**
   * Whose share of the queue the job counts against (fair claims, the bound on what one may
   * have queued): the owner key, today the document's user (a workspace once there are any).
   */
  readonly tenant: string;
  /** What the worker needs, e.g. the text to index or the file id. */
  readonly payload: Record<string, unknown>;
  /** Starts of the job so far (each claim counts one, before the job runs). */
  readonly attempts: number;
  readonly createdAt: Date;
  /** Bytes of the document's source (0 when not known): claims keep the bytes running under a budget. */
  readonly size: number;
  /** The instance holding the job's lease, or null while it waits to be claimed. */
  readonly owner: string | null;
  /** When the lease runs out (null while unclaimed): after it, any instance may claim the job. */
  readonly leaseExpiresAt: Date | null;
  /** Fencing token: bumped by every claim and release, so a run holding an older one can write nothing. */
  readonly generation: number;
}

/** A job as it is queued: not claimed yet. */
export type NewJob = Pick<JobRecord, 'id' | 'kind' | 'documentId' | 'tenant' | 'payload' | 'createdAt'> & {
  /** Default 0. */
  readonly size?: number;
  /** Default 0. */
  readonly attempts?: number;
};

/** A claimed job: the holder's proof of ownership, which every fenced write checks. */
export interface JobLease {
  readonly jobId: string;
  readonly documentId: string;
  /** The job's owner key (`JobRecord.tenant`). */
  readonly tenant: string;
  /** The claiming instance. */
  readonly owner: string;
  /** The job's generation set by this claim (the fencing token). */
  readonly generation: number;
  /** Starts of the job, this one included. */
  readonly attempts: number;
  /** Bytes of the document's source (0 when not known). */
  readonly size: number;
  /** When the lease runs out unless extended by `heartbeat`. */
  readonly expiresAt: Date;
}

/** What `JobRepository.claim` takes. */
export interface ClaimOptions {
  /** The claiming instance: the owner of the lease. */
  readonly owner: string;
  /** The claimer's clock: leases over at it are free. */
  readonly now: Date;
  readonly leaseMs: number;
  /** Most bytes the job may have (the room left in the claimer's byte budget); default no bound. */
  readonly maxBytes?: number;
  /** Jobs queued at or before it are taken even over `maxBytes` (see `claim`); default none. */
  readonly overdueAt?: Date;
  /** Only jobs of tenants with no job leased now (the claimer's spare slot). Default false. */
  readonly idleTenantsOnly?: boolean;
}

/**
 * What a heartbeat found: `held` (still this lease's, now extended), `lost` (another claim holds
 * the job: this lease expired and it was taken over, or it was released), `cancelled` (the job
 * is gone: cancelled, its document deleted, or finished by the instance that took it over).
 */
export type LeaseState = 'held' | 'lost' | 'cancelled';

/**
 * The job queue, shared by every instance on the database. Jobs are claimed with a lease kept
 * alive by heartbeats; a job whose lease ran out is claimable again (its holder died or
 * stalled), with a new generation, so the old holder's late writes are refused. Times are the
 * callers' clocks (`now`).
 */
export interface JobRepository {
  insert(job: NewJob): Promise<void>;
  /** All jobs, oldest first. */
  list(): Promise<JobRecord[]>;
  get(id: string): Promise<JobRecord | undefined>;
  delete(id: string): Promise<void>;
  /**
   * Atomically takes a job that no live lease holds (never claimed, released, or its lease over
   * at `now`), for `owner` until `now + leaseMs`: counts a start (`attempts + 1`) and bumps the
   * generation. Which job, fairly between tenants: of the tenant with the fewest jobs leased now
   * (live leases held by any instance, counted in storage), between tenants with as many the one
   * whose job waited longest, and within a tenant its oldest job. A job larger than `maxBytes` is
   * passed over for the next that fits, unless it was queued at or before `overdueAt` (it has been
   * passed over long enough: the claimer gets it and holds it until it has room). With
   * `idleTenantsOnly`, only jobs of tenants with no job leased now. Undefined when there is none.
   * Two claims, from any instances, never get the same job while its lease runs.
   */
  claim(options: ClaimOptions): Promise<JobLease | undefined>;
  /**
   * Inside a transaction: locks the tenant's queue until the transaction ends (another
   * transaction's `lockTenant` of the same tenant, on any instance, waits for it) and answers how
   * many jobs the tenant has, waiting or running. A check against a bound followed by inserts is
   * thus atomic. Call it first in its transaction (SQLite takes its write lock here).
   */
  lockTenant(tenant: string): Promise<number>;
  /**
   * Extends the lease to `now + leaseMs` when the job is still this lease's (same owner and
   * generation), else answers why not. Called first inside a transaction it is the fence of the
   * transaction's writes: the job's row is written, so a claim or cancel of it waits for (or
   * skips) the transaction, and `held` holds until it commits.
   */
  heartbeat(lease: JobLease, options: { readonly now: Date; readonly leaseMs: number }): Promise<LeaseState>;
  /** Deletes the job (completed or failed) when it is still this lease's; false otherwise (nothing changed). */
  finish(lease: JobLease): Promise<boolean>;
  /** Puts the job back for anyone to claim at once, when it is still this lease's (shutdown); false otherwise. */
  release(lease: JobLease): Promise<boolean>;
  /**
   * Releases every job leased to `owner`: for an instance starting again under a stable id, whose
   * earlier run (dead: it is this one) left them. Answers how many.
   */
  releaseOwner(owner: string): Promise<number>;
  /**
   * Removes the document's jobs, waiting or running (re-indexing, deleting). A run of one, on
   * any instance, hears `cancelled` at its next heartbeat and its fenced writes are refused.
   * Answers how many were removed.
   */
  cancel(documentId: string): Promise<number>;
}
