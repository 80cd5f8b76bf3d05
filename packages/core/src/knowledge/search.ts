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
 * `lambda · relevance − (1 − lambda) · max similarity to those already picked`.
 */
export function mmrSelect<T extends { readonly vector: Float32Array; readonly relevance: number }>(
  candidates: readonly T[],
  k: number,
  lambda: number,
): T[] {
  const picked: T[] = [];
  const left = [...candidates];
  while (picked.length < k && left.length > 0) {
    let best = 0;
    let bestValue = Number.NEGATIVE_INFINITY;
    left.forEach((c, i) => {
      let redundancy = 0;
      for (const p of picked) redundancy = Math.max(redundancy, dot(c.vector, p.vector));
      const value = lambda * c.relevance - (1 - lambda) * redundancy;
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    });
    picked.push(left.splice(best, 1)[0] as T);
  }
  return picked;
}

/**
 * Hybrid fusion: `alpha · semantic + (1 − alpha) · keyword`, where the semantic side is the
 * 0..1 similarity score and the keyword side is BM25 divided by the best BM25 of the
 * candidates (so the best keyword match scores 1). A chunk missing on one side scores 0 there.
 */
export function fuseHybrid(
  semantic: ReadonlyMap<string, number>,
  keyword: ReadonlyMap<string, number>,
  alpha: number,
): Map<string, number> {
  let maxKeyword = 0;
  for (const v of keyword.values()) maxKeyword = Math.max(maxKeyword, v);
  const fused = new Map<string, number>();
  for (const id of new Set([...semantic.keys(), ...keyword.keys()])) {
    const s = semantic.get(id) ?? 0;
    const k = maxKeyword > 0 ? (keyword.get(id) ?? 0) / maxKeyword : 0;
    fused.set(id, alpha * s + (1 - alpha) * k);
  }
  return fused;
}
