/**
 * Longest run of one kind of character that is ever tokenized as a whole. The tokenizer splits
 * text into pre-tokens (a word, a run of punctuation, a run of whitespace, give or take a
 * character) and its byte-pair merging costs the square of a pre-token's length: one run of a
 * million letters or `#` took minutes. So runs longer than this (of letters, of other
 * non-space characters, of whitespace, or of `\r`, `\n` and `/`, which a punctuation pre-token
 * may take as its tail) are cut every RUN_CHARS characters, and no chunk joins the text on
 * either side of such a cut; a long whitespace run is dropped between chunks instead. No
 * pre-token of a text tokenized here is then longer than 2 * RUN_CHARS + 1 characters.
 */
export const RUN_CHARS = 512;

/**
 * The kinds of run, in the order they are preferred where two start at one character: letters
 * (`\p{L}`, `\p{M}`), other non-space characters (not `\s`, `\p{L}`, `\p{M}`, `\p{N}`), `\r` `\n`
 * `/`, whitespace (`\s`). A character has one bit per kind it belongs to: `/` is OTHER and
 * BREAK, `\n` is BREAK and SPACE, a digit none.
 */
const LETTER = 1;
const OTHER = 2;
const BREAK = 4;
const SPACE = 8;
const KINDS = [LETTER, OTHER, BREAK, SPACE] as const;

function kindOf(ch: string): number {
  if (/\s/u.test(ch)) return SPACE | (ch === '\r' || ch === '\n' ? BREAK : 0);
  if (/[\p{L}\p{M}]/u.test(ch)) return LETTER;
  if (/\p{N}/u.test(ch)) return 0;
  return OTHER | (ch === '/' ? BREAK : 0);
}

const ASCII_KINDS = Uint8Array.from({ length: 128 }, (_, c) => kindOf(String.fromCharCode(c)));

/** Kinds of the code points above ASCII met so far: a text has few distinct ones. Bounded. */
const wideKinds = new Map<number, number>();

function codePointKind(code: number): number {
  if (code < 128) return ASCII_KINDS[code] as number;
  let kind = wideKinds.get(code);
  if (kind === undefined) {
    // A lone surrogate is a code point of its own, of no class but OTHER.
    kind = kindOf(String.fromCodePoint(code));
    if (wideKinds.size < 65_536) wideKinds.set(code, kind);
  }
  return kind;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * The runs longer than RUN_CHARS code points in `text[from, to)`, as (start, end, blank) in
 * order of their starts, none overlapping: where two kinds of run overlap (`/` and `\n` belong
 * to two kinds each) the one that starts first wins, then the kind first in KINDS, and a run
 * that starts inside a chosen one is not taken. `blank` is true for a run of whitespace only.
 *
 * One pass over the characters, with no regular expression over the text: a pattern such as
 * `[\p{L}\p{M}]{513,}` with the `u` flag keeps one backtracking entry per character it takes,
 * and on a run of six million letters V8 gives up with "Maximum call stack size exceeded".
 */
function longRuns(text: string, from: number, to: number): [number, number, boolean][] {
  // Candidates: (start, end, kind index, blank), pushed when each run ends.
  const found: [number, number, number, boolean][] = [];
  const starts: [number, number, number, number] = [0, 0, 0, 0];
  const lengths: [number, number, number, number] = [0, 0, 0, 0];
  let slash = false;
  let previous = 0;
  const close = (k: number, end: number) => {
    if ((lengths[k] as number) > RUN_CHARS) found.push([starts[k] as number, end, k, KINDS[k] === SPACE || (KINDS[k] === BREAK && !slash)]);
  };
  let at = from;
  while (at < to) {
    let code = text.charCodeAt(at);
    let width = 1;
    if (isHighSurrogate(code) && at + 1 < to) {
      const low = text.charCodeAt(at + 1);
      if (isLowSurrogate(low)) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        width = 2;
      }
    }
    const kind = codePointKind(code);
    if (kind !== previous) {
      for (let k = 0; k < KINDS.length; k++) {
        const bit = KINDS[k] as number;
        if (kind & bit && !(previous & bit)) {
          starts[k] = at;
          lengths[k] = 0;
          if (bit === BREAK) slash = false;
        } else if (previous & bit && !(kind & bit)) {
          close(k, at);
        }
      }
      previous = kind;
    }
    // Only kinds the character belongs to grow; the others' lengths no longer matter.
    if (kind & LETTER) lengths[0]++;
    if (kind & OTHER) lengths[1]++;
    if (kind & BREAK) {
      lengths[2]++;
      if (code === 47) slash = true;
    }
    if (kind & SPACE) lengths[3]++;
    at += width;
  }
  for (let k = 0; k < KINDS.length; k++) if (previous & (KINDS[k] as number)) close(k, to);
  if (found.length === 0) return [];
  found.sort((a, b) => a[0] - b[0] || a[2] - b[2]);
  const runs: [number, number, boolean][] = [];
  let taken = from;
  for (const [start, end, , blank] of found) {
    if (start < taken) continue;
    runs.push([start, end, blank]);
    taken = end;
  }
  return runs;
}

/**
 * `text[from, to)` as the spans chunks may be made of: cut inside every run longer than
 * RUN_CHARS (every RUN_CHARS characters, never inside a surrogate pair), long whitespace runs
 * left out. Chunks never cross from one span to the next. Linear in `to - from`, with no
 * recursion and no backtracking.
 */
export function boundedSpans(text: string, from: number, to: number): [number, number][] {
  if (to - from <= RUN_CHARS) return [[from, to]];
  const spans: [number, number][] = [];
  let start = from;
  for (const [runStart, runEnd, blank] of longRuns(text, from, to)) {
    if (blank) {
      spans.push([start, runStart]);
      start = runEnd;
      continue;
    }
    for (let cut = runStart + RUN_CHARS; cut < runEnd; cut += RUN_CHARS) {
      if (isHighSurrogate(text.charCodeAt(cut - 1))) cut++;
      spans.push([start, cut]);
      start = cut;
    }
  }
  spans.push([start, to]);
  return spans;
}
