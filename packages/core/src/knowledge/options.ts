import type { Clock } from '../clock.js';
import type { Caller } from '../context.js';
import type { IdGenerator } from '../ids.js';
import type { GuardedFetch } from '../net/guarded-fetch.js';
import type { Notifier } from '../notify/notifier.js';
import type { SecretBox } from '../security/secrets.js';
import type { StorageAdapter } from '../storage/types.js';
import type { UserCapGuard } from '../user-caps.js';
import type { BlobStore, EmbeddingModel, VectorStore, VectorStoreProvider } from './interfaces.js';
import type { DocumentLimitName, DocumentLimits } from './limits.js';
import type { DocumentReader } from './read-document.js';

/** What a platform's knowledge base is built from (`AgentPlatformOptions.knowledge`). */
export interface KnowledgeAdapters {
  /** The built-in (default) vector store. */
  readonly vectors: VectorStore;
  /**
   * The stores of `vectorstoreProvider` (pinecone, weaviate, qdrant, chroma) from their
   * `vectorStoreConfig`, given the platform's guarded fetch to connect with (every request of
   * their clients goes through the outbound policy). Without it, third-party stores are refused.
   */
  readonly vectorStores?: VectorStoreFactory;
  /** The embedder, or a function choosing one by the project's `embeddingModel` setting. */
  readonly embedder: EmbeddingModel | EmbedderResolver;
  /** Where uploaded files and document texts are kept (for re-indexing). Default: in memory. */
  readonly blobs?: BlobStore;
  /** Most documents indexed at the same time. Default 32. */
  readonly concurrency?: number;
  /**
   * Most bytes of document sources indexed at the same time (a larger one runs alone); one more
   * document, of a user with nothing being indexed, may start beyond it. Default 64 MiB.
   */
  readonly concurrentBytes?: number;
  /**
   * How long (ms) after it was queued a document that does not fit the room left in
   * `concurrentBytes` may be passed over by documents that do; then it runs next (alone if it
   * must). Default 10,000.
   */
  readonly overtakeMs?: number;
  /**
   * Most documents one user may have waiting or being indexed; one more document, upload or
   * re-index is refused with `rate_limited` naming the limit, and nothing of it is written.
   * Default 1,000.
   */
  readonly maxQueuedDocuments?: number;
  /** How long `createDocument` waits for indexing before answering `processing`. Default 5000 ms. */
  readonly waitMs?: number;
  /**
   * Limits on reading (parsing and chunking) each document, which runs in child processes:
   * time, memory, PDF pages, unpacked DOCX bytes, nesting, text length, chunks. A document over
   * one ends `failed` naming it. Defaults: `DEFAULT_DOCUMENT_LIMITS`.
   */
  readonly limits?: DocumentLimits;
  /**
   * How an operator sets each limit, added to the error of a document over it (e.g.
   * `--max-document-pages`) and to the refusal of a full queue (`maxQueuedDocuments`). Default
   * `knowledge.limits.<name>`, `knowledge.maxQueuedDocuments`.
   */
  readonly limitHints?: Partial<Record<DocumentLimitName | 'maxQueuedDocuments', string>>;
  /** Most child processes reading documents at once. Default 2 (1 on a single core). */
  readonly documentProcesses?: number;
  /** Starts of one indexing job (counted before it runs, so across restarts) before its document fails. Default 3. */
  readonly maxAttempts?: number;
  /**
   * This instance's id, the owner of the indexing jobs it claims (see docs/KNOWLEDGE.md, "The
   * job queue"). Default: a new random id per process. A stable one lets a restart take its
   * jobs back at once instead of after their leases; two running processes must never share one.
   */
  readonly instanceId?: string;
  /** Lease of a claimed indexing job; after it, another instance may take the job over. Default 30,000 ms. */
  readonly leaseMs?: number;
  /** How often a running job's lease is extended. Default 10,000 ms. */
  readonly heartbeatMs?: number;
  /** How often an instance with free slots looks for jobs it was not woken for. Default 1,000 ms. */
  readonly pollMs?: number;
}

/** Picks the embedding model of a project from its `embeddingModel` setting (undefined: the default). */
export type EmbedderResolver = (embeddingModel: string | undefined, caller: Caller) => EmbeddingModel;

/** How a third-party store reaches its server: only through the outbound policy. */
export interface VectorStoreConnection {
  /**
   * The guarded fetch: the store's client makes every HTTP request with it (each address and
   * redirect hop checked, the socket pinned to the checked address), and checks with
   * `fetch.check` any other connection before opening it (Weaviate's gRPC).
   */
  readonly fetch: GuardedFetch;
}

/**
 * Makes the store of a `vectorstoreProvider` and its `vectorStoreConfig`, connecting through
 * `connection`; throws `invalid_request` ("Invalid vectorstore configuration: ...") for a
 * configuration it cannot use. Stores are cached per configuration by the caller.
 */
export type VectorStoreFactory = (provider: VectorStoreProvider, config: Record<string, unknown>, connection: VectorStoreConnection) => VectorStore | Promise<VectorStore>;

/** What the knowledge base's parts are built from: the adapters, with the platform's shared dependencies. */
export interface KnowledgeOptions {
  readonly storage: StorageAdapter;
  /** The built-in (default) store: projects without a `vectorstoreProvider`. */
  readonly vectors: VectorStore;
  /** Third-party stores by provider (their connection bound already); without it, `vectorstoreProvider` is refused. */
  readonly vectorStores?: (provider: VectorStoreProvider, config: Record<string, unknown>) => VectorStore | Promise<VectorStore>;
  readonly embedders: EmbedderResolver;
  /** Sources of documents (uploaded files and posted texts), kept for re-indexing. */
  readonly blobs: BlobStore;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** The per-user caps (documents). */
  readonly caps: UserCapGuard;
  /**
   * Most documents indexed at the same time. Default 32: documents of one chunk each give the
   * embedder one text each, and an embedder that batches (the built-in pool) needs many waiting
   * to fill its batches; since documents are read in a process of their own, their texts reach
   * the embedder a message apart, and with 16 at a time batches of one to three texts doubled
   * (HTTP ingest / raw embedder 0.81 instead of 0.86; 32 gave 0.86, docs/BENCHMARKS.md).
   */
  readonly concurrency?: number;
  /**
   * Most bytes of source indexed at the same time: a document that would pass it waits until
   * the running ones finish (and one larger than it runs alone), so big files do not all parse
   * at once. Besides, one document of a user with nothing being indexed (and no larger than
   * this) starts at once beyond it, so other users' documents never hold it back. Default
   * {@link DEFAULT_CONCURRENT_BYTES}.
   */
  readonly concurrentBytes?: number;
  /**
   * How long (ms) after it was queued a document that does not fit the room left in
   * `concurrentBytes` may be passed over by documents that do; then this instance starts nothing
   * else until it fits (it runs alone if it must; only a user with nothing being indexed may
   * still start one beside it), so it is never starved. Default 10,000.
   */
  readonly overtakeMs?: number;
  /**
   * Most documents one user (the owner key of the queue, `JobRecord.tenant`) may have waiting or
   * being indexed: one more document, upload or re-index answers `rate_limited` naming this
   * limit, and nothing of it is written. Default {@link DEFAULT_MAX_QUEUED_DOCUMENTS}.
   */
  readonly maxQueuedDocuments?: number;
  /** Texts per embedding call. Default 32. */
  readonly embedBatchSize?: number;
  /**
   * Starts of one job before it is given up as failed. Default 3. A start is counted before the
   * job runs, so starts that ended with the process (a crash, a kill) count too.
   */
  readonly maxAttempts?: number;
  /** Seals the secrets of projects' vector store configurations at rest. */
  readonly secrets?: SecretBox | undefined;
  /** Limits on reading (parsing and chunking) each document; see `DocumentLimits` for the defaults. */
  readonly limits?: DocumentLimits;
  /**
   * How an operator sets each limit, named in the error of a document over it, e.g. `{ maxPages:
   * '--max-document-pages' }`, and in the refusal of a full queue (`maxQueuedDocuments`).
   */
  readonly limitHints?: Partial<Record<DocumentLimitName | 'maxQueuedDocuments', string>>;
  /** Most child processes reading documents at once (one document each). Default 2 (1 on a single core). */
  readonly documentProcesses?: number;
  /** Reads documents instead of the default child processes (`DocumentProcesses` with the options above). */
  readonly reader?: DocumentReader;
  /**
   * Carries indexing events and cancellations between the instances sharing the storage.
   * Default: an in-process notifier (one instance). Not closed by `close()`: its owner closes it.
   */
  readonly notifier?: Notifier;
  /**
   * This instance's id: the owner of the jobs it claims. Default: a new random one per process.
   * A stable id (one per data folder, or per machine of a fleet) lets a restarted instance take
   * its jobs back at start instead of waiting for their leases to run out; two running
   * processes must never share one.
   */
  readonly instanceId?: string;
  /** Lease of a claimed job, extended by heartbeats; after it another instance may take the job over. Default 30,000 ms. */
  readonly leaseMs?: number;
  /** How often a running job's lease is extended. Default 10,000 ms. */
  readonly heartbeatMs?: number;
  /** How often an instance with free slots looks for jobs it was not woken for (other instances' jobs, expired leases). Default 1,000 ms. */
  readonly pollMs?: number;
}

export const DEFAULT_CONCURRENCY = 32;
export const DEFAULT_CONCURRENT_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_QUEUED_DOCUMENTS = 1000;
