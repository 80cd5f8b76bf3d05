import { describe, expect, it } from 'vitest';
import { bm25Rank, keywordTerms, keywordWords } from '../src/knowledge/keywords.js';
import { dot, fuseHybrid, mmrSelect, relatedness, similarityScore } from '../src/knowledge/search.js';

const unit = (...xs: number[]) => {
  const n = Math.hypot(...xs);
  return Float32Array.from(xs, (x) => x / n);
};

describe('keyword analysis', () => {
  it('splits into lower-case words without accents, across scripts', () => {
    expect(keywordWords('Café-Zürich, naïve: 3.5 µg/ml; ДНК')).toEqual(['cafe', 'zurich', 'naive', '3', '5', 'μg', 'ml', 'днк']);
  });

  it('drops English stop words and reduces words to their Porter2 stems', () => {
    expect(keywordTerms('The studies of these inhibitors were running')).toEqual(['studi', 'inhibitor', 'run']);
    expect(keywordTerms('studied')).toEqual(keywordTerms('study'));
    expect(keywordTerms('generously')).toEqual(['generous']);
    // Words with digits stay whole: codes and numbers are matched exactly.
    expect(keywordTerms('p53 cells in 2019s')).toEqual(['p53', 'cell', '2019s']);
    expect(keywordTerms('the and of it')).toEqual([]);
  });

  it('drops "a" and whole contractions, with straight or typographic apostrophes', () => {
    // "a" is no stop word in @orama/stopwords; without it every question with "a" matched any text with one.
    expect(keywordTerms('What is a dog?')).toEqual(['dog']);
    expect(keywordTerms('Write a poem')).toEqual(['write', 'poem']);
    expect(keywordTerms('Tell me a joke about cats')).toEqual(['tell', 'joke', 'cat']);
    // Contractions are one word each (stop words), not "don" + "t" or "it" + "s".
    expect(keywordWords("Don't, it’s")).toEqual(["don't", "it's"]);
    expect(keywordTerms("I don't think it’s shipped, we'd say")).toEqual(['think', 'ship', 'say']);
    // Other words with an apostrophe: the possessive goes, the parts are matched as before.
    expect(keywordTerms("the children's cells' O'Brien")).toEqual(['children', 'cell', 'o', 'brien']);
  });
});

describe('bm25Rank', () => {
  const corpus = [
    { id: 'shoes', text: 'Running shoes for runners: a runner needs good shoes' },
    { id: 'weather', text: 'The weather was good for a run in the park' },
    { id: 'cooking', text: 'Cooking pasta: boil water, add salt' },
    { id: 'stopwords', text: 'the the the of of and and it is' },
  ];

  it('ranks by BM25 over stems: word forms meet, rarer and repeated terms weigh more', () => {
    // "run" occurs (as running/run) in two texts, "shoe" in one, twice: shoes first.
    expect(bm25Rank(corpus, 'run in new shoe', 10).map((r) => r.id)).toEqual(['shoes', 'weather']);
    expect(bm25Rank(corpus, 'boiled pastas', 10).map((r) => r.id)).toEqual(['cooking']);
  });

  it('matches nothing on a query of stop words, and honours the limit', () => {
    expect(bm25Rank(corpus, 'the and of it is', 10)).toEqual([]);
    expect(bm25Rank(corpus, 'run', 1)).toHaveLength(1);
  });

  it('scores against the best the query could score, not the best hit: a weak match stays weak', () => {
    const shop = [
      { id: 'refunds', text: 'Refunds: we refund purchases within 30 days of delivery. Send the item back with the receipt.' },
      { id: 'shipping', text: 'Shipping: orders leave the warehouse within two working days; express delivery arrives the next day.' },
    ];
    // No word of these questions is in the texts ("a" was, before it was a stop word).
    for (const question of ['Tell me a joke about cats', 'What is a dog?', 'Write a poem']) expect(bm25Rank(shop, question, 10)).toEqual([]);
    // Each text holds one of the two terms: neither is a good match (min-max scaled the better to 1).
    const split = bm25Rank(shop, 'receipt express', 10);
    expect(split.map((h) => h.id).sort()).toEqual(['refunds', 'shipping']);
    for (const hit of split) expect(hit.score).toBeLessThan(0.3);
    // Both terms in one text, once each: about half the ceiling (k1 + 1 = 2.2 per term at most).
    const both = bm25Rank(shop, 'receipt refund', 10);
    expect(both[0]).toMatchObject({ id: 'refunds' });
    expect(both[0]?.score).toBeGreaterThan(0.4);
    expect(both[0]?.score).toBeLessThan(1);
  });

  it('gives the same match the same score whatever else the list holds; what the question asks beyond it lowers it', () => {
    const base = [
      { id: 'a', text: 'The pump overheated and stopped' },
      { id: 'b', text: 'Garden tools and a watering can' },
    ];
    const score = (docs: typeof base, query: string, id: string) => bm25Rank(docs, query, 10).find((h) => h.id === id)?.score as number;
    // A question also asking for "garden" (which another text holds): the pump text answers half of it.
    expect(score(base, 'pump garden', 'a')).toBeLessThan(score(base, 'pump', 'a') * 0.6);
    // A word no text holds cannot be matched by any: it changes nothing (the semantic side judges it).
    expect(score(base, 'pump zebra', 'a')).toBeCloseTo(score(base, 'pump', 'a'), 10);
    // A better hit elsewhere in the list does not push it to 0 (min-max did).
    const more = [...base, { id: 'c', text: 'Pump pump pump: the pump manual' }];
    expect(score(more, 'pump', 'c')).toBeGreaterThan(score(more, 'pump', 'a'));
    expect(score(more, 'pump', 'a')).toBeGreaterThan(0.2);
  });
});

describe('similarityScore and relatedness', () => {
  const scale = { unrelated: 0.2, related: 0.7 };

  it("read a cosine similarity on the model's scale: unrelated and below are 0", () => {
    expect(similarityScore(0.2, scale)).toBe(0);
    expect(similarityScore(-0.5, scale)).toBe(0);
    expect(similarityScore(0.6, scale)).toBeCloseTo(0.5, 10);
    expect(similarityScore(1, scale)).toBe(1);
    // Relatedness reaches 1 at `related`: from there a keyword match counts in full.
    expect(relatedness(0.45, scale)).toBeCloseTo(0.5, 10);
    expect(relatedness(0.7, scale)).toBe(1);
    expect(relatedness(0.9, scale)).toBe(1);
    expect(relatedness(0.1, scale)).toBe(0);
    // A model without a scale: no similarity is unrelated, a match counts in full from 0.5.
    expect(similarityScore(0.3)).toBeCloseTo(0.3, 10);
    expect(relatedness(0.3)).toBeCloseTo(0.6, 10);
  });
});

describe('fuseHybrid (calibrated scores)', () => {
  const scale = { unrelated: 0.2, related: 0.7 };
  // Cosine similarities to the question, and keyword scores against its ceiling.
  const cosines = new Map([
    ['x', 0.68],
    ['y', 0.6],
    ['z', 0.45],
    ['w', 0.22],
  ]);
  const keyword = new Map([
    ['z', 0.6],
    ['y', 0.45],
    ['w', 0.9],
  ]);
  const fused = (alpha: number) => fuseHybrid(cosines, keyword, alpha, scale);

  it('at alpha 0 is the keyword score, at 1 the similarity score', () => {
    expect(fused(0)).toEqual(
      new Map([
        ['x', 0],
        ['y', 0.45],
        ['z', 0.6],
        ['w', 0.9],
      ]),
    );
    for (const [id, cosine] of cosines) expect(fused(1).get(id)).toBeCloseTo(similarityScore(cosine, scale), 10);
  });

  it('counts a keyword match only as far as the text is on the subject', () => {
    const at = fused(0.15);
    // y: related (0.8), its keyword 0.45 counts in full: 0.15 · 0.5 + 0.85 · 0.45
    expect(at.get('y')).toBeCloseTo(0.15 * 0.5 + 0.85 * 0.45, 10);
    // z: half related (0.5), its keyword 0.6 counts 0.5
    expect(at.get('z')).toBeCloseTo(0.15 * 0.3125 + 0.85 * 0.5, 10);
    // w: the best keyword match (a one-word question's word), but hardly related: low.
    expect(at.get('w')).toBeCloseTo(0.15 * 0.025 + 0.85 * 0.04, 10);
    expect([...at].sort((a, b) => b[1] - a[1]).map(([id]) => id)).toEqual(['z', 'y', 'x', 'w']);
  });

  it('stretches nothing: a lone weak match stays weak, and no list has a 1.0 by construction', () => {
    // Min-max scaling made the best (here: the only) candidate of each side 1.
    expect(fuseHybrid(new Map([['only', 0.3]]), new Map([['only', 0.08]]), 0.15, scale).get('only')).toBeCloseTo(0.15 * 0.125 + 0.85 * 0.08, 10);
    // A similarity unknown (no vector): the keyword score alone, weighted.
    expect(fuseHybrid(new Map(), new Map([['old', 0.5]]), 0.15, scale).get('old')).toBeCloseTo(0.425, 10);
  });

  it('keeps every score in 0..1', () => {
    for (const alpha of [0, 0.15, 0.5, 1]) {
      for (const score of fuseHybrid(
        new Map([
          ['a', -1],
          ['b', 1],
        ]),
        new Map([
          ['a', 1],
          ['b', 1],
          ['c', 0.001],
        ]),
        alpha,
        scale,
      ).values()) {
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }
    }
  });
});

describe('mmrSelect', () => {
  it('picks the most relevant first, then a diverse one over a near-duplicate', () => {
    const candidates = [
      { id: 'a', vector: unit(1, 0, 0), relevance: 0.9 },
      { id: 'a2', vector: unit(1, 0.05, 0), relevance: 0.89 },
      { id: 'b', vector: unit(0, 1, 0), relevance: 0.6 },
    ];
    expect(mmrSelect(candidates, 2, 0.5).map((c) => c.id)).toEqual(['a', 'b']);
    expect(mmrSelect(candidates, 2, 1).map((c) => c.id)).toEqual(['a', 'a2']);
  });

  it('chooses exactly what the textbook greedy selection chooses', () => {
    // The reference recomputes every candidate's max similarity to all picks at every step.
    const reference = <T extends { vector: Float32Array; relevance: number }>(cs: T[], k: number, lambda: number) => {
      const picked: T[] = [];
      const left = [...cs];
      while (picked.length < k && left.length > 0) {
        const value = (c: T) => lambda * c.relevance - (1 - lambda) * Math.max(0, ...picked.map((p) => dot(c.vector, p.vector)));
        let best = 0;
        for (let i = 1; i < left.length; i++) if (value(left[i] as T) > value(left[best] as T)) best = i;
        picked.push(left.splice(best, 1)[0] as T);
      }
      return picked;
    };
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647 - 0.5;
    };
    const candidates = Array.from({ length: 60 }, (_, i) => ({ id: `c${i}`, vector: unit(...Array.from({ length: 8 }, random)), relevance: 0.5 + random() }));
    for (const lambda of [0.3, 0.5, 0.7]) {
      expect(mmrSelect(candidates, 20, lambda).map((c) => c.id)).toEqual(reference(candidates, 20, lambda).map((c) => c.id));
    }
  });
});
