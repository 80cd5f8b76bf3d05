import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isPlatformError } from '../src/errors.js';
import { parseInput } from '../src/validation.js';

/** A schema that counts how often zod ran it. */
function counted() {
  const calls = { n: 0 };
  const schema = z.object({ name: z.string(), limit: z.coerce.number().int().max(100).default(20) }).refine(() => {
    calls.n++;
    return true;
  });
  return { schema, calls };
}

describe('parseInput parses a request once', () => {
  it('answers its own output, passed again with the same schema, as it is without running the schema', () => {
    const { schema, calls } = counted();
    const parsed = parseInput(schema, { name: 'a', limit: '5' });
    expect(parsed).toEqual({ name: 'a', limit: 5 });
    expect(calls.n).toBe(1);
    expect(parseInput(schema, parsed)).toBe(parsed);
    expect(calls.n).toBe(1);
  });

  it('parses input that did not come from it, even when equal to an output', () => {
    const { schema, calls } = counted();
    parseInput(schema, { name: 'a' });
    parseInput(schema, { name: 'a', limit: 20 });
    expect(calls.n).toBe(2);
  });

  it('parses an output again with another schema, with that schema’s messages', () => {
    const { schema } = counted();
    const parsed = parseInput(schema, { name: 'a', limit: 50 });
    const stricter = z.object({ name: z.string(), limit: z.number().max(10) });
    let error: unknown;
    try {
      parseInput(stricter, parsed);
    } catch (e) {
      error = e;
    }
    expect(isPlatformError(error)).toBe(true);
    expect((error as Error).message).toBe('limit: Too big: expected number to be <=10');
  });
});
