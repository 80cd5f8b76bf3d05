import { DEFAULT_STREAM_LEASE_MS } from '@agent-platform/core/internal';
import { type IntegerFlag, integerFlagsFrom } from './integer-flags.js';

/**
 * How long an instance holds work before others may take it over, and how often it looks for
 * work: what decides how soon a dead instance's jobs and chat streams are taken over.
 */
export interface Leases {
  /** Lease of a claimed indexing job (ms); the holder extends it every third of it. Default 30,000. */
  readonly jobLeaseMs?: number;
  /** How often an instance with free slots looks for indexing jobs it was not woken for (ms). Default 1,000. */
  readonly jobPollMs?: number;
  /**
   * Lease of a chat stream's writer (ms), with `--database`: a stream whose instance stopped is
   * ended with an error event this long after its last write or heartbeat (every third of it).
   * Default 30,000. (On SQLite streams live in the one process and end with it.)
   */
  readonly streamLeaseMs?: number;
}

/** The lease flags and env variables of `serve` (documented in README.md, docs/DEPLOY.md and `serve --help`). */
export const LEASE_FLAGS: readonly IntegerFlag<keyof Leases>[] = [
  { flag: 'job-lease-ms', env: 'AGENT_PLATFORM_JOB_LEASE_MS', key: 'jobLeaseMs', min: 300, max: 3_600_000, defaultValue: 30_000 },
  { flag: 'job-poll-ms', env: 'AGENT_PLATFORM_JOB_POLL_MS', key: 'jobPollMs', min: 10, max: 600_000, defaultValue: 1_000 },
  { flag: 'stream-lease-ms', env: 'AGENT_PLATFORM_STREAM_LEASE_MS', key: 'streamLeaseMs', min: 300, max: 3_600_000, defaultValue: DEFAULT_STREAM_LEASE_MS },
];

/** The leases given as flags (`values`, by flag name) or else env variables; an `Error` naming the flag for a value out of range. */
export function leasesFrom(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): Leases {
  return integerFlagsFrom(LEASE_FLAGS, values, env);
}

/** A holder extends its lease every third of it: two heartbeats may fail (a slow database) before the lease runs out. */
export const heartbeatOf = (leaseMs: number): number => Math.max(100, Math.floor(leaseMs / 3));
