import type { PlatformContext } from '../context.js';
import { inMemoryBlobs } from '../memory-blobs.js';
import { Ingestion } from './ingest/ingestion.js';
import type { BlobStore } from './interfaces.js';
import type { KnowledgeAdapters, KnowledgeOptions } from './options.js';
import { Retriever } from './search/retrieve.js';
import { KnowledgeStores } from './stores.js';

/** What a configured knowledge base is made of. */
export interface KnowledgeEngine {
  /** Projects' settings, and the embedders and vector stores they choose. */
  readonly stores: KnowledgeStores;
  /** The job queue and what runs its jobs. */
  readonly ingestion: Ingestion;
  readonly retriever: Retriever;
  /** Where uploaded files and posted texts are kept. */
  readonly blobs: BlobStore;
}

/** Builds the knowledge base of a platform from its adapters and the shared context. */
export function buildKnowledge(ctx: PlatformContext, k: KnowledgeAdapters): KnowledgeEngine {
  const embedder = k.embedder;
  const factory = k.vectorStores;
  const options: KnowledgeOptions = {
    storage: ctx.storage,
    notifier: ctx.notifier,
    vectors: k.vectors,
    // Third-party stores connect where the caller's configuration says (`endpoint`, Weaviate's
    // `grpcEndpoint`, ...): they get the guarded fetch, so the outbound policy decides on every
    // connection their clients open, as the connection is made.
    ...(factory ? { vectorStores: (provider, config) => factory(provider, config, { fetch: ctx.fetch }) } : {}),
    embedders: typeof embedder === 'function' ? embedder : () => embedder,
    clock: ctx.clock,
    ids: ctx.ids,
    caps: ctx.caps,
    blobs: k.blobs ?? inMemoryBlobs(),
    secrets: ctx.secrets,
    ...(k.concurrency ? { concurrency: k.concurrency } : {}),
    ...(k.concurrentBytes ? { concurrentBytes: k.concurrentBytes } : {}),
    ...(k.overtakeMs !== undefined ? { overtakeMs: k.overtakeMs } : {}),
    ...(k.maxQueuedDocuments ? { maxQueuedDocuments: k.maxQueuedDocuments } : {}),
    ...(k.limits ? { limits: k.limits } : {}),
    ...(k.limitHints ? { limitHints: k.limitHints } : {}),
    ...(k.documentProcesses ? { documentProcesses: k.documentProcesses } : {}),
    ...(k.maxAttempts ? { maxAttempts: k.maxAttempts } : {}),
    ...(k.instanceId ? { instanceId: k.instanceId } : {}),
    ...(k.leaseMs ? { leaseMs: k.leaseMs } : {}),
    ...(k.heartbeatMs ? { heartbeatMs: k.heartbeatMs } : {}),
    ...(k.pollMs ? { pollMs: k.pollMs } : {}),
  };
  const stores = new KnowledgeStores(options);
  return { stores, ingestion: new Ingestion(options, stores), retriever: new Retriever(ctx.storage, stores), blobs: options.blobs };
}
