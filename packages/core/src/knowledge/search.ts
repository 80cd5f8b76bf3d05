/** Pure ranking helpers of knowledge search. Scores are in 0..1, higher is better. */

/** Cosine similarity of unit vectors (their dot product). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
}

/**
 * How an embedding model's cosine similarities read as relevance (`EmbeddingModel.similarity`):
 * at or under `unrelated` a question and a text have nothing in common; from `related` on, a
 * text is on the question's subject.
 */
export interface SimilarityScale {
  readonly unrelated: number;
  readonly related: number;
}

/**
 * The scale of a model that declares none: no similarity is unrelated, and a match counts in
 * full from 0.5 on (a guess; the default floor is measured for the built-in embedder only).
 */
export const DEFAULT_SIMILARITY: SimilarityScale = { unrelated: 0, related: 0.5 };

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));

/**
 * A cosine similarity as a 0..1 score on the model's scale: 0 at or under `unrelated`, the rest
 * of the way to 1 mapped linearly onto 0..1. The score of a semantic search hit; the same number
 * means the same closeness whatever the query.
 */
export const similarityScore = (cosine: number, scale: SimilarityScale = DEFAULT_SIMILARITY): number => clamp01((cosine - scale.unrelated) / (1 - scale.unrelated));

/**
 * How far a text is on the question's subject, 0..1: 0 at or under `unrelated`, 1 from `related`
 * on, linear in between. Hybrid search counts a keyword match only this far.
 */
export const relatedness = (cosine: number, scale: SimilarityScale = DEFAULT_SIMILARITY): number => clamp01((cosine - scale.unrelated) / (scale.related - scale.unrelated));

/**
 * Maximal marginal relevance: picks `k` of the candidates greedily by
 * `lambda · relevance − (1 − lambda) · max similarity to those already picked`. Each
 * candidate's max similarity is updated with the last pick only, so a selection costs
 * k × candidates dot products (not k² × candidates).
 */
export function mmrSelect<T extends { readonly vector: Float32Array; readonly relevance: number }>(candidates: readonly T[], k: number, lambda: number): T[] {
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
 * Hybrid fusion of calibrated scores. For each chunk, from its cosine similarity to the question
 * (`cosines`, on the model's `scale`) and its keyword score (`keyword`: BM25 measured against the
 * best the question's terms could score, 0..1, see `KeywordHit`):
 *
 *   score = alpha · similarityScore + (1 − alpha) · min(keyword, relatedness)
 *
 * A keyword match counts only as far as the text is on the question's subject: a text that
 * shares a word with the question but not its meaning scores low however well the word matches
 * (a one-word question matches its word perfectly). Nothing is stretched over the candidates, so
 * the same number means the same relevance whatever the question, and a question that matches
 * nothing well scores low. A chunk the keyword side did not find scores 0 there; one whose
 * similarity is unknown (no vector to compare) has its keyword score alone, weighted
 * `1 − alpha`. At `alpha` 0 the score is the keyword score (pure keyword search: no query
 * embedding is computed). In 0..1. Chosen by measurement on BEIR SciFact (docs/BENCHMARKS.md,
 * "retrieval" and "relevance floor").
 */
export function fuseHybrid(cosines: ReadonlyMap<string, number>, keyword: ReadonlyMap<string, number>, alpha: number, scale: SimilarityScale = DEFAULT_SIMILARITY): Map<string, number> {
  const fused = new Map<string, number>();
  for (const id of new Set([...cosines.keys(), ...keyword.keys()])) {
    const k = keyword.get(id) ?? 0;
    const cosine = cosines.get(id);
    fused.set(id, alpha === 0 ? k : cosine === undefined ? (1 - alpha) * k : alpha * similarityScore(cosine, scale) + (1 - alpha) * Math.min(k, relatedness(cosine, scale)));
  }
  return fused;
}
