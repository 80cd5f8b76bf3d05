import { describe, expect, it } from 'vitest';
import { boundedSpans, RUN_CHARS } from '../src/knowledge/long-runs.js';
import { unbrokenText } from '../src/testing/bombs.js';

/**
 * The spans as a regular expression finds the long runs (how they were found before the
 * one-pass scan): the reference for texts short enough for it. On a run of about 5.6 million
 * letters it throws "Maximum call stack size exceeded".
 */
const LONG_RUN = new RegExp(
  [
    `(?<![\\p{L}\\p{M}])[\\p{L}\\p{M}]{${RUN_CHARS + 1},}`,
    `(?<![^\\s\\p{L}\\p{M}\\p{N}])[^\\s\\p{L}\\p{M}\\p{N}]{${RUN_CHARS + 1},}`,
    `(?<![\\r\\n/])[\\r\\n/]{${RUN_CHARS + 1},}`,
    `(?<!\\s)\\s{${RUN_CHARS + 1},}`,
  ].join('|'),
  'gu',
);

function referenceSpans(text: string, from: number, to: number): [number, number][] {
  const spans: [number, number][] = [];
  let start = from;
  for (const m of text.slice(from, to).matchAll(LONG_RUN)) {
    const runStart = from + m.index;
    const runEnd = runStart + m[0].length;
    if (!/\S/.test(m[0])) {
      spans.push([start, runStart]);
      start = runEnd;
      continue;
    }
    for (let cut = runStart + RUN_CHARS; cut < runEnd; cut += RUN_CHARS) {
      if (/[\uD800-\uDBFF]/.test(text.charAt(cut - 1))) cut++;
      spans.push([start, cut]);
      start = cut;
    }
  }
  spans.push([start, to]);
  return spans;
}

/** Units a run may be made of: every kind of run, characters of two kinds (`/`, `\n`), astral letters and emoji, marks, digits, lone surrogates. */
const UNITS = ['a', 'é', 'e\u0301', '字', '𝐀', '😀', '#', '.', '/', '\n', '\r\n', ' ', '\t', '\u00a0', '\u3000', '7', '\u0301', '\uD800', '\uDC00', '/\n', 'x/'];

/** A deterministic text of runs of random units, some longer than RUN_CHARS. */
function runsText(seed: number, runs: number): string {
  let x = seed;
  const next = (n: number) => {
    x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
    return (x >>> 8) % n;
  };
  const parts: string[] = [];
  for (let i = 0; i < runs; i++) {
    const unit = UNITS[next(UNITS.length)] as string;
    const length = [1, 3, RUN_CHARS - 1, RUN_CHARS, RUN_CHARS + 1, 700, 1600][next(7)] as number;
    parts.push(unit.repeat(Math.ceil(length / unit.length)));
  }
  return parts.join('');
}

describe('boundedSpans', () => {
  it('cuts exactly where the regular expression did, on texts of mixed long and short runs', () => {
    let cuts = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const text = runsText(seed, 2 + (seed % 12));
      const from = seed % 3 === 0 ? Math.min(seed % 40, text.length) : 0;
      const to = seed % 5 === 0 ? Math.max(from, text.length - (seed % 50)) : text.length;
      const expected = referenceSpans(text, from, to);
      expect(boundedSpans(text, from, to), `seed ${seed}`).toEqual(expected);
      cuts += expected.length - 1;
    }
    // The texts had long runs to cut: the comparison is not between two single spans.
    expect(cuts).toBeGreaterThan(500);
  });

  it('gives one span for a text without a long run, and leaves a long whitespace run out', () => {
    expect(boundedSpans('Some words. More words.', 0, 23)).toEqual([[0, 23]]);
    const text = `word${' '.repeat(2000)}next`;
    expect(boundedSpans(text, 0, text.length)).toEqual([
      [0, 4],
      [2004, 2008],
    ]);
  });

  it.each([
    ['one word', unbrokenText('word', 6_000_000)],
    ['base64 of zeros', unbrokenText('zeros-base64', 6_000_000)],
    ['`#`', '#'.repeat(6_000_000)],
    ['astral letters', '𝐀'.repeat(3_000_000)],
    ['combining marks', `a${'\u0301'.repeat(6_000_000)}`],
    ['spaces', `a${' '.repeat(6_000_000)}b`],
  ])('cuts a run of 6 million characters (%s), where the regular expression overflows its stack', (_name, text) => {
    expect(() => referenceSpans(text, 0, text.length)).toThrow(/Maximum call stack size exceeded/);
    const spans = boundedSpans(text, 0, text.length);
    for (const [start, end] of spans) expect(end - start).toBeLessThanOrEqual(RUN_CHARS + 1);
    if (text.startsWith('a '))
      expect(spans).toEqual([
        [0, 1],
        [6_000_001, 6_000_002],
      ]);
    else expect(spans.length).toBeGreaterThan(5000);
  });
});
