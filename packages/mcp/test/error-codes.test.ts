import { describe, expect, it } from 'vitest';
import { isNetworkError, mapError } from '../src/errors.js';

// Error codes are read from whatever an error carries: a code named like a member of
// Object.prototype must not be taken for a known one (nor its function source quoted).

const ctx = { label: 'MCP server command "x"', operation: 'connect', timeoutMs: 1000 };
const coded = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error('boom'), { code, ...extra });

describe('error codes named like members of Object.prototype', () => {
  it('are not network errors', () => {
    for (const code of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) expect(isNetworkError(coded(code)), code).toBe(false);
    expect(isNetworkError(coded('ECONNREFUSED'))).toBe(true);
  });

  it('are not spawn failures with a reason', () => {
    const { error } = mapError(coded('constructor', { syscall: 'spawn x' }), ctx, false);
    expect(error.message).not.toMatch(/could not be started|function|native code/);
    expect(mapError(coded('ENOENT', { syscall: 'spawn x' }), ctx, false).error.message).toBe('MCP server command "x" could not be started: command not found');
  });
});
