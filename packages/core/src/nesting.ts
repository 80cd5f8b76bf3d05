import { PlatformError } from './errors.js';

/**
 * Deepest nesting of objects and arrays any value a client sends may have: 64 levels (`{}` and
 * `[]` are one level, `{"a":[1]}` two). Far above what real requests use (a tool's JSON Schema
 * or an OpenAI message is a few levels deep), far below where recursive code (`JSON.stringify`,
 * structured clone, JSON Schema compilation) overflows the stack (a few thousand levels).
 */
export const MAX_NESTING_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when the JSON text `text` nests objects and arrays deeper than `limit`. One linear pass
 * without recursion that counts brackets outside strings (jumping over each string with
 * `indexOf`, so long strings cost little), meant to run BEFORE `JSON.parse`: nothing recursive
 * ever sees a value too deep. Malformed text is not judged here (`JSON.parse` rejects it); for
 * valid JSON the depth counted is the value's depth.
 */
export function jsonExceedsNesting(text: string, limit = MAX_NESTING_DEPTH): boolean {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === QUOTE) {
      i = stringEnd(text, i);
      if (i < 0) return false;
    }
  }
  return false;
}

/**
 * The index of the quote closing the string opened at `open`, or -1 when it is never closed.
 * A quote is escaped when an odd number of backslashes precede it; counting them backwards
 * never passes the previous quote, so the whole scan stays linear.
 */
function stringEnd(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** Objects and arrays are walked; binary data (a file's bytes) is a leaf, as in JSON. */
function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !ArrayBuffer.isView(value) && !(value instanceof ArrayBuffer);
}

/**
 * True when `value` nests objects and arrays deeper than `limit` (own enumerable members, as
 * `JSON.stringify` and zod see them). Iterative, so a value of any depth is judged without
 * overflowing the stack. A cycle counts as infinitely deep; an object shared by several parents
 * is walked again only when reached deeper than before (at most `limit` times), so a value
 * built of shared references cannot make the walk exponential.
 */
export function exceedsNesting(value: unknown, limit = MAX_NESTING_DEPTH): boolean {
  if (!isContainer(value)) return false;
  const deepest = new Map<object, number>();
  const pending: [object, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (depth > limit) return true;
    if ((deepest.get(node) ?? 0) >= depth) continue;
    deepest.set(node, depth);
    if (Array.isArray(node)) {
      for (const child of node) if (isContainer(child)) pending.push([child, depth + 1]);
    } else {
      for (const key of Object.keys(node)) {
        const child = (node as Record<string, unknown>)[key];
        if (isContainer(child)) pending.push([child, depth + 1]);
      }
    }
  }
  return false;
}

/**
 * The `invalid_request` for a value nested too deep, e.g. `body: nested deeper than 64 levels`.
 * `subject` names the value as the other validation messages do (`body` for a whole request).
 */
export function nestingError(subject = 'body', limit = MAX_NESTING_DEPTH): PlatformError {
  const reason = `nested deeper than ${limit} levels`;
  return PlatformError.invalid(`${subject}: ${reason}`, [{ path: [], code: 'too_deep', message: reason }]);
}
