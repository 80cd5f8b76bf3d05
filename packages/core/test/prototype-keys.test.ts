import { describe, expect, it } from 'vitest';
import { fileTypeOf } from '../src/knowledge/file-types.js';
import { exceededLimit, limitExceeded } from '../src/knowledge/limits.js';

// Lookups keyed by client input (or by what a child process reports) find only their own
// entries, never what Object.prototype holds under the same name.
const NAMES = Object.getOwnPropertyNames(Object.prototype);

describe('lookups by names of Object.prototype', () => {
  it('fileTypeOf: no file type for such an extension or declared type', () => {
    for (const name of NAMES) {
      expect(fileTypeOf(`a.${name}`), name).toBeUndefined();
      expect(fileTypeOf('a', name), name).toBeUndefined();
    }
    expect(fileTypeOf('a.MD')).toBe('md');
    expect(fileTypeOf('a', 'text/plain; charset=utf-8')).toBe('txt');
  });

  it('exceededLimit: names no limit for such a name', () => {
    for (const name of NAMES) expect(exceededLimit({ details: { limit: name } }), name).toBeUndefined();
    expect(exceededLimit(limitExceeded('maxPages', 'the PDF has 9 pages', 2))).toBe('maxPages');
  });
});
