/** Words of a text for keyword search: runs of letters and digits, lower-cased (Unicode-aware). */
export function keywordTerms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Okapi BM25 over `docs` for the terms of `query` (k1 1.2, b 0.75, the usual defaults):
 * the reference ranking for adapters without a full-text engine. Best first, only docs
 * containing at least one term.
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
