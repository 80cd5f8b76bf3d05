import type { z } from 'zod';
import { PlatformError, type ValidationIssue } from './errors.js';
import { exceedsNesting, nestingError } from './nesting.js';

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'body' : path.map(String).join('.');
}

/**
 * Parses `input` with `schema` or throws `invalid_request` whose message names each offending
 * field, e.g. `limit: Too big: expected number to be <=100`; a field past a size limit
 * (`sizedText`) throws `payload_too_large` naming the field and the limit instead. Input nested deeper than
 * `MAX_NESTING_DEPTH` is refused first (`body: nested deeper than 64 levels`), so no value a
 * caller passes reaches code that recurses over it (zod, `JSON.stringify`, structured clone).
 *
 * The parse sites are `AgentPlatform`'s public methods (for library callers) and the server's
 * route handling; the area services take the parsed values, so a request is parsed once.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  if (exceedsNesting(input)) throw nestingError();
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const tooLarge = sizeIssues(result.error.issues, []);
  if (tooLarge.length > 0) {
    throw new PlatformError('payload_too_large', describe(tooLarge), { issues: tooLarge });
  }
  const issues = explained(result.error.issues, []);
  throw PlatformError.invalid(describe(issues), issues);
}

/**
 * The issues as callers read them. A union whose one member has the value's type (a string or
 * an array of parts, say) reports that member's own issues (`content.1.type: ...`) instead of
 * zod's bare "Invalid input", which names no member.
 */
function explained(issues: readonly z.core.$ZodIssue[], base: readonly (string | number)[]): ValidationIssue[] {
  return issues.flatMap((issue) => {
    const path = [...base, ...plainPath(issue.path)];
    if (issue.code === 'invalid_union') {
      const typed = issue.errors.filter((branch) => !branch.some((i) => i.code === 'invalid_type' && i.path.length === 0));
      if (typed.length === 1) return explained(typed[0] as z.core.$ZodIssue[], path);
    }
    return [{ path, code: issue.code, message: issue.message }];
  });
}

const describe = (issues: readonly ValidationIssue[]) => issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; ');

const plainPath = (path: readonly PropertyKey[]) => path.map((p) => (typeof p === 'symbol' ? String(p) : p));

/**
 * The issues of fields past a size limit (`sizedText`), also inside a union whose member of the
 * right type failed only on size (a string content too long, not "expected an array").
 */
function sizeIssues(issues: readonly z.core.$ZodIssue[], base: readonly (string | number)[]): ValidationIssue[] {
  const found: ValidationIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...plainPath(issue.path)];
    if (issue.code === 'custom' && typeof issue.params?.sizeLimit === 'number') {
      found.push({ path, code: 'too_big', message: issue.message });
    } else if (issue.code === 'invalid_union') {
      for (const branch of issue.errors) {
        if (!branch.some((i) => i.code === 'invalid_type' && i.path.length === 0)) found.push(...sizeIssues(branch, path));
      }
    }
  }
  return found;
}

/** The 400 for a body id that differs from the id of the path (`toolId`, `chatId`). */
export function samePathId(field: string, kind: string): PlatformError {
  return PlatformError.invalid(`${field}: must equal the ${kind} id of the path`, [{ path: [field], code: 'custom', message: 'must equal the path id' }]);
}
