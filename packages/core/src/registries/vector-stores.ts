/**
 * The third-party vector stores a project's `vectorstoreProvider` can name (beside `builtin`,
 * the platform's own store), declared once: the schemas' `VectorStoreProvider` enum and type,
 * the secret keys sealed at rest, the stores a server-wide `--vector-store` may be and the
 * server's factories (`satisfies Record<VectorStoreProvider, …>`) all come from this table.
 * Entries are data: the adapters live in `@agent-platform/adapters-vector`, the factories in the
 * server. The order is the order of the API's enum after `builtin` (append a new store at the end).
 */
export interface VectorStoreEntry {
  /**
   * The keys of its `vectorStoreConfig` that are secrets: sealed at rest, redacted in answers
   * (from the adapter's config parser; endpoints may not carry credentials or a query).
   */
  readonly secretKeys: readonly string[];
  /**
   * Whether it is a server every instance of a deployment reaches, so it may be the server-wide
   * store (`--vector-store`, needed with `--database`). False: a store local to one machine.
   */
  readonly shared: boolean;
}

export const VECTOR_STORES = {
  pinecone: { secretKeys: ['apiKey'], shared: true },
  weaviate: { secretKeys: ['apiKey'], shared: true },
  qdrant: { secretKeys: ['apiKey'], shared: true },
  chroma: { secretKeys: ['apiKey'], shared: true },
} as const satisfies Record<string, VectorStoreEntry>;

/** A third-party store's name, e.g. `qdrant` (`builtin` is not one). */
export type VectorStoreId = keyof typeof VECTOR_STORES;

/** Every third-party store's name, in the table's order. */
export const VECTOR_STORE_IDS = Object.keys(VECTOR_STORES) as VectorStoreId[];

/** The stores a server-wide `--vector-store` may be (`shared: true`), in the table's order. */
export const SHARED_VECTOR_STORE_IDS = VECTOR_STORE_IDS.filter((id) => VECTOR_STORES[id].shared);

/** Whether `name` is a store of the table (own names only: `constructor` is none). */
export const isVectorStore = (name: string): name is VectorStoreId => Object.hasOwn(VECTOR_STORES, name);
