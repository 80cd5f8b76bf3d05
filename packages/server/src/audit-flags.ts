import { type AuditOptions, DEFAULT_AUDIT_RETENTION_DAYS } from '@agent-platform/core';
import { type IntegerFlag, integerFlagsFrom } from './integer-flags.js';

/** How long the audit log keeps its events (documented in README.md and `serve --help`). */
export const AUDIT_FLAGS: readonly IntegerFlag<'retentionDays'>[] = [
  { flag: 'audit-retention-days', env: 'AGENT_PLATFORM_AUDIT_RETENTION_DAYS', key: 'retentionDays', min: 0, max: 36_500, defaultValue: DEFAULT_AUDIT_RETENTION_DAYS },
];

/** The audit settings given as flags (`values`, by flag name) or else env variables; an `Error` naming the flag for a value out of range. */
export function auditFrom(values: Readonly<Record<string, unknown>>, env: NodeJS.ProcessEnv): AuditOptions {
  return integerFlagsFrom(AUDIT_FLAGS, values, env);
}
