import { describe, expect, it } from 'vitest';
import { bm25Rank, keywordTerms, keywordWords } from '../src/knowledge/keywords.js';
import { dot, fuseHybrid, minMaxScale, mmrSelect } from '../src/knowledge/search.js';

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
});

describe('minMaxScale', () => {
  it('maps the best to 1 and the worst to 0; equal scores all to 1', () => {
    expect(minMaxScale(new Map([['a', 4], ['b', 2], ['c', 3]]))).toEqual(new Map([['a', 1], ['b', 0], ['c', 0.5]]));
    expect(minMaxScale(new Map([['a', 0.3]]))).toEqual(new Map([['a', 1]]));
    expect(minMaxScale(new Map())).toEqual(new Map());
  });
});

describe('fuseHybrid (relative score fusion)', () => {
  // Semantic prefers x > y > z; keyword prefers z > y, and has not found x.
  const semantic = new Map([['x', 0.62], ['y', 0.58], ['z', 0.5]]);
  const keyword = new Map([['z', 12], ['y', 9], ['w', 3]]);
  const order = (alpha: number) => [...fuseHybrid(semantic, keyword, alpha)].sort((a, b) => b[1] - a[1]).map(([id]) => id);

  it('at alpha 0 follows the keyword side, at 1 the semantic side', () => {
    // The worst of a side scales to 0, as does a chunk that side has not found.
    expect(order(0).slice(0, 2)).toEqual(['z', 'y']);
    expect(order(1).slice(0, 2)).toEqual(['x', 'y']);
  });

  it('in between, a chunk good on both sides beats one that is best on one side only', () => {
    // scaled: semantic x 1, y 0.67, z 0; keyword z 1, y 0.67, w 0 → at 0.5: y 0.67, x 0.5, z 0.5
    expect(order(0.5)[0]).toBe('y');
    const fused = fuseHybrid(semantic, keyword, 0.5);
    expect(fused.get('y')).toBeCloseTo(2 / 3, 10);
    expect(fused.get('x')).toBeCloseTo(0.5, 10);
    expect(fused.get('w')).toBe(0);
  });

  it('keeps every score in 0..1, whatever the raw scales', () => {
    for (const alpha of [0, 0.15, 0.5, 1]) {
      for (const score of fuseHybrid(new Map([['a', -0.3], ['b', 0.9]]), new Map([['a', 250], ['c', 1e-6]]), alpha).values()) {
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
