import type { Caller } from '../../context.js';
import { DEFAULT_ALPHA, DEFAULT_MMR_LAMBDA, DEFAULT_SEARCH_TYPE, DEFAULT_TOP_K, HYBRID_CANDIDATES, type SearchHit } from '../../schemas/knowledge.js';
import type { ChunkRecord, StorageAdapter } from '../../storage/types.js';
import type { EmbeddingModel } from '../interfaces.js';
import { DEFAULT_SIMILARITY, dot, fuseHybrid, mmrSelect, similarityScore } from '../search.js';
import { type KnowledgeStores, vectorNamespace } from '../stores.js';

/** Most vectors a semantic search asks its store for when it replaces hits without a chunk row. */
const MAX_CANDIDATES = 1000;

/** Search of a project's knowledge: semantic, hybrid (keywords and vectors fused) or MMR, each hit with its chunk row. */
export class Retriever {
  readonly #storage: StorageAdapter;
  readonly #stores: KnowledgeStores;

  constructor(storage: StorageAdapter, stores: KnowledgeStores) {
    this.#storage = storage;
    this.#stores = stores;
  }

  /**
   * The best chunks of a project for a query, by the request's search type, `topK` and floor, else
   * the project's settings, else the defaults. Scores are calibrated: above 0 and the floor.
   */
  async search(
    caller: Caller,
    projectId: string,
    request: {
      query: string;
      topK?: number | undefined;
      minScore?: number | undefined;
      /** The floor when neither the request nor the project's settings set `minScore`. Default 0. */
      defaultMinScore?: number | undefined;
      searchType?: 'semantic' | 'mrr' | 'hybrid' | undefined;
      alpha?: number | undefined;
      mmrLambda?: number | undefined;
    },
  ): Promise<SearchHit[]> {
    // A project with no chunk has nothing to find: answered before the query is embedded.
    const [settings, anything] = await Promise.all([this.#stores.settings(projectId), this.#storage.chunks.anyInProject(projectId)]);
    if (!anything) return [];
    const topK = request.topK ?? settings.topK ?? DEFAULT_TOP_K;
    const minScore = request.minScore ?? settings.minScore ?? request.defaultMinScore ?? 0;
    const type = request.searchType ?? settings.searchType ?? DEFAULT_SEARCH_TYPE;
    const model = this.#stores.embedderFor(settings, caller.userId);
    const namespace = vectorNamespace(projectId, model);
    const alpha = request.alpha ?? settings.alpha ?? DEFAULT_ALPHA;
    // Hybrid and MMR rank by the fused keyword + semantic score, over at least HYBRID_CANDIDATES
    // from each side (a small topK must not starve the fusion); MMR then diversifies among the
    // best 4 × topK (at least 20) of them.
    const candidatesK = type === 'semantic' ? topK : Math.max(topK, HYBRID_CANDIDATES);
    const keywordPromise = type !== 'semantic' && alpha < 1 ? this.#storage.chunks.keywordSearch(projectId, request.query, candidatesK) : Promise.resolve([]);
    const needVectors = type !== 'hybrid' || alpha > 0;
    const [queryVector] = needVectors ? await model.embed([request.query], { purpose: 'query' }) : [];
    const store = queryVector ? await this.#stores.vectorsFor(settings) : undefined;
    const queryStore = (k: number) => (store && queryVector ? store.query(namespace, { vector: queryVector, topK: k, includeVectors: type === 'mrr' }) : Promise.resolve([]));
    const hits = await queryStore(candidatesK);

    // Every score is calibrated (the same number, the same relevance, whatever the query): the
    // similarity on the model's scale, the keyword side against the query's ceiling (storage).
    const scale = model.similarity ?? DEFAULT_SIMILARITY;
    // A hit scoring 0 has nothing to do with the query: never answered, whatever the floor.
    const kept = (r: { score: number }) => r.score > 0 && r.score >= minScore;
    let ranked: { id: string; score: number }[];
    let pick = (pool: readonly { id: string; score: number }[]) => pool.slice(0, topK);
    if (type === 'semantic') {
      const rank = (found: readonly { id: string; score: number }[]) => found.map((h) => ({ id: h.id, score: similarityScore(h.score, scale) })).filter(kept);
      ranked = rank(hits);
      // A vector without its chunk row (a document's new vectors land just before its rows) must
      // not take a place of the topK: ask the store for as many more as were dropped.
      return this.#withRows(projectId, ranked, pick, async (dropped) => {
        if (hits.length < candidatesK) return undefined; // the store has no more
        return rank(await queryStore(Math.min(candidatesK + dropped, MAX_CANDIDATES)));
      });
    } else {
      const keyword = await keywordPromise;
      const vectors = new Map(hits.flatMap((h) => (h.vector ? [[h.id, h.vector] as const] : [])));
      const cosines = new Map(hits.map((h) => [h.id, h.score]));
      // Candidates only the keyword side found get their own similarity too (their vectors are
      // kept with the chunk rows), so a chunk's score does not depend on which lists it made.
      const missing = queryVector ? keyword.filter((k) => !cosines.has(k.id)).map((k) => k.id) : [];
      if (queryVector && missing.length > 0) {
        for (const [id, vector] of await this.#storage.chunks.embeddingsById(projectId, missing, model.id)) {
          vectors.set(id, vector);
          cosines.set(id, dot(queryVector, vector));
        }
      }
      const fused = fuseHybrid(cosines, new Map(keyword.map((k) => [k.id, k.score])), alpha, scale);
      ranked = [...fused]
        .map(([id, score]) => ({ id, score }))
        .filter(kept)
        .sort((a, b) => b.score - a.score);
      if (type === 'mrr') {
        const lambda = request.mmrLambda ?? DEFAULT_MMR_LAMBDA;
        pick = (pool) => this.#diversify(pool.slice(0, Math.max(topK * 4, 20)), vectors, model, topK, lambda);
      }
    }
    return this.#withRows(projectId, ranked, pick, async () => undefined);
  }

  /**
   * The hits `pick` chooses from the ranked candidates, with their chunk rows. A candidate whose
   * row is missing (its document deleted meanwhile, or re-indexed: new vectors land just before
   * their rows) is never shown without text and does not take a place: it leaves the pool and
   * the pick is made again, and when the pool runs out `more` may give a longer one (the store
   * asked for more). Costs one read of `topK` rows when every row is there. Rows are read only
   * within `projectId`: an id the vector store answers that is another project's chunk (a store
   * the caller controls can answer any id) counts as missing.
   */
  async #withRows(
    projectId: string,
    ranked: { id: string; score: number }[],
    pick: (pool: readonly { id: string; score: number }[]) => { id: string; score: number }[],
    more: (dropped: number) => Promise<{ id: string; score: number }[] | undefined>,
  ): Promise<SearchHit[]> {
    const rows = new Map<string, ChunkRecord>();
    const gone = new Set<string>();
    let pool = ranked;
    for (let round = 0; ; round++) {
      const picked = pick(pool);
      const unread = picked.filter((r) => !rows.has(r.id)).map((r) => r.id);
      for (const chunk of unread.length > 0 ? await this.#storage.chunks.getMany(projectId, unread) : []) rows.set(chunk.id, chunk);
      for (const id of unread) if (!rows.has(id)) gone.add(id);
      const shown = picked.filter((r) => rows.has(r.id));
      if (shown.length === picked.length || round >= 4) {
        return shown.map((r) => {
          const chunk = rows.get(r.id) as ChunkRecord;
          return { id: chunk.id, content: chunk.text, score: r.score, metadata: { documentId: chunk.documentId, ...chunk.metadata } };
        });
      }
      pool = pool.filter((r) => !gone.has(r.id));
      if (pool.length < picked.length) pool = ((await more(gone.size)) ?? pool).filter((r) => !gone.has(r.id));
    }
  }

  /**
   * MMR over the best fused candidates (`pool`, best first, every one scoring above 0 and the
   * floor). In the selection a candidate's relevance is its score placed between the pool's worst
   * (0) and best (1), as MMR trades relevance against similarity within one query's candidates
   * (measured: nDCG@10 0.695 on SciFact at λ 0.5, against 0.689 with the scores as they are);
   * redundancy is the cosine similarity of the chunks' vectors (from the vector query, or kept
   * with the chunk rows; a candidate with neither, indexed before vectors were kept, counts as
   * unlike every other). Each pick is answered with its own calibrated score.
   */
  #diversify(pool: readonly { id: string; score: number }[], vectors: ReadonlyMap<string, Float32Array>, model: EmbeddingModel, topK: number, lambda: number): { id: string; score: number }[] {
    const best = pool[0]?.score ?? 0;
    const none = new Float32Array(model.dimensions);
    const worst = pool.at(-1)?.score ?? 0;
    const relevance = (score: number) => (best > worst ? (score - worst) / (best - worst) : 1);
    const candidates = pool.map((c) => ({ id: c.id, score: c.score, relevance: relevance(c.score), vector: vectors.get(c.id) ?? none }));
    return mmrSelect(candidates, topK, lambda).map((c) => ({ id: c.id, score: c.score }));
  }
}
