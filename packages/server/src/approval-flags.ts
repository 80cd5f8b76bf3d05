import { type ApprovalOptions, DEFAULT_APPROVAL_TTL_MS, DEFAULT_QUESTION_TIMEOUT_MS, DEFAULT_RESUME_LEASE_MS } from '@agent-platform/core';
import { type IntegerFlag, integerFlagsFrom } from './integer-flags.js';

/** How long a run's questions to a person wait (documented in README.md and `serve --help`). */
export const APPROVAL_FLAGS: readonly IntegerFlag<'ttlMs' | 'questionTimeoutMs' | 'resumeLeaseMs'>[] = [
  { flag: 'approval-ttl-ms', env: 'AGENT_PLATFORM_APPROVAL_TTL_MS', key: 'ttlMs', min: 1000, max: 30 * 86_400_000, defaultValue: DEFAULT_APPROVAL_TTL_MS },
  { flag: 'elicitation-timeout-ms', env: 'AGENT_PLATFORM_ELICITATION_TIMEOUT_MS', key: 'questionTimeoutMs', min: 1000, max: 86_400_000, defaultValue: DEFAULT_QUESTION_TIMEOUT_MS },
  { flag: 'approval-resume-lease-ms', env: 'AGENT_PLATFORM_APPROVAL_RESUME_LEASE_MS', key: 'resumeLeaseMs', min: 1000, max: 3_600_000, defaultValue: DEFAULT_RESUME_LEASE_MS },
];

/** The approval settings given as flags (`values`, by flag name) or else env variables; an `Error` naming the flag for a value out of range. */
export function approvalsFrom(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): ApprovalOptions {
  return integerFlagsFrom(APPROVAL_FLAGS, values, env);
}
