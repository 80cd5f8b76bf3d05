import type { z } from 'zod';
import { PlatformError, type ValidationIssue } from './errors.js';
import { exceedsNesting, nestingError } from './nesting.js';

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'body' : path.map(String).join('.');
}

/**
 * Parses `input` with `schema` or throws `invalid_request` whose message names each offending
 * field, e.g. `limit: Too big: expected number to be <=100`. Input nested deeper than
 * `MAX_NESTING_DEPTH` is refused first (`body: nested deeper than 64 levels`), so no value a
 * caller passes reaches code that recurses over it (zod, `JSON.stringify`, structured clone).
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  if (exceedsNesting(input)) throw nestingError();
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    path: issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)),
    code: issue.code,
    message: issue.message,
  }));
  const message = issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; ');
  throw PlatformError.invalid(message, issues);
}
