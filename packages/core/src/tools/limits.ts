import { PlatformError } from '../errors.js';

/**
 * Limits on what goes into and comes out of a tool run. Values nested deeper than
 * `maxDepth` would overflow the stack of the recursive code that meets them (JSON.stringify,
 * structured clone, ajv, deep equality), so they are refused before anything recursive sees them.
 */
export const TOOL_LIMITS = {
  /** Objects and arrays nested in a tool's arguments, its `parameters` schema or its result, at most. */
  maxDepth: 64,
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
} as const;

/**
 * True when the JSON text nests objects/arrays deeper than `limit`. A linear scan of the text
 * (brackets outside strings), so even a value 100,000 levels deep costs one pass and no stack.
 */
export function jsonTextTooDeep(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * `value` as JSON text (`undefined` as `{}`), or `invalid_request` naming `what` and the limit
 * when it is nested deeper than `limit`. JSON.stringify is native and stops a value too deep
 * for the stack with a RangeError; the text is then scanned for the exact limit. What workers
 * and processes are sent (a string crosses a thread without a structured clone of each value).
 */
export function jsonWithinDepth(what: string, value: unknown, limit: number = TOOL_LIMITS.maxDepth): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value ?? {});
  } catch (error) {
    if (error instanceof RangeError) throw PlatformError.invalid(`${what}: nested deeper than ${limit} levels`);
    throw PlatformError.invalid(`${what}: not JSON: ${(error as Error).message}`);
  }
  if (text === undefined) throw PlatformError.invalid(`${what}: not JSON`);
  if (jsonTextTooDeep(text, limit)) throw PlatformError.invalid(`${what}: nested deeper than ${limit} levels`);
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
  if (jsonTextTooDeep(text, TOOL_LIMITS.maxDepth)) return { ok: false, message: `the result of main is nested deeper than ${TOOL_LIMITS.maxDepth} levels` };
  try {
    return { ok: true, result: JSON.parse(text) };
  } catch {
    return { ok: false, message: 'the result of main is not JSON' };
  }
}
