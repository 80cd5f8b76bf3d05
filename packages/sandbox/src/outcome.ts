import { capLogs, parseToolResult, type ToolOutcome } from '@agent-platform/core';

const KINDS = ['timeout', 'out_of_memory', 'thrown', 'invalid_result', 'invalid_code'] as const;

/**
 * An outcome as a worker or host process reports it, checked: the other side ran untrusted code
 * and could send anything. A successful run carries its result as JSON text (`resultText`),
 * parsed here only within `TOOL_LIMITS` (size, nesting depth), so both languages refuse an
 * oversized or too deep result alike; logs are capped the same way.
 */
export function toOutcome(value: unknown): ToolOutcome {
  const o = value as { ok?: unknown; resultText?: unknown; logs?: unknown; durationMs?: unknown; error?: { kind?: unknown; message?: unknown } };
  const logs = capLogs(Array.isArray(o?.logs) ? o.logs : []);
  const durationMs = typeof o?.durationMs === 'number' ? o.durationMs : 0;
  if (o?.ok === true) {
    const parsed = typeof o.resultText === 'string' ? parseToolResult(o.resultText) : { ok: false as const, message: 'the result of main is not JSON' };
    return parsed.ok ? { ok: true, result: parsed.result, logs, durationMs } : { ok: false, error: { kind: 'invalid_result', message: parsed.message }, logs, durationMs };
  }
  const kind = KINDS.find((k) => k === o?.error?.kind) ?? 'thrown';
  return { ok: false, error: { kind, message: typeof o?.error?.message === 'string' ? o.error.message : 'the tool failed' }, logs, durationMs };
}
