import { createRequire } from 'node:module';
import { PlatformError } from '../errors.js';
import { limitExceeded } from './limits.js';
import { boundedSpans } from './long-runs.js';
import type { ParsedDocument } from './parse/index.js';

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
  /** The page where the chunk ends (pdf): `pageNumber` itself for a chunk on one page, a later page for one that spans pages. */
  readonly pageEnd?: number;
  /** Offset of `text` in the document text (the overlap carried from the previous chunk included). */
  readonly startOffset: number;
}

export interface ChunkOptions {
  /** Most tokens of a chunk, at least 16. */
  readonly chunkSize: number;
  /** About this many tokens at the end of a chunk start the next one of the same section; less than `chunkSize`. */
  readonly chunkOverlap: number;
  /** Most chunks: a document that makes more fails with `payload_too_large` naming the `maxChunks` limit. Default: no limit. */
  readonly maxChunks?: number;
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

/**
 * Characters tokenized between two emptyings of the tokenizer's merge cache. gpt-tokenizer keeps
 * the tokens of up to 100,000 pre-tokens in a Map and, once it is full, deletes the oldest entry
 * for each new one; V8 leaves a deleted entry's slot in place until the Map is rebuilt, and
 * finding the oldest walks over all of them. On text whose pre-tokens rarely repeat (random
 * base64) that made tokenizing quadratic: 6 million characters took 28 s of CPU instead of 5.
 * A pre-token is at least a character, so emptied this often the cache never fills (and
 * never evicts), while ordinary text still finds its repeated words in it.
 */
const MERGE_CACHE_WINDOW = 50_000;
let tokenizedSinceEmptied = 0;

/** The tokenizer, about to tokenize `chars` characters. */
function tokenizing(chars: number): Encoding {
  const encoding = tokenizer();
  tokenizedSinceEmptied += chars;
  if (tokenizedSinceEmptied > MERGE_CACHE_WINDOW) {
    encoding.clearMergeCache();
    tokenizedSinceEmptied = chars;
  }
  return encoding;
}

/** Text that spells a special token (`<|endoftext|>`) is counted as ordinary text, never refused. */
const PLAIN = { disallowedSpecial: new Set<string>() };

/**
 * Counts of short texts, which chunking asks for again and again (a sentence, a list item, a
 * separator): a Map lookup instead of the tokenizer's per-call work. Dropped when full.
 */
const shortCounts = new Map<string, number>();
const SHORT_TEXT = 24;

/** Tokens of a text by the o200k_base encoding. */
export function countTokens(text: string): number {
  if (!text) return 0;
  if (text.length > SHORT_TEXT) return tokenizing(text.length).countTokens(text, PLAIN);
  let count = shortCounts.get(text);
  if (count === undefined) {
    count = tokenizing(text.length).countTokens(text, PLAIN);
    if (shortCounts.size >= 65_536) shortCounts.clear();
    shortCounts.set(text, count);
  }
  return count;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Longest o200k_base token, in characters (128 spaces): `max` tokens never span more than `max * MAX_TOKEN_CHARS`. */
const MAX_TOKEN_CHARS = 128;

/**
 * The end of a long span from `from` (before `to`) with at most `max` tokens, at whitespace
 * when there is some in its second half, never inside a surrogate pair. Past `from`.
 */
function fittingEnd(text: string, from: number, to: number, max: number): number {
  // Tokenize a window a few times the size a chunk needs, not the whole (maybe huge) rest, and
  // never more than `max` of the longest tokens could cover. Five characters a token covers
  // `max` tokens of most text at once (prose has about 4.5; minified code and base64, which
  // reach here for want of whitespace, 2 to 3): a wider first window made 6 million characters
  // of base64 take half again as long, all of it tokenizing text that is cut off.
  const cap = Math.min(to, from + max * MAX_TOKEN_CHARS);
  let windowEnd = Math.min(cap, from + max * 5);
  let tokens = tokenizing(windowEnd - from).encode(text.slice(from, windowEnd), PLAIN);
  while (tokens.length <= max && windowEnd < cap) {
    windowEnd = Math.min(cap, from + (windowEnd - from) * 2);
    tokens = tokenizing(windowEnd - from).encode(text.slice(from, windowEnd), PLAIN);
  }
  if (tokens.length <= max && windowEnd === to) return to;
  const fits = (length: number) => countTokens(text.slice(from, from + length)) <= max;
  let length: number;
  if (tokens.length <= max) {
    length = windowEnd - from;
  } else {
    // First guess: the text of the first `max` tokens. Where a character is split between
    // tokens it decodes as U+FFFD, so only what matches the text counts.
    const decoded = tokenizer().decode(tokens.slice(0, max));
    length = 0;
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

/**
 * Spans of the document text of at most `chunkSize` tokens each, with no whitespace at either
 * end, in order: (start, end, tokens) triples in one growing typed array, as a text can make
 * millions of them (4 MB of `. `) and that many objects kept the garbage collector busy.
 */
class Pieces {
  #data = new Int32Array(3 * 1024);
  length = 0;

  push(start: number, end: number, tokens: number): void {
    if (3 * this.length + 3 > this.#data.length) {
      const grown = new Int32Array(this.#data.length * 2);
      grown.set(this.#data);
      this.#data = grown;
    }
    const at = 3 * this.length++;
    this.#data[at] = start;
    this.#data[at + 1] = end;
    this.#data[at + 2] = tokens;
  }

  start(i: number): number {
    return this.#data[3 * i] as number;
  }

  end(i: number): number {
    return this.#data[3 * i + 1] as number;
  }

  tokens(i: number): number {
    return this.#data[3 * i + 2] as number;
  }
}

/** Boundaries to split at, coarsest first: paragraphs, lines, sentences. A hard cut comes last. */
const SPLITTERS = [/\n[ \t]*\n\s*/g, /\n\s*/g, /(?<=[.!?…]['")\]]*)\s+|(?<=[。！？；]['")\]」』]*)\s*/g];

const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000;

/**
 * Splits `text[start, end)` into pieces of at most `max` tokens, keeping units as big as fit.
 * Recursion goes one level per splitter at most (a span is split at a finer boundary each
 * time), so its depth does not grow with the text.
 */
function splitInto(out: Pieces, text: string, start: number, end: number, max: number, level: number): void {
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  if (start >= end) return;
  const span = text.slice(start, end);
  // A span far longer than a chunk is split without counting it first (counting is the cost).
  const tokens = end - start <= max * 16 ? countTokens(span) : Number.POSITIVE_INFINITY;
  if (tokens <= max) {
    out.push(start, end, tokens);
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
  hardCut(out, text, start, end, max);
}

/** Cuts text without any boundary by tokens, at whitespace where possible: each piece is counted once and pushed as it is. */
function hardCut(out: Pieces, text: string, start: number, end: number, max: number): void {
  let at = start;
  while (at < end) {
    while (at < end && isSpace(text.charCodeAt(at))) at++;
    if (at >= end) return;
    let cut = fittingEnd(text, at, end, max);
    let last = cut;
    while (last > at && isSpace(text.charCodeAt(last - 1))) last--;
    let tokens = countTokens(text.slice(at, last));
    if (tokens > max) {
      // Rare: a prefix that tokenizes into more tokens than the span it was measured in. Halve
      // until it fits (a single character is at most 4 tokens, fewer than `max`).
      while (tokens > max && last - at > 1) {
        last = at + Math.max(1, (last - at) >> 1);
        if (isHighSurrogate(text.charCodeAt(last - 1))) last++;
        tokens = countTokens(text.slice(at, last));
      }
      cut = last;
    }
    out.push(at, last, tokens);
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

/** Characters a heading line may have around its text: whitespace and markup. */
const isHeadingMark = (code: number) => isSpace(code) || code === 35 || code === 61 || code === 45 || code === 42 || code === 95 || code === 96;

/** A heading line alone, with nothing under it before the next heading: `text[from, to)` less markup is the heading less markup. */
function onlyHeading(text: string, from: number, to: number, heading: string): boolean {
  let h = 0;
  for (let at = from; at < to; at++) {
    const code = text.charCodeAt(at);
    if (isHeadingMark(code)) continue;
    while (h < heading.length && isHeadingMark(heading.charCodeAt(h))) h++;
    if (h >= heading.length || heading.charCodeAt(h) !== code) return false;
    h++;
  }
  while (h < heading.length && isHeadingMark(heading.charCodeAt(h))) h++;
  return h === heading.length;
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
 * is a slice of `doc.text`, records its nearest heading and (pdf) the pages it starts and ends on.
 * Deterministic; no chunk is empty; whitespace-only text gives none. A run of more than 512
 * letters (or punctuation, or whitespace) ends a chunk every 512 characters (see RUN_CHARS in long-runs.ts).
 *
 * Time is linear in the length of the text: every character is tokenized a bounded number of
 * times, no pre-token is longer than about 1,000 characters, and recursion is at most one
 * level per kind of boundary.
 */
export function chunkDocument(doc: Pick<ParsedDocument, 'text' | 'sections' | 'pages'>, options: ChunkOptions): Chunk[] {
  validate(options);
  const text = doc.text;
  const chunks: Chunk[] = [];
  if (!/\S/.test(text)) return chunks;

  let headings = doc.sections.filter((s) => s.offset >= 0 && s.offset < text.length);
  // Parsers give them in order; a stable sort (ties keep their order) for those that do not.
  if (headings.some((s, i) => i > 0 && s.offset < (headings[i - 1] as (typeof headings)[number]).offset)) {
    headings = headings
      .map((s, i) => [s, i] as const)
      .sort((a, b) => a[0].offset - b[0].offset || a[1] - b[1])
      .map(([s]) => s);
  }
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
    if (segment.heading !== undefined && s + 1 < segments.length && onlyHeading(text, segment.start, segment.end, segment.heading)) {
      carried = from;
      continue;
    }
    for (const [spanStart, spanEnd] of boundedSpans(text, from, segment.end)) packSegment(chunks, doc, spanStart, spanEnd, segment.heading, options);
  }
  return chunks;
}

/** Greedy packing of the pieces of one span of a section into chunks, with overlap inside the span. */
function packSegment(
  chunks: Chunk[],
  doc: Pick<ParsedDocument, 'text' | 'pages'>,
  from: number,
  to: number,
  section: string | undefined,
  { chunkSize, chunkOverlap, maxChunks = Number.POSITIVE_INFINITY }: ChunkOptions,
): void {
  const text = doc.text;
  const pieces = new Pieces();
  splitInto(pieces, text, from, to, chunkSize, 0);
  // Separators between pieces are whitespace: one token, or more for a long run.
  const gapTokens = (a: number, b: number) => (b - a <= 2 ? 1 : countTokens(text.slice(a, b)));
  let overlap: number | undefined;
  let i = 0;
  while (i < pieces.length) {
    const firstStart = pieces.start(i);
    let begin = firstStart;
    let estimate = pieces.tokens(i);
    if (overlap !== undefined) {
      const prevEnd = pieces.end(i - 1);
      const room = chunkSize - pieces.tokens(i) - gapTokens(prevEnd, firstStart);
      const at = countTokens(text.slice(overlap, prevEnd)) <= room ? overlap : overlapStart(text, overlap, prevEnd, room);
      if (at !== undefined) {
        begin = at;
        estimate = countTokens(text.slice(begin, pieces.end(i)));
      }
    }
    // Grow by whole pieces while the estimate (sum of parts) stays within the limit; near the
    // limit the exact count decides, a few times at most.
    let last = i;
    let exact = true;
    let checks = 0;
    while (last + 1 < pieces.length) {
      const grown = estimate + gapTokens(pieces.end(last), pieces.start(last + 1)) + pieces.tokens(last + 1);
      if (grown <= chunkSize) {
        estimate = grown;
        exact = false;
      } else {
        if (checks++ >= 4) break;
        const counted = countTokens(text.slice(begin, pieces.end(last + 1)));
        if (counted > chunkSize) break;
        estimate = counted;
        exact = true;
      }
      last++;
    }
    const count = (upTo: number) => countTokens(text.slice(begin, pieces.end(upTo)));
    let tokenCount = exact ? estimate : count(last);
    // The estimate can be short where BPE merges across a separator: give back the overlap,
    // then the fewest pieces (found by binary search, not one count per piece) until it fits.
    if (tokenCount > chunkSize && begin < firstStart) {
      begin = firstStart;
      tokenCount = count(last);
    }
    if (tokenCount > chunkSize && last > i) {
      let lo = i;
      let hi = last - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (count(mid) <= chunkSize) lo = mid;
        else hi = mid - 1;
      }
      last = lo;
      tokenCount = count(last);
    }
    if (chunks.length >= maxChunks) throw limitExceeded('maxChunks', `the document makes more than ${maxChunks} chunks of ${chunkSize} tokens`, maxChunks);
    const end = pieces.end(last);
    const pageNumber = pageAt(doc.pages, begin);
    const pageEnd = pageAt(doc.pages, end - 1);
    chunks.push({
      text: text.slice(begin, end),
      index: chunks.length,
      tokenCount,
      ...(section !== undefined ? { section } : {}),
      ...(pageNumber !== undefined && pageEnd !== undefined ? { pageNumber, pageEnd } : {}),
      startOffset: begin,
    });
    i = last + 1;
    overlap = chunkOverlap > 0 && i < pieces.length ? overlapStart(text, begin, end, chunkOverlap) : undefined;
  }
}
