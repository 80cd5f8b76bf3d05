import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isPlatformError } from '../src/errors.js';
import { exceedsNesting, jsonExceedsNesting, MAX_NESTING_DEPTH, nestingError } from '../src/nesting.js';
import { deepJson, deepValue } from '../src/testing/deep-values.js';
import { parseInput } from '../src/validation.js';

const deepArray = (depth: number) => deepValue(depth, 'arrays');
const deepObject = (depth: number) => deepValue(depth, 'objects') as Record<string, unknown>;

/** The depth of a (small) value, the straightforward recursive way: the reference. */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** A random JSON value with strings full of brackets, quotes and backslashes. */
function randomValue(random: () => number, budget: number): unknown {
  const pick = Math.floor(random() * (budget > 0 ? 6 : 3));
  const chars = ['[', ']', '{', '}', '"', '\\', '\\"', 'a', '\n', '\u2028', 'é'];
  if (pick === 0) return Array.from({ length: Math.floor(random() * 8) }, () => chars[Math.floor(random() * chars.length)]).join('');
  if (pick === 1) return Math.floor(random() * 100);
  if (pick === 2) return random() < 0.5 ? null : true;
  const n = Math.floor(random() * 4);
  if (pick === 3) return Array.from({ length: n }, () => randomValue(random, budget - 1));
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${chars[i % chars.length]}k${i}`, randomValue(random, budget - 1)]));
}

describe('deepValue and deepJson (testing helpers)', () => {
  it('build values and text of exactly the depth asked', () => {
    for (const shape of ['arrays', 'objects', 'mixed'] as const) {
      for (const depth of [1, 2, 3, 64, 65]) {
        const text = deepJson(depth, shape);
        expect(JSON.parse(text)).toEqual(deepValue(depth, shape));
        expect(depthOf(deepValue(depth, shape))).toBe(depth);
      }
    }
    expect(deepJson(3, 'mixed')).toBe('{"a":[{}]}');
  });
});

describe('MAX_NESTING_DEPTH', () => {
  it('is 64 levels', () => expect(MAX_NESTING_DEPTH).toBe(64));
});

describe('jsonExceedsNesting', () => {
  it('refuses one level past the limit, of arrays, objects or both', () => {
    for (const make of [deepArray, deepObject]) {
      expect(jsonExceedsNesting(JSON.stringify(make(64)))).toBe(false);
      expect(jsonExceedsNesting(JSON.stringify(make(65)))).toBe(true);
    }
    expect(jsonExceedsNesting(`${'[{"a":'.repeat(32)}1${'}]'.repeat(32)}`)).toBe(false);
    expect(jsonExceedsNesting(`${'[{"a":'.repeat(32)}[]${'}]'.repeat(32)}`)).toBe(true);
    expect(jsonExceedsNesting('[[[]]]', 2)).toBe(true);
    expect(jsonExceedsNesting('[[],[],[[]]]', 3)).toBe(false);
  });

  it('judges text of any depth without overflowing the stack', () => {
    const n = 10_000_000;
    expect(jsonExceedsNesting('['.repeat(n) + ']'.repeat(n))).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const inside = '['.repeat(100_000);
    expect(jsonExceedsNesting(JSON.stringify({ text: inside }))).toBe(false);
    expect(jsonExceedsNesting(JSON.stringify({ text: `\\"${inside}\\"`, more: `"${inside}` }))).toBe(false);
    // A string ending in backslashes: the quote after them closes it, so the brackets count.
    expect(jsonExceedsNesting(`["\\\\",${'['.repeat(64)}${']'.repeat(64)}]`)).toBe(true);
    expect(jsonExceedsNesting(`["\\\\\\"${'['.repeat(64)}"]`)).toBe(false);
  });

  it('agrees with the depth of the parsed value, for random JSON', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 2_000; i++) {
      const text = JSON.stringify(randomValue(random, 8));
      const depth = depthOf(JSON.parse(text));
      expect(jsonExceedsNesting(text, depth)).toBe(false);
      if (depth > 0) expect(jsonExceedsNesting(text, depth - 1), text).toBe(true);
    }
  });

  it('leaves malformed text to JSON.parse', () => {
    expect(jsonExceedsNesting('["unterminated')).toBe(false);
    expect(jsonExceedsNesting(']]]]')).toBe(false);
  });
});

describe('exceedsNesting', () => {
  it('refuses one level past the limit, and values of any depth without overflowing the stack', () => {
    for (const make of [deepArray, deepObject]) {
      expect(exceedsNesting(make(64))).toBe(false);
      expect(exceedsNesting(make(65))).toBe(true);
      expect(exceedsNesting(make(1_000_000))).toBe(true);
    }
    expect(exceedsNesting('text')).toBe(false);
    expect(exceedsNesting(null)).toBe(false);
  });

  it('counts a cycle as too deep', () => {
    const cycle: Record<string, unknown> = { name: 'x' };
    cycle.self = { back: cycle };
    expect(exceedsNesting(cycle)).toBe(true);
  });

  it('walks a value of shared references in linear time, not once per path', () => {
    // 2^60 paths through 60 objects: a walk per path would never end.
    let shared: Record<string, unknown> = {};
    for (let level = 1; level < 60; level++) shared = { left: shared, right: shared };
    expect(exceedsNesting(shared)).toBe(false);
    // Reached shallow first and deep later, a shared object is judged at its deepest place.
    const leaf = deepArray(10);
    expect(exceedsNesting({ a: leaf, b: deepObject(55), c: [leaf] }, 64)).toBe(false);
    const deeper: Record<string, unknown> = deepObject(56);
    let at = deeper;
    while (at.a) at = at.a as Record<string, unknown>;
    at.leaf = leaf;
    // Either order of the walk: the shallow place first, or the deep one.
    expect(exceedsNesting({ a: leaf, b: deeper })).toBe(true);
    expect(exceedsNesting({ b: deeper, a: leaf })).toBe(true);
  });

  it('treats binary data as a leaf', () => {
    expect(exceedsNesting({ files: [{ bytes: new Uint8Array(16 * 1024 * 1024) }] }, 3)).toBe(false);
    expect(exceedsNesting({ data: new ArrayBuffer(8) }, 1)).toBe(false);
  });
});

describe('parseInput', () => {
  const Schema = z.object({ args: z.record(z.string(), z.unknown()) });

  it('refuses input nested deeper than the limit with invalid_request naming it, before zod', () => {
    const error = (() => {
      try {
        parseInput(Schema, { args: { deep: deepArray(100_000) } });
      } catch (caught) {
        return caught;
      }
    })();
    expect(isPlatformError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'invalid_request', message: 'body: nested deeper than 64 levels', issues: [{ path: [], code: 'too_deep' }] });
  });

  it('accepts input exactly at the limit', () => {
    const args = { deep: deepArray(62) };
    expect(parseInput(Schema, { args })).toEqual({ args });
  });

  it('nestingError names the subject and the limit', () => {
    expect(nestingError('arguments', 8).message).toBe('arguments: nested deeper than 8 levels');
  });
});
