import { countTokens as count } from 'gpt-tokenizer';
import { PlatformError } from '../errors.js';
import type { ParsedDocument } from './parse.js';

export interface Chunk {
  readonly text: string;
  /** Position in the document, from 0. */
  readonly index: number;
  readonly tokenCount: number;
  /** The nearest heading above the chunk's start. */
  readonly section?: string;
  /** Page of the chunk's start (pdf). */
  readonly pageNumber?: number;
  /** Offset of the chunk's own text (after any overlap) in the document text. */
  readonly startOffset: number;
}

export interface ChunkOptions {
  /** Most tokens of a chunk. */
  readonly chunkSize: number;
  /** Tokens of the previous chunk repeated at the start of the next one (same section only). */
  readonly chunkOverlap: number;
}

/** Tokens of a text by the o200k_base encoding (GPT-4o's tokenizer, shipped in gpt-tokenizer). */
export const countTokens = (text: string): number => count(text);

interface Piece {
  readonly text: string;
  readonly start: number;
  readonly tokens: number;
}

/** Splits `text` (at `start` in the document) into pieces of at most `max` tokens: paragraphs, then sentences, then hard cuts. */
function pieces(text: string, start: number, max: number): Piece[] {
  const out: Piece[] = [];
  const add = (t: string, at: number, level: 0 | 1 | 2) => {
    const trimmed = t.trim();
    if (!trimmed) return;
    const offset = at + t.indexOf(trimmed);
    const tokens = countTokens(trimmed);
    if (tokens <= max) {
      out.push({ text: trimmed, start: offset, tokens });
      return;
    }
    if (level < 2) {
      // Paragraphs, then sentences (end punctuation followed by space, or a line break).
      const splitter = level === 0 ? /\n\s*\n/g : /(?<=[.!?。！？])\s+|\n/g;
      let last = 0;
      let parts = 0;
      for (const m of trimmed.matchAll(splitter)) {
        add(trimmed.slice(last, m.index), offset + last, (level + 1) as 1 | 2);
        last = (m.index as number) + m[0].length;
        parts++;
      }
      if (parts > 0) {
        add(trimmed.slice(last), offset + last, (level + 1) as 1 | 2);
        return;
      }
      if (level === 0) return add(trimmed, offset, 1);
    }
    // Hard cut: the last resort for text without breaks. The longest prefix within the limit
    // (binary search on characters, never splitting a surrogate pair), then the rest.
    let rest = trimmed;
    let at2 = offset;
    while (rest.length > 0) {
      let lo = 1;
      let hi = rest.length;
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        if (countTokens(rest.slice(0, mid)) <= max) lo = mid;
        else hi = mid - 1;
      }
      if (lo < rest.length && /[\uD800-\uDBFF]/.test(rest[lo - 1] as string)) lo = Math.max(1, lo - 1);
      const part = rest.slice(0, lo);
      out.push({ text: part, start: at2, tokens: countTokens(part) });
      rest = rest.slice(lo);
      at2 += lo;
    }
  };
  add(text, start, 0);
  return out;
}

/** The end of `text` worth at most `budget` tokens: whole sentences where possible. */
function tail(text: string, budget: number): string {
  if (budget <= 0) return '';
  const sentences = text.split(/(?<=[.!?。！？])\s+/);
  let taken = '';
  for (let i = sentences.length - 1; i >= 0; i--) {
    const candidate = taken ? `${sentences[i]} ${taken}` : (sentences[i] as string);
    if (countTokens(candidate) > budget) break;
    taken = candidate;
  }
  if (taken) return taken;
  // No sentence fits: the longest suffix within the budget (binary search on characters).
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countTokens(text.slice(text.length - mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(text.length - lo).trimStart();
}

function pageOf(offset: number, pageOffsets: readonly number[] | undefined): number | undefined {
  if (!pageOffsets || pageOffsets.length === 0) return undefined;
  let page = 1;
  for (let i = 0; i < pageOffsets.length; i++) if ((pageOffsets[i] as number) <= offset) page = i + 1;
  return page;
}

/**
 * Splits a parsed document into chunks of at most `chunkSize` tokens: by section (headings)
 * first, then paragraphs, sentences, and a hard cut only for text without any break. Pieces
 * are packed greedily; the next chunk of a section starts with up to `chunkOverlap` tokens of
 * the previous one, at a sentence boundary where possible. Deterministic.
 */
export function chunkDocument(doc: ParsedDocument, options: ChunkOptions): Chunk[] {
  const { chunkSize, chunkOverlap } = options;
  if (!Number.isInteger(chunkSize) || chunkSize < 16) throw PlatformError.invalid('chunkSize: must be an integer of at least 16 tokens');
  if (!Number.isInteger(chunkOverlap) || chunkOverlap < 0 || chunkOverlap >= chunkSize) {
    throw PlatformError.invalid('chunkOverlap: must be an integer from 0 to chunkSize - 1');
  }
  // Sections and pages are boundaries no chunk crosses.
  const bounds = [...new Set([0, ...doc.sections.map((s) => s.offset), ...(doc.pageOffsets ?? []), doc.text.length])].sort((a, b) => a - b);
  const chunks: Chunk[] = [];
  for (let s = 0; s < bounds.length - 1; s++) {
    const from = bounds[s] as number;
    const to = bounds[s + 1] as number;
    if (to <= from) continue;
    const heading = [...doc.sections].reverse().find((h) => h.offset <= from)?.heading;
    let current: Piece[] = [];
    let overlap = '';
    const flush = () => {
      if (current.length === 0) return;
      const body = current.map((p) => p.text).join('\n\n');
      const text = overlap ? `${overlap}\n\n${body}` : body;
      const first = current[0] as Piece;
      const pageNumber = pageOf(first.start, doc.pageOffsets);
      chunks.push({
        text,
        index: chunks.length,
        tokenCount: countTokens(text),
        ...(heading !== undefined ? { section: heading } : {}),
        ...(pageNumber !== undefined ? { pageNumber } : {}),
        startOffset: first.start,
      });
      overlap = chunkOverlap > 0 ? tail(body, chunkOverlap) : '';
      current = [];
    };
    for (const piece of pieces(doc.text.slice(from, to), from, chunkSize)) {
      const candidate = [overlap, ...current.map((p) => p.text), piece.text].filter(Boolean).join('\n\n');
      if (current.length > 0 && countTokens(candidate) > chunkSize) flush();
      if (current.length === 0 && overlap && countTokens(`${overlap}\n\n${piece.text}`) > chunkSize) {
        overlap = tail(overlap, chunkSize - piece.tokens - 2);
        if (overlap && countTokens(`${overlap}\n\n${piece.text}`) > chunkSize) overlap = '';
      }
      current.push(piece);
    }
    flush();
  }
  return chunks;
}
