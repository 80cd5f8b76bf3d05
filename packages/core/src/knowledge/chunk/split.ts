import { countTokens, fittingEnd, isHighSurrogate, isSpace } from '../../tokens.js';

/**
 * Spans of the document text of at most `chunkSize` tokens each, with no whitespace at either
 * end, in order: (start, end, tokens) triples in one growing typed array, as a text can make
 * millions of them (4 MB of `. `) and that many objects kept the garbage collector busy.
 */
export class Pieces {
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

/**
 * Splits `text[start, end)` into pieces of at most `max` tokens, keeping units as big as fit.
 * Recursion goes one level per splitter at most (a span is split at a finer boundary each
 * time), so its depth does not grow with the text.
 */
export function splitInto(out: Pieces, text: string, start: number, end: number, max: number, level: number): void {
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
