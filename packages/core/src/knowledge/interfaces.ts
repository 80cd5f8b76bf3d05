/**
 * Plug-in interfaces of the knowledge base. Each has a conformance suite in
 * `@agent-platform/core/testing` that every implementation runs.
 */
import type { VectorStoreId } from '../registries/vector-stores.js';
import type { SimilarityScale } from './search.js';

/** Turns texts into vectors. Implementations batch internally as they see fit. */
export interface EmbeddingModel {
  /** Stable id of the model, e.g. `builtin:use-lite` or `openai:text-embedding-3-small`. Vectors of different ids never mix. */
  readonly id: string;
  /** Length of every vector. */
  readonly dimensions: number;
  /**
   * How this model's cosine similarities read as relevance: `unrelated`, what a question and a
   * text with nothing to do with it typically reach (scored 0); `related`, from where a text is
   * on the question's subject (hybrid search counts its keyword match in full). Models differ
   * widely (some put every pair of English texts above 0.5), so scores mean the same whatever the
   * model only with its own scale. Default `DEFAULT_SIMILARITY`. See docs/KNOWLEDGE.md, "Scores".
   */
  readonly similarity?: SimilarityScale;
  /**
   * One unit-length vector per text, in order. Texts longer than the model takes are
   * truncated, not rejected. An empty array gives an empty array.
   */
  embed(
    texts: readonly string[],
    options?: {
      readonly signal?: AbortSignal;
      /**
       * What the texts are: `query` (a search query, waited on by a user: an embedder with a
       * queue serves it ahead of bulk work, e.g. in a lane of its own) or `document` (indexing).
       * Default `document`. The vectors are the same either way.
       */
      readonly purpose?: 'query' | 'document';
    },
  ): Promise<Float32Array[]>;
  /** Frees workers and memory. Idempotent. */
  close?(): Promise<void>;
}

/** The third-party vector store kinds of the spec's `vectorstoreProvider` (registries/vector-stores.ts). */
export type VectorStoreProvider = VectorStoreId;

export interface VectorRecord {
  /** Chunk id. Upserting an existing id replaces its vector. */
  readonly id: string;
  readonly documentId: string;
  /** Unit length (cosine similarity = dot product). */
  readonly vector: Float32Array;
}

export interface VectorQuery {
  /** Unit-length query vector. */
  readonly vector: Float32Array;
  readonly topK: number;
  /** Only vectors of these documents. */
  readonly documentIds?: readonly string[];
  /** Return each hit's vector too (for MMR). */
  readonly includeVectors?: boolean;
}

export interface VectorHit {
  readonly id: string;
  readonly documentId: string;
  /** Cosine similarity, -1..1, best first. */
  readonly score: number;
  readonly vector?: Float32Array;
}

/**
 * Vectors by namespace (one per project and embedding model). Writes to a namespace are
 * visible to queries once the returned promise resolves.
 */
export interface VectorStore {
  upsert(namespace: string, records: readonly VectorRecord[]): Promise<void>;
  /** Best `topK` hits by cosine similarity, best first. An unknown namespace has no hits. */
  query(namespace: string, query: VectorQuery): Promise<VectorHit[]>;
  /** Removes a document's vectors; answers how many were removed. */
  deleteDocument(namespace: string, documentId: string): Promise<number>;
  /**
   * Removes the document's vectors whose ids are not in `keep` (the ids of its chunks now in
   * storage); answers how many were removed. With it, indexing writes a document's new vectors
   * before its old ones go, so search answers the old chunks until the new ones are in, and a
   * run that ended with the process leaves nothing behind once the document is indexed again.
   * Optional: a store without it has the document's vectors removed (`deleteDocument`) before
   * the new ones are written.
   */
  pruneDocument?(namespace: string, documentId: string, keep: readonly string[]): Promise<number>;
  /** Removes the namespace and all its vectors. */
  dropNamespace(namespace: string): Promise<void>;
  /** Vectors in the namespace. */
  count(namespace: string): Promise<number>;
  /** Flushes and frees. Idempotent. */
  close(): Promise<void>;
  /**
   * Checks that the store can take vectors of `dimensions` before a project is moved to it:
   * reachable, authorised, and the index it uses (if it exists) has that dimension and cosine
   * distance. Rejects with a `PlatformError` whose message names the problem:
   * `invalid_request` for the configuration (wrong key, wrong dimension, wrong metric),
   * `unavailable` when the store cannot be reached, `timeout`. Optional: a store that needs no
   * check (the built-in one) leaves it out.
   */
  check?(options: { readonly dimensions: number; readonly signal?: AbortSignal }): Promise<void>;
}

/** Bytes of uploaded files. Keys are opaque strings made by the caller (file ids). */
export interface BlobStore {
  put(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * The bytes stored under `key`, undefined when there is no such key. Read-only to the caller
   * (a store in memory may hand out the bytes it keeps); a store that reads them from a file or
   * a database hands on what it read, without copying it again (a Buffer is a Uint8Array). They
   * may be a view into a larger ArrayBuffer: read them through the view (`byteOffset`,
   * `byteLength`), never through `.buffer` alone.
   */
  get(key: string): Promise<Uint8Array | undefined>;
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>;
}
