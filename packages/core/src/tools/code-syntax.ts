import { PlatformError } from '../errors.js';
import type { CodeSyntaxError } from './sandbox.js';

/**
 * The error of tool code that does not parse, alike for every language and parser:
 * `invalid_request` with the message `code: line L, column C: <the parser's message>` and
 * `details: { line, column }` (both from 1).
 */
export function codeSyntaxError(problem: CodeSyntaxError): PlatformError {
  const where = `line ${problem.line}, column ${problem.column}`;
  return new PlatformError('invalid_request', `code: ${where}: ${problem.message}`, {
    details: { line: problem.line, column: problem.column },
    issues: [{ path: ['code'], code: 'custom', message: `${where}: ${problem.message}` }],
  });
}
