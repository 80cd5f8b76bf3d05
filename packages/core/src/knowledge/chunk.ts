import { createRequire } from 'node:module';
import { PlatformError } from '../errors.js';
import type { ParsedDocument } from './parse.js';

export interface Chunk {
  /** A contiguous slice of the document text: `doc.text.slice(startOffset, startOffset + text.length)`. */
  readonly text: string;
  /** Position in the document, from 0. */
  readonly index: number;
  /** Tokens of `text` (o200k_base), at most `chunkSize`. */
  readonly tokenCount: number;
  /** The nearest heading above the chunk's content. */
  readonly section?: string;
  /** The page where the chunk starts (pdf). */
  readonly pageNumber?: number;
  /** Offset of `text` in the document text (the overlap carried from the previous chunk included). */
  readonly startOffset: number;
}

export interface ChunkOptions {
  /** Most tokens of a chunk, at least 16. */
  readonly chunkSize: number;
  /** About this many tokens at the end of a chunk start the next one of the same section; less than `chunkSize`. */
  readonly chunkOverlap: number;
}

// ---- tokens -------------------------------------------------------------------------------

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

let encoding: Encoding | undefined;

/**
 * The o200k_base encoding (GPT-4o and later), whose ranks ship inside `gpt-tokenizer`: no
 * download. Loaded on first use (about 150 ms and 80 MB), not when the package is imported.
 */
function tokenizer(): Encoding {
  encoding ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoding;
  return encoding;
}

/** Text that spells a special token (`<|endoftext|>`) is counted as ordinary text, never refused. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/** Tokens of a text by the o200k_base encoding. */
export function countTokens(text: string): number {
  return text ? tokenizer().countTokens(text, PLAIN) : 0;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * The end of the longest span from `from` (before `to`) with at most `max` tokens, at
 * whitespace when there is some in its second half, never inside a surrogate pair. Past `from`.
 */
function fittingEnd(text: string, from: number, to: number, max: number): number {
  // Tokenize a window a few times the size a chunk needs, not the whole (maybe huge) rest: BPE
  // is slow on long runs without whitespace.
  let windowEnd = Math.min(to, from + max * 8);
  let tokens = tokenizer().encode(text.slice(from, windowEnd), PLAIN);
  while (tokens.length <= max && windowEnd < to) {
    windowEnd = Math.min(to, from + (windowEnd - from) * 2);
    tokens = tokenizer().encode(text.slice(from, windowEnd), PLAIN);
  }
  if (tokens.length <= max) return to;
  const fits = (length: number) => countTokens(text.slice(from, from + length)) <= max;
  // First guess: the text of the first `max` tokens. Where a character is split between tokens
  // it decodes as U+FFFD, so only what matches the text counts.
  const decoded = tokenizer().decode(tokens.slice(0, max));
  let length = 0;
  while (length < decoded.length && decoded.charCodeAt(length) === text.charCodeAt(from + length)) length++;
  if (length >= (windowEnd - from) / 8) {
    // Counted on its own a prefix may tokenize differently: shrink until it fits.
    while (length > 1 && !fits(length)) length = Math.floor(length * 0.95);
  } else {
    // The guess broke down early (split multi-byte characters): binary search on the window.
    let lo = 1;
    let hi = windowEnd - from;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (fits(mid)) lo = mid;
      else hi = mid - 1;
    }
    length = lo;
  }
  let cut = from + Math.max(1, length);
  // Prefer ending before a word: the last whitespace in the second half of the span.
  for (let at = cut; at > from + (cut - from) / 2; at--) {
    if (isSpace(text.charCodeAt(at))) {
      cut = at;
      break;
    }
  }
  // Never between the halves of a surrogate pair (a pair is at most 4 tokens, less than `max`).
  if (isHighSurrogate(text.charCodeAt(cut - 1))) cut += cut - from > 1 ? -1 : 1;
  return cut;
}

// ---- pieces -------------------------------------------------------------------------------

/** A span of the document text of at most `chunkSize` tokens, with no whitespace at either end. */
interface Piece {
  readonly start: number;
  readonly end: number;
  readonly tokens: number;
}

/** Boundaries to split at, coarsest first: paragraphs, lines, sentences. A hard cut comes last. */
const SPLITTERS = [/\n[ \t]*\n\s*/g, /\n\s*/g, /(?<=[.!?…]['")\]]*)\s+|(?<=[。！？；]['")\]」』]*)\s*/g];

const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000;

/** Splits `text[start, end)` into pieces of at most `max` tokens, keeping units as big as fit. */
function splitInto(out: Piece[], text: string, start: number, end: number, max: number, level: number): void {
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  if (start >= end) return;
  const span = text.slice(start, end);
  // A span far longer than a chunk is split without counting it first (counting is the cost).
  const tokens = end - start <= max * 16 ? countTokens(span) : Number.POSITIVE_INFINITY;
  if (tokens <= max) {
    out.push({ start, end, tokens });
    return;
  }
  for (let l = level; l < SPLITTERS.length; l++) {
    const splitter = SPLITTERS[l] as RegExp;
    let from = 0;
    let parts = 0;
    for (const m of span.matchAll(splitter)) {
      if (m[0].length === 0 && (m.index === 0 || m.index === span.length)) continue;
      splitInto(out, text, start + from, start + m.index, max, l + 1);
      from = m.index + m[0].length;
      parts++;
    }
    if (parts > 0) {
      splitInto(out, text, start + from, end, max, l + 1);
      return;
    }
  }
  // No boundary at all: hard cuts by tokens, at whitespace where possible.
  let at = start;
  while (at < end) {
    const cut = fittingEnd(text, at, end, max);
    splitInto(out, text, at, cut, max, SPLITTERS.length);
    at = cut;
  }
}

// ---- overlap ------------------------------------------------------------------------------

/** Where sentences (and paragraphs) start in `text[from, to)`; with `lines`, where lines start. */
function startsIn(text: string, from: number, to: number, lines: boolean): number[] {
  const re = lines ? /\n\s*/g : /[.!?…]['")\]]*\s+|[。！？；]['")\]」』]*\s*|\n[ \t]*\n\s*/g;
  const starts: number[] = [];
  for (const m of text.slice(from, to).matchAll(re)) {
    const at = from + m.index + m[0].length;
    if (at > from && at < to && !isSpace(text.charCodeAt(at))) starts.push(at);
  }
  return starts;
}

/**
 * The start of the overlap: the earliest sentence start in `text(from, to)` whose rest has at
 * most `budget` tokens, else the earliest line start, else word start (else character) that
 * does. Undefined when not even a word fits.
 */
function overlapStart(text: string, from: number, to: number, budget: number): number | undefined {
  if (budget <= 0) return undefined;
  const windowFrom = Math.max(from + 1, to - budget * 16);
  const fits = (at: number) => countTokens(text.slice(at, to)) <= budget;
  for (const lines of [false, true]) {
    const starts = startsIn(text, windowFrom - 1, to, lines);
    // Earlier start, more tokens: binary search for the first that fits.
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (fits(starts[mid] as number)) hi = mid;
      else lo = mid + 1;
    }
    if (lo < starts.length) return starts[lo];
  }
  // No whole sentence or line fits: the longest tail within the budget, from a word start.
  let a = windowFrom;
  let b = to - 1;
  if (!fits(b)) return undefined;
  while (a < b) {
    const mid = (a + b) >> 1;
    if (fits(mid)) b = mid;
    else a = mid + 1;
  }
  let at = a;
  const word = text.slice(at, to).search(/\s\S/);
  if (!isSpace(text.charCodeAt(at - 1)) && word >= 0) at += word + 1;
  if (at < to && isHighSurrogate(text.charCodeAt(at - 1))) at++;
  while (at < to && isSpace(text.charCodeAt(at))) at++;
  return at < to ? at : undefined;
}

// ---- chunks -------------------------------------------------------------------------------

/** A heading line alone, with nothing under it before the next heading. */
function onlyHeading(text: string, heading: string): boolean {
  const strip = (s: string) => s.replace(/[\s#=\-*_`]/g, '');
  return strip(text) === strip(heading);
}

/** The page holding `offset`: the last page starting at or before it. */
function pageAt(pages: ParsedDocument['pages'], offset: number): number | undefined {
  if (!pages || pages.length === 0) return undefined;
  let lo = 0;
  let hi = pages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((pages[mid]?.offset ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return pages[lo]?.pageNumber;
}

function validate(options: ChunkOptions): void {
  const { chunkSize, chunkOverlap } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < 16) {
    throw PlatformError.invalid('chunkSize must be an integer of at least 16 tokens', [
      { path: ['chunkSize'], code: 'too_small', message: 'must be an integer of at least 16' },
    ]);
  }
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw PlatformError.invalid('chunkOverlap must be an integer from 0 to chunkSize - 1 tokens', [
      { path: ['chunkOverlap'], code: 'too_big', message: `must be an integer from 0 to ${chunkSize - 1}` },
    ]);
  }
}

/**
 * Splits a parsed document into chunks of at most `chunkSize` tokens (o200k_base). Headings
 * split first (no chunk spans two sections; a heading with nothing under it joins the next
 * one), then paragraphs, lines, sentences, and a hard cut by tokens only for text without any
 * of them. Pieces are packed greedily; the next chunk of the same section starts with the last
 * ~`chunkOverlap` tokens of the previous one, from a sentence start where possible. Each chunk
 * is a slice of `doc.text`, records its nearest heading and (pdf) the page it starts on.
 * Deterministic; no chunk is empty; whitespace-only text gives none.
 */
export function chunkDocument(doc: Pick<ParsedDocument, 'text' | 'sections' | 'pages'>, options: ChunkOptions): Chunk[] {
  validate(options);
  const { chunkSize, chunkOverlap } = options;
  const text = doc.text;
  const chunks: Chunk[] = [];
  if (!/\S/.test(text)) return chunks;

  const headings = doc.sections
    .filter((s) => s.offset >= 0 && s.offset < text.length)
    .map((s, i) => [s, i] as const)
    .sort((a, b) => a[0].offset - b[0].offset || a[1] - b[1])
    .map(([s]) => s);
  // Segments between headings; several headings at one offset make one segment named by the last.
  const segments: { start: number; end: number; heading?: string }[] = [];
  let start = 0;
  let heading: string | undefined;
  for (const h of headings) {
    if (h.offset > start) {
      segments.push({ start, end: h.offset, ...(heading !== undefined ? { heading } : {}) });
      start = h.offset;
    }
    heading = h.heading;
  }
  segments.push({ start, end: text.length, ...(heading !== undefined ? { heading } : {}) });

  let carried: number | undefined;
  for (let s = 0; s < segments.length; s++) {
    const segment = segments[s] as (typeof segments)[number];
    const from = carried ?? segment.start;
    carried = undefined;
    if (segment.heading !== undefined && s + 1 < segments.length && onlyHeading(text.slice(segment.start, segment.end), segment.heading)) {
      carried = from;
      continue;
    }
    packSegment(chunks, doc, from, segment.end, segment.heading, chunkSize, chunkOverlap);
  }
  return chunks;
}

/** Greedy packing of one section's pieces into chunks, with overlap inside the section. */
function packSegment(
  chunks: Chunk[],
  doc: Pick<ParsedDocument, 'text' | 'pages'>,
  from: number,
  to: number,
  section: string | undefined,
  chunkSize: number,
  chunkOverlap: number,
): void {
  const text = doc.text;
  const pieces: Piece[] = [];
  splitInto(pieces, text, from, to, chunkSize, 0);
  // Separators between pieces are whitespace: one token, or more for a long run.
  const gapTokens = (a: number, b: number) => (b - a <= 2 ? 1 : countTokens(text.slice(a, b)));
  let overlap: number | undefined;
  let i = 0;
  while (i < pieces.length) {
    const first = pieces[i] as Piece;
    let begin = first.start;
    let estimate = first.tokens;
    if (overlap !== undefined) {
      const prevEnd = (pieces[i - 1] as Piece).end;
      const room = chunkSize - first.tokens - gapTokens(prevEnd, first.start);
      const at = countTokens(text.slice(overlap, prevEnd)) <= room ? overlap : overlapStart(text, overlap, prevEnd, room);
      if (at !== undefined) {
        begin = at;
        estimate = countTokens(text.slice(begin, first.end));
      }
    }
    // Grow by whole pieces while the estimate (sum of parts) stays within the limit; near the
    // limit the exact count decides, a few times at most.
    let last = i;
    let exact = true;
    let checks = 0;
    while (last + 1 < pieces.length) {
      const next = pieces[last + 1] as Piece;
      const grown = estimate + gapTokens((pieces[last] as Piece).end, next.start) + next.tokens;
      if (grown <= chunkSize) {
        estimate = grown;
        exact = false;
      } else {
        if (checks++ >= 4) break;
        const counted = countTokens(text.slice(begin, next.end));
        if (counted > chunkSize) break;
        estimate = counted;
        exact = true;
      }
      last++;
    }
    let tokenCount = exact ? estimate : countTokens(text.slice(begin, (pieces[last] as Piece).end));
    // The estimate can be short by a token or two where BPE merges across a separator: give
    // back the overlap, then pieces, until the chunk fits.
    while (tokenCount > chunkSize) {
      if (begin < first.start) begin = first.start;
      else if (last > i) last--;
      else break;
      tokenCount = countTokens(text.slice(begin, (pieces[last] as Piece).end));
    }
    const end = (pieces[last] as Piece).end;
    const pageNumber = pageAt(doc.pages, begin);
    chunks.push({
      text: text.slice(begin, end),
      index: chunks.length,
      tokenCount,
      ...(section !== undefined ? { section } : {}),
      ...(pageNumber !== undefined ? { pageNumber } : {}),
      startOffset: begin,
    });
    i = last + 1;
    overlap = chunkOverlap > 0 && i < pieces.length ? overlapStart(text, begin, end, chunkOverlap) : undefined;
  }
}
