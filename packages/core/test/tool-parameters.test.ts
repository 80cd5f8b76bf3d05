import { describe, expect, it } from 'vitest';
import { compileParameters } from '../src/tools/project-tools.js';

describe('compileParameters', () => {
  it('compiles a schema once per content, not once per object (tool records are read afresh for every run)', () => {
    const schema = () => ({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    const first = compileParameters(schema());
    expect(compileParameters(schema())).toBe(first);
    expect(first({ city: 'Oslo' })).toBe(true);
    expect(first({})).toBe(false);
    expect(compileParameters({ ...schema(), required: [] })).not.toBe(first);
  });

  it('names the problem of an invalid schema', () => {
    expect(() => compileParameters({ type: 'object', properties: { a: { type: 'nonsense' } } })).toThrow(/parameters: not a valid JSON Schema/);
  });
});
