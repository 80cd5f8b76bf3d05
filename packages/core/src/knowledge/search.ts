/** Pure ranking helpers of knowledge search. Scores are in 0..1, higher is better. */

/** Cosine similarity of unit vectors (their dot product). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/** A cosine similarity as a 0..1 score: negative similarity is no relevance. */
export const similarityScore = (cosine: number): number => Math.min(1, Math.max(0, cosine));

/**
 * Maximal marginal relevance: picks `k` of the candidates greedily by
 * `lambda · relevance − (1 − lambda) · max similarity to those already picked`. Each
 * candidate's max similarity is updated with the last pick only, so a selection costs
 * k × candidates dot products (not k² × candidates).
 */
export function mmrSelect<T extends { readonly vector: Float32Array; readonly relevance: number }>(
  candidates: readonly T[],
  k: number,
  lambda: number,
): T[] {
  const picked: T[] = [];
  const left = [...candidates];
  // Parallel to `left`: max(0, similarity to any pick), as the textbook selection counts it.
  const redundancy = new Float64Array(left.length);
  while (picked.length < k && left.length > 0) {
    let best = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < left.length; i++) {
      const value = lambda * (left[i] as T).relevance - (1 - lambda) * (redundancy[i] as number);
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    const chosen = left[best] as T;
    picked.push(chosen);
    left.splice(best, 1);
    redundancy.copyWithin(best, best + 1);
    for (let i = 0; i < left.length; i++) {
      const similarity = dot((left[i] as T).vector, chosen.vector);
      if (similarity > (redundancy[i] as number)) redundancy[i] = similarity;
    }
  }
  return picked;
}

/**
 * Scales scores to 0..1 over one result list (min-max): the best becomes 1, the worst 0; a
 * list whose scores are all equal scores 1.
 */
export function minMaxScale(scores: ReadonlyMap<string, number>): Map<string, number> {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const v of scores.values()) {
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const out = new Map<string, number>();
  for (const [id, v] of scores) out.set(id, max > min ? (v - min) / (max - min) : 1);
  return out;
}

/**
 * Hybrid fusion by relative scores: each side (semantic similarities, keyword BM25 scores, each
 * over its own candidate list) is min-max scaled to 0..1, then
 * `alpha · semantic + (1 − alpha) · keyword`; a chunk missing from one side's list scores 0
 * there. The result is in 0..1. Chosen over reciprocal-rank fusion and z-score fusion by
 * measurement on BEIR SciFact (docs/BENCHMARKS.md, "retrieval").
 */
export function fuseHybrid(
  semantic: ReadonlyMap<string, number>,
  keyword: ReadonlyMap<string, number>,
  alpha: number,
): Map<string, number> {
  const s = minMaxScale(semantic);
  const k = minMaxScale(keyword);
  const fused = new Map<string, number>();
  for (const id of new Set([...s.keys(), ...k.keys()])) fused.set(id, alpha * (s.get(id) ?? 0) + (1 - alpha) * (k.get(id) ?? 0));
  return fused;
}
