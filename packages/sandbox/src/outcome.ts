import { type CodeSyntaxError, PlatformError, type ToolOutcome } from '@agent-platform/core';
import { capLogs, parseToolResult } from '@agent-platform/core/internal';

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

/** Longest parser message kept (a hostile host could send any length). */
const MAX_SYNTAX_MESSAGE = 1000;

/**
 * The answer of a syntax check (a run of type `check`, whose result is the syntax error or
 * null), checked as `toOutcome` checks runs: a syntax error, undefined when the code parses,
 * else a `PlatformError`: `invalid_request` when the parse ran out of time or memory (the code
 * is at fault), `unavailable` when the sandbox failed or answered something else.
 */
export function syntaxCheckResult(outcome: ToolOutcome): CodeSyntaxError | undefined {
  if (!outcome.ok) {
    const { kind, message } = outcome.error;
    if (kind === 'timeout' || kind === 'out_of_memory') throw PlatformError.invalid(`code: it could not be parsed: ${message.replace(/^the tool /, 'the parse ')}`);
    throw new PlatformError('unavailable', `The sandbox could not parse the code: ${message}`);
  }
  if (outcome.result === null) return undefined;
  const r = outcome.result as { line?: unknown; column?: unknown; message?: unknown };
  const position = (n: unknown) => (typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : undefined);
  const line = position(r?.line);
  if (line === undefined || typeof r.message !== 'string') throw new PlatformError('unavailable', 'The sandbox answered the syntax check with something that is not a syntax error');
  return { line, column: position(r.column) ?? 1, message: r.message.slice(0, MAX_SYNTAX_MESSAGE) };
}
