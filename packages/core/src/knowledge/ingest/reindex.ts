import type { Caller } from '../../context.js';
import { PlatformError } from '../../errors.js';
import type { KnowledgeSettings } from '../../schemas/knowledge.js';
import type { DocumentRecord, StorageAdapter } from '../../storage/types.js';
import type { EmbeddingModel, VectorStore } from '../interfaces.js';
import type { KnowledgeOptions } from '../options.js';
import { type KnowledgeStores, vectorNamespace } from '../stores.js';
import { admit, sizeOf, tenantOf } from './submit.js';

/** What queueing documents again needs. */
export interface ReindexDeps {
  readonly options: Pick<KnowledgeOptions, 'storage' | 'ids' | 'clock' | 'maxQueuedDocuments' | 'limitHints'>;
  readonly stores: KnowledgeStores;
  /** Stops the runs of a document on every instance but that of its job `except`. */
  readonly cancelEverywhere: (documentId: string, except?: string) => void;
  /** Claims the jobs just queued at once (no polling delay). */
  readonly wake: () => void;
}

/**
 * Queues documents of a project for indexing again from their stored sources (`sourceKey`),
 * with the project's settings at the time each runs: every document of the project, or those
 * of `documentIds` (each must be a document of the caller in that project, else `not_found`
 * naming it, before anything is queued). Each goes `pending` → `processing` → `completed` (or
 * `failed`), with the indexing events of ingestion. A run of the document in progress, here or
 * on another instance, is stopped: its job is replaced by the new one, so a document is never
 * indexed by two runs at once. All documents are queued in one transaction (with `also`'s
 * writes), or none: `rate_limited` when the caller's queue would pass `maxQueuedDocuments`.
 * Until a run writes, search answers the document's earlier chunks; a run that fails leaves
 * them in place. Answers the documents queued.
 */
export async function reindexDocuments(deps: ReindexDeps, caller: Caller, projectId: string, documentIds?: readonly string[], also?: (tx: StorageAdapter) => Promise<void>): Promise<DocumentRecord[]> {
  const { storage } = deps.options;
  const documents: DocumentRecord[] = [];
  if (documentIds) {
    for (const id of new Set(documentIds)) {
      const doc = await storage.documents.get(caller.userId, id);
      if (!doc || doc.projectId !== projectId) {
        throw new PlatformError('not_found', `documentIds: document ${id} not found in project ${projectId}`, { details: { documentId: id } });
      }
      documents.push(doc);
    }
  } else {
    for (let offset = 0; ; ) {
      const page = await storage.documents.list({ userId: caller.userId, projectId, limit: 100, offset });
      documents.push(...page.items);
      offset += page.items.length;
      if (page.items.length === 0 || offset >= page.total) break;
    }
  }
  await requeue(deps, tenantOf(caller), documents, also);
  return documents;
}

/**
 * Queues every document of a project for indexing again after its embedding model or its
 * vector store changed, and drops the project's vectors of the old model in the old store.
 * The new settings are stored in the transaction that queues the documents: both happen, or
 * (the caller's queue too full) neither. Chunk texts the project's model has embedded before
 * are not embedded again (`DocumentIndexer#index`).
 */
export async function reindexProject(
  deps: ReindexDeps,
  caller: Caller,
  projectId: string,
  change: { readonly previous: EmbeddingModel; readonly previousStore: VectorStore; readonly settings: KnowledgeSettings; readonly at: Date },
): Promise<number> {
  const queued = await reindexDocuments(deps, caller, projectId, undefined, (tx) => deps.stores.putSettings(projectId, change.settings, change.at, tx));
  await change.previousStore.dropNamespace(vectorNamespace(projectId, change.previous)).catch(() => {
    // The old store may be gone (down, or its key revoked): its vectors are no longer used.
  });
  return queued.length;
}

/**
 * Replaces the documents' jobs (waiting or running, on any instance) by new ones in one
 * transaction (with `also`'s writes), under the tenant's bound (a document's old job makes
 * room for its new one), then stops their old runs and wakes the queue.
 */
async function requeue(deps: ReindexDeps, tenant: string, documents: readonly DocumentRecord[], also?: (tx: StorageAdapter) => Promise<void>): Promise<void> {
  const { storage, ids, clock } = deps.options;
  const jobs = documents.map((doc) => ({ doc, jobId: ids.next('job') }));
  await storage.transaction(async (tx) => {
    // A run of a document, here or on another instance, is cancelled: its job goes, so its
    // next heartbeat or fenced write stops it if the cancel message does not reach it first.
    await admit(deps.options, tx, tenant, jobs.length, async () => {
      let removed = 0;
      for (const { doc } of jobs) removed += await tx.jobs.cancel(doc.id);
      return removed;
    });
    await also?.(tx);
    for (const { doc, jobId } of jobs) {
      await tx.documents.update(doc.id, { status: 'pending', error: null, updatedAt: clock.now() });
      await tx.jobs.insert({
        id: jobId,
        kind: 'index_document',
        documentId: doc.id,
        tenant,
        // The run reads the document's recorded source (`sourceKey`).
        payload: {},
        size: sizeOf(doc),
        createdAt: clock.now(),
      });
    }
  });
  for (const { doc, jobId } of jobs) deps.cancelEverywhere(doc.id, jobId);
  deps.wake();
}
