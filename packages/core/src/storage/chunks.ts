import type { Page } from './page.js';

export interface ChunkRecord {
  readonly id: string;
  readonly documentId: string;
  readonly projectId: string;
  /** Position in the document, from 0. */
  readonly index: number;
  readonly text: string;
  readonly tokenCount: number;
  /** fileName, fileType, chunkIndex, pageNumber and pageEnd (pdf: the first and last page of the chunk), section. */
  readonly metadata: Record<string, unknown>;
}

export interface KeywordHit {
  readonly id: string;
  /**
   * BM25 relevance measured against what the query could score at best, 0..1, higher is better:
   * the chunk's BM25 (k1 1.2, b 0.75) over `Σ idf(t) · (k1 + 1)` for the query's distinct terms
   * (the limit of a chunk holding every term, each ever more often). A term no chunk holds counts
   * in that ceiling with the idf of a term in no chunk, so a chunk matching one word of a longer
   * question scores by that word's share of it. The same number means the same match whatever
   * the query (see `bm25Rank`).
   */
  readonly score: number;
}

/** The vectors of a document's chunks, kept with the chunk rows so a re-index can reuse them. */
export interface ChunkEmbeddings {
  /** Id of the embedding model that made them (`EmbeddingModel.id`). */
  readonly model: string;
  /** One vector per chunk, in the order of the chunks they are stored with. */
  readonly vectors: readonly Float32Array[];
}

export interface ChunkRepository {
  /**
   * Replaces all chunks of the document with these (atomically), and their stored vectors with
   * `embeddings` (none when absent).
   */
  replaceForDocument(documentId: string, chunks: readonly ChunkRecord[], embeddings?: ChunkEmbeddings): Promise<void>;
  /**
   * The stored vectors of the document's chunks made by `model`, keyed by chunk text (empty for
   * another model). Only re-indexing reads them: `getMany`, `get`, `listByDocument` and searches do not.
   */
  embeddingsByText(documentId: string, model: string): Promise<Map<string, Float32Array>>;
  /**
   * The stored vectors made by `model` of the project's chunks with these ids, keyed by chunk id;
   * chunks without one (another model, or indexed before vectors were kept) and ids that are not
   * chunks of `projectId` are left out. MMR search reads them for candidates that only the
   * keyword side found.
   */
  embeddingsById(projectId: string, ids: readonly string[], model: string): Promise<Map<string, Float32Array>>;
  /**
   * The project's chunks with these ids, in no particular order. Ids that are not chunks of
   * `projectId` (unknown, or another project's) are skipped: the ids come from a vector store,
   * which may be one the caller controls, so the project is the only owner check there is.
   */
  getMany(projectId: string, ids: readonly string[]): Promise<ChunkRecord[]>;
  /** The chunk with this id when it belongs to a document of `userId`; undefined otherwise. */
  get(userId: string, id: string): Promise<ChunkRecord | undefined>;
  listByDocument(documentId: string): Promise<ChunkRecord[]>;
  /** A page of the document's chunks in document order (by `index`), with their total. */
  pageByDocument(query: { documentId: string; limit: number; offset: number }): Promise<Page<ChunkRecord>>;
  /**
   * Full-text search over the project's chunk texts, BM25-ranked, best first, scored in 0..1 as
   * `KeywordHit` says. `query` is free text: adapters turn it into a safe OR-of-terms query (no
   * query syntax reaches the engine).
   */
  keywordSearch(projectId: string, query: string, limit: number): Promise<KeywordHit[]>;
  /**
   * Whether the project has at least one chunk (of any document, in any state). Searches read it
   * first, so a project with nothing to find costs no query embedding; adapters answer it from
   * an index, without scanning other projects' chunks.
   */
  anyInProject(projectId: string): Promise<boolean>;
}
