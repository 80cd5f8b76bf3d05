import { createRequire } from 'node:module';

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

export const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** Whitespace, as chunks are cut: ASCII whitespace, no-break space and the ideographic space. */
export const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000;

/** Longest o200k_base token, in characters (128 spaces): `max` tokens never span more than `max * MAX_TOKEN_CHARS`. */
const MAX_TOKEN_CHARS = 128;

/**
 * The end of a long span from `from` (before `to`) with at most `max` tokens, at whitespace
 * when there is some in its second half, never inside a surrogate pair. Past `from`.
 */
export function fittingEnd(text: string, from: number, to: number, max: number): number {
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
