import { PlatformError } from '../errors.js';
import { jsonExceedsNesting, MAX_NESTING_DEPTH, nestingError } from '../nesting.js';

/**
 * Limits on what goes into and comes out of a tool run. Values nested deeper than
 * `maxDepth` would overflow the stack of the recursive code that meets them (JSON.stringify,
 * structured clone, ajv, deep equality), so they are refused before anything recursive sees them.
 */
export const TOOL_LIMITS = {
  /** Objects and arrays nested in a tool's arguments, its `parameters` schema or its result, at most (`MAX_NESTING_DEPTH`). */
  maxDepth: MAX_NESTING_DEPTH,
  /** Characters of a tool's result as JSON text, at most (1 MiB). */
  maxResultChars: 1024 * 1024,
  /** Characters of a tool's `parameters` schema as JSON text, at most (256 KiB). */
  maxSchemaChars: 256 * 1024,
  /** Captured log lines of a run, at most. */
  maxLogLines: 1000,
  /** Characters of one captured log line, at most (longer lines are cut). */
  maxLogLineChars: 10_000,
  /** Characters of all captured log lines of a run, at most (later lines are dropped). */
  maxLogChars: 256 * 1024,
  /** Progress reports of a run relayed at most once per this many ms (the latest wins; the last is always relayed). */
  progressIntervalMs: 100,
  /** Characters of a progress report's message, at most (longer messages are cut). */
  maxProgressMessageChars: 500,
} as const;

/**
 * `value` as JSON text (`undefined` as `{}`), or `invalid_request` naming `what` and the limit
 * when it is nested deeper than `limit`. JSON.stringify is native and stops a value too deep
 * for the stack with a RangeError; the text is then scanned for the exact limit
 * (`jsonExceedsNesting`). This text is what workers and processes are sent: a string crosses
 * to another thread without a structured clone of each value in it.
 */
export function jsonWithinDepth(what: string, value: unknown, limit: number = TOOL_LIMITS.maxDepth): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value ?? {});
  } catch (error) {
    if (error instanceof RangeError && /call stack/i.test(error.message)) throw nestingError(what, limit);
    throw PlatformError.invalid(`${what}: not JSON: ${(error as Error).message}`);
  }
  if (text === undefined) throw PlatformError.invalid(`${what}: not JSON`);
  if (jsonExceedsNesting(text, limit)) throw nestingError(what, limit);
  return text;
}

/** Log lines as the limits allow: at most `maxLogLines` lines of `maxLogLineChars`, `maxLogChars` in all. */
export function capLogs(lines: readonly unknown[]): string[] {
  const kept: string[] = [];
  let total = 0;
  for (const line of lines) {
    if (typeof line !== 'string') continue;
    if (kept.length >= TOOL_LIMITS.maxLogLines || total >= TOOL_LIMITS.maxLogChars) break;
    const text = line.slice(0, TOOL_LIMITS.maxLogLineChars);
    kept.push(text);
    total += text.length;
  }
  return kept;
}

/**
 * A tool's result from its JSON text, within the limits: the parsed value, or why it is
 * refused (the messages every sandbox gives, so both languages answer alike).
 */
export function parseToolResult(text: string): { ok: true; result: unknown } | { ok: false; message: string } {
  if (text.length > TOOL_LIMITS.maxResultChars) return { ok: false, message: `the result of main is larger than ${TOOL_LIMITS.maxResultChars} characters` };
  if (jsonExceedsNesting(text, TOOL_LIMITS.maxDepth)) return { ok: false, message: `the result of main is nested deeper than ${TOOL_LIMITS.maxDepth} levels` };
  try {
    return { ok: true, result: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'the result of main is not JSON' };
  }
}
