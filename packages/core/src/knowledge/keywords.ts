/// <reference path="./wink-porter2-stemmer.d.ts" />
import { stopwords } from '@orama/stopwords/english';
import stem from 'wink-porter2-stemmer';

/**
 * Words of a text: runs of letters and digits, lower-cased, diacritics removed (Unicode-aware).
 * An apostrophe between letters (straight or typographic) stays inside its word, so "don't"
 * and "it's" are one word each (and stop words), not "don" + "t".
 */
export function keywordWords(text: string): string[] {
  return (
    text
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+(?:['\u2019][\p{L}\p{N}]+)*/gu)
      ?.map((word) => word.replace(/\u2019/g, "'")) ?? []
  );
}

/**
 * English stop words: the 180 of `@orama/stopwords` (which lack the article "a") and "a". Its
 * contractions ("don't", "it's") are matched whole, as `keywordWords` keeps them.
 */
const STOP_WORDS: ReadonlySet<string> = new Set([...stopwords, 'a']);
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
 * English stop words (see `STOP_WORDS`), each reduced to its Porter2 (Snowball
 * English) stem by `wink-porter2-stemmer`, so "studies", "studied" and "study" meet. Words with
 * digits are kept whole ("p53", "2019"). Chosen by measurement on BEIR SciFact: see
 * docs/BENCHMARKS.md, "retrieval".
 */
export function keywordTerms(text: string): string[] {
  const out: string[] = [];
  for (const word of keywordWords(text)) {
    if (STOP_WORDS.has(word)) continue;
    if (!word.includes("'")) {
      out.push(stemOf(word));
      continue;
    }
    // Any other word with an apostrophe: the possessive goes ("cell's" → "cell"), and the rest
    // are matched as the parts it joins ("o'brien" → "o", "brien"), as before apostrophes
    // were kept: the index's terms never hold one.
    for (const part of word.replace(/'s$/, '').split("'")) if (!STOP_WORDS.has(part)) out.push(stemOf(part));
  }
  return out;
}

/** BM25's term frequency saturation and length normalisation: the usual defaults, as SQLite FTS5's `bm25()`. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * The most a query can score in BM25, the measure keyword scores are given against: each
 * distinct term's idf times (k1 + 1), the limit of its contribution as its count in a chunk
 * grows. `idfs` holds one idf per distinct query term, those of terms no chunk holds included.
 */
export const bm25Ceiling = (idfs: Iterable<number>): number => {
  let sum = 0;
  for (const idf of idfs) sum += idf * (BM25_K1 + 1);
  return sum;
};

/** A BM25 score against the query's ceiling (`bm25Ceiling`), in 0..1. */
export const bm25Relative = (score: number, ceiling: number): number => (ceiling > 0 ? Math.min(1, Math.max(0, score / ceiling)) : 0);

/**
 * Okapi BM25 over `docs` for the terms of `query` (k1 1.2, b 0.75, the usual defaults; idf as
 * Lucene's, `ln(1 + (N − n + 0.5) / (n + 0.5))`): the reference ranking for adapters without a
 * full-text engine. Each distinct query term counts once. Best first, only docs containing at
 * least one term; each score is measured against the query's ceiling (`bm25Relative`), so in
 * 0..1.
 */
export function bm25Rank(docs: readonly { readonly id: string; readonly text: string }[], query: string, limit: number): { id: string; score: number }[] {
  const terms = [...new Set(keywordTerms(query))];
  if (terms.length === 0 || docs.length === 0) return [];
  const tokenized = docs.map((d) => keywordTerms(d.text));
  const avgLength = tokenized.reduce((sum, t) => sum + t.length, 0) / docs.length || 1;
  const docFreq = new Map<string, number>();
  for (const tokens of tokenized) {
    for (const term of new Set(tokens)) if (terms.includes(term)) docFreq.set(term, (docFreq.get(term) ?? 0) + 1);
  }
  // The query's ceiling counts the terms some doc holds: no doc can match the others.
  const idf = new Map([...docFreq].map(([term, df]) => [term, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))] as const));
  const ceiling = bm25Ceiling(idf.values());
  const scored: { id: string; score: number }[] = [];
  tokenized.forEach((tokens, i) => {
    let score = 0;
    for (const [term, termIdf] of idf) {
      let tf = 0;
      for (const t of tokens) if (t === term) tf++;
      if (tf === 0) continue;
      score += (termIdf * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * tokens.length) / avgLength));
    }
    if (score > 0) scored.push({ id: (docs[i] as { id: string }).id, score: bm25Relative(score, ceiling) });
  });
  return scored.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)).slice(0, limit);
}
