/// <reference path="./wink-porter2-stemmer.d.ts" />
import { stopwords } from '@orama/stopwords/english';
import stem from 'wink-porter2-stemmer';

/** Words of a text: runs of letters and digits, lower-cased, diacritics removed (Unicode-aware). */
export function keywordWords(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

const STOP_WORDS: ReadonlySet<string> = new Set(stopwords);
/** Words longer than this are kept as they are (no stemming): no word of a language is, and the stemmer's regexes need not see them. */
const LONGEST_STEMMED = 40;
const stems = new Map<string, string>();

function stemOf(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    s = word.length > LONGEST_STEMMED || /\p{N}/u.test(word) ? word : stem(word);
    // A bounded memo: texts repeat their words, but a stream of distinct tokens must not grow it without end.
    if (stems.size >= 100_000) stems.clear();
    stems.set(word, s);
  }
  return s;
}

/**
 * The terms keyword search indexes and matches: the text's words (see `keywordWords`) less
 * English stop words (the 180 of `@orama/stopwords`), each reduced to its Porter2 (Snowball
 * English) stem by `wink-porter2-stemmer`, so "studies", "studied" and "study" meet. Words with
 * digits are kept whole ("p53", "2019"). Chosen by measurement on BEIR SciFact: see
 * docs/BENCHMARKS.md, "retrieval".
 */
export function keywordTerms(text: string): string[] {
  const out: string[] = [];
  for (const word of keywordWords(text)) if (!STOP_WORDS.has(word)) out.push(stemOf(word));
  return out;
}

/**
 * Okapi BM25 over `docs` for the terms of `query` (k1 1.2, b 0.75, the usual defaults; idf as
 * Lucene's): the reference ranking for adapters without a full-text engine. Each distinct query
 * term counts once. Best first, only docs containing at least one term.
 */
export function bm25Rank(
  docs: readonly { readonly id: string; readonly text: string }[],
  query: string,
  limit: number,
): { id: string; score: number }[] {
  const terms = [...new Set(keywordTerms(query))];
  if (terms.length === 0 || docs.length === 0) return [];
  const tokenized = docs.map((d) => keywordTerms(d.text));
  const avgLength = tokenized.reduce((sum, t) => sum + t.length, 0) / docs.length || 1;
  const docFreq = new Map<string, number>();
  for (const tokens of tokenized) {
    for (const term of new Set(tokens)) if (terms.includes(term)) docFreq.set(term, (docFreq.get(term) ?? 0) + 1);
  }
  const k1 = 1.2;
  const b = 0.75;
  const scored: { id: string; score: number }[] = [];
  tokenized.forEach((tokens, i) => {
    let score = 0;
    for (const term of terms) {
      const df = docFreq.get(term);
      if (!df) continue;
      let tf = 0;
      for (const t of tokens) if (t === term) tf++;
      if (tf === 0) continue;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * tokens.length) / avgLength));
    }
    if (score > 0) scored.push({ id: (docs[i] as { id: string }).id, score });
  });
  return scored.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)).slice(0, limit);
}
