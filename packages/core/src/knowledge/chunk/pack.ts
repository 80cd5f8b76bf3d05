import { countTokens, isHighSurrogate, isSpace } from '../../tokens.js';
import { limitExceeded } from '../limits.js';
import type { ParsedDocument } from '../parse/index.js';
import { Pieces, splitInto } from './split.js';

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

/** Greedy packing of the pieces of one span of a section into chunks, with overlap inside the span. */
export function packSegment(
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
