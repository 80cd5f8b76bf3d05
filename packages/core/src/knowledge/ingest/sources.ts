import { DEFAULT_LEASE_MS } from '../job-queue.js';

/** Most bytes of submitted text kept in memory for jobs not yet run (see `SourceCache`). */
export const SOURCES_KEPT_BYTES = 64 * 1024 * 1024;

/**
 * The text of jobs submitted by this process, by job id, kept from `submit` until the job runs
 * so it does not read back what was just written to the blob store (a file read per document
 * during bulk ingest); at most {@link SOURCES_KEPT_BYTES} in all, beyond which jobs read the
 * blob store as after a restart. A job another instance claimed never comes here: its text is
 * dropped once older than the lease (`keep`).
 */
export class SourceCache {
  readonly #sources = new Map<string, { readonly bytes: Uint8Array; readonly at: number }>();
  #sourceBytes = 0;
  readonly #leaseMs: number;

  constructor(leaseMs: number = DEFAULT_LEASE_MS) {
    this.#leaseMs = leaseMs;
  }

  /** Keeps a submitted text for its job (when under the budget), dropping texts kept longer than a lease. */
  keep(jobId: string, bytes: Uint8Array): void {
    const now = Date.now();
    const oldest = now - this.#leaseMs;
    for (const [id, kept] of this.#sources) {
      if (kept.at > oldest) break; // kept in order of arrival
      this.#sources.delete(id);
      this.#sourceBytes -= kept.bytes.length;
    }
    if (this.#sourceBytes + bytes.length > SOURCES_KEPT_BYTES) return;
    this.#sources.set(jobId, { bytes, at: now });
    this.#sourceBytes += bytes.length;
  }

  /** The text kept for a job, no longer kept; undefined when none was. */
  take(jobId: string): Uint8Array | undefined {
    const kept = this.#sources.get(jobId);
    if (kept) {
      this.#sources.delete(jobId);
      this.#sourceBytes -= kept.bytes.length;
    }
    return kept?.bytes;
  }

  clear(): void {
    this.#sources.clear();
    this.#sourceBytes = 0;
  }
}
