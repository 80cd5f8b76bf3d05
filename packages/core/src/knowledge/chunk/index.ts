import { PlatformError } from '../../errors.js';
import { isSpace } from '../../tokens.js';
import { boundedSpans } from '../long-runs.js';
import type { ParsedDocument } from '../parse/index.js';
import { type Chunk, type ChunkOptions, packSegment } from './pack.js';

export { countTokens } from '../../tokens.js';
export type { Chunk, ChunkOptions } from './pack.js';

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

function validate(options: ChunkOptions): void {
  const { chunkSize, chunkOverlap } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < 16) {
    throw PlatformError.invalid('chunkSize must be an integer of at least 16 tokens', [{ path: ['chunkSize'], code: 'too_small', message: 'must be an integer of at least 16' }]);
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
