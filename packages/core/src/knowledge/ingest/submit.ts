import type { Caller } from '../../context.js';
import { PlatformError } from '../../errors.js';
import type { CreateDocumentRequest } from '../../schemas/knowledge.js';
import type { DocumentRecord, StorageAdapter } from '../../storage/types.js';
import { checkTextDocumentType } from '../file-types.js';
import { DEFAULT_MAX_QUEUED_DOCUMENTS, type KnowledgeOptions } from '../options.js';
import type { SourceCache } from './sources.js';

/** What `Ingestion#submit` takes: a document request with its posted text or its uploaded file. */
export type SubmitInput = Omit<CreateDocumentRequest, 'content' | 'fileId'> & {
  content?: string;
  fileId?: string | undefined;
  upload?: { readonly id: string; readonly size: number };
};

/**
 * The owner key a document's job counts against in the queue (fair claims, the bound per
 * owner): today its user; a workspace once there are any.
 */
export const tenantOf = (doc: Pick<DocumentRecord, 'userId'>): string => doc.userId;

/** Bytes of a document's source, as recorded when it was submitted (0 when not recorded). */
export const sizeOf = (doc: DocumentRecord): number => {
  const size = doc.metadata.size;
  return typeof size === 'number' && Number.isFinite(size) && size > 0 ? size : 0;
};

/** What queueing documents needs. */
export interface SubmitDeps {
  readonly options: Pick<KnowledgeOptions, 'storage' | 'ids' | 'clock' | 'blobs' | 'caps' | 'maxQueuedDocuments' | 'limitHints'>;
  /** Where the texts of the jobs queued here are kept until they run. */
  readonly sources: SourceCache;
  /** Claims the jobs just queued at once (no polling delay). */
  readonly wake: () => void;
}

/**
 * Stores several documents as `submit` does, in one transaction: all of them are queued, or
 * (an error, the caller's queue too full for all of them) none. `stored` is called with each
 * document before it can be claimed.
 */
export async function submitDocuments(deps: SubmitDeps, caller: Caller, inputs: readonly SubmitInput[], stored?: (doc: DocumentRecord) => void): Promise<DocumentRecord[]> {
  if (inputs.length === 0) return [];
  const { storage, ids, clock } = deps.options;
  const now = clock.now();
  const items = inputs.map((input) => {
    const upload = input.upload;
    // A posted text's fileType says how to read it: refused before anything is stored when its name says otherwise.
    if (!upload) checkTextDocumentType(input.fileName, input.fileType);
    const id = ids.next('document');
    const text = upload ? undefined : new TextEncoder().encode(input.content ?? '');
    const document: DocumentRecord = {
      id,
      userId: caller.userId,
      projectId: input.projectId,
      fileId: upload ? upload.id : (input.fileId ?? null),
      sourceKey: upload ? upload.id : id,
      fileName: input.fileName,
      fileType: input.fileType,
      sourceType: input.sourceType,
      status: 'pending',
      chunkCount: 0,
      vectorCount: 0,
      error: null,
      metadata: { size: upload ? upload.size : (text?.byteLength ?? 0) },
      createdAt: now,
      updatedAt: now,
    };
    return { input, upload, text, document, jobId: ids.next('job') };
  });
  const tenant = tenantOf(caller);
  for (const { text, document } of items) if (text) await deps.options.blobs.put(document.sourceKey, text);
  try {
    await storage.transaction(async (tx) => {
      await deps.options.caps.reserve(tx, caller.userId, 'documents', items.length);
      await admit(deps.options, tx, tenant, items.length);
      for (const { input, upload, document, jobId } of items) {
        if (upload) {
          await tx.files.insert({ id: upload.id, userId: caller.userId, projectId: input.projectId, fileName: input.fileName, fileType: input.fileType, size: upload.size, createdAt: now });
        } else if (input.fileId && !(await tx.files.get(caller.userId, input.fileId))) {
          throw PlatformError.notFound('File not found');
        }
        await tx.documents.insert(document);
        await tx.jobs.insert({ id: jobId, kind: 'index_document', documentId: document.id, tenant, payload: {}, size: sizeOf(document), createdAt: now });
      }
    });
  } catch (error) {
    // Nothing half-written: the texts stored for documents that were not saved go again.
    for (const { text, document } of items) if (text) await deps.options.blobs.delete(document.sourceKey).catch(() => {});
    throw error;
  }
  for (const { text, document, jobId } of items) {
    stored?.(document);
    if (text) deps.sources.keep(jobId, text);
  }
  // Claimed at once here (no polling delay); any other instance may claim it too.
  deps.wake();
  return items.map((i) => i.document);
}

/**
 * First in a transaction that queues `adding` jobs of `tenant`: locks the tenant's queue (so
 * instances queueing for it at once count one after the other) and refuses with `rate_limited`,
 * naming the limit, when its jobs would pass `maxQueuedDocuments`. `replaced`: jobs of the
 * tenant the transaction removes first (a re-index replaces a document's job).
 */
export async function admit(options: Pick<KnowledgeOptions, 'maxQueuedDocuments' | 'limitHints'>, tx: StorageAdapter, tenant: string, adding: number, replaced = async () => 0): Promise<void> {
  const max = options.maxQueuedDocuments ?? DEFAULT_MAX_QUEUED_DOCUMENTS;
  const queued = (await tx.jobs.lockTenant(tenant)) - (await replaced());
  if (queued + adding <= max) return;
  const hint = options.limitHints?.maxQueuedDocuments ?? 'knowledge.maxQueuedDocuments';
  const more = adding === 1 ? 'one more' : `${adding} more`;
  throw new PlatformError(
    'rate_limited',
    `Too many documents queued for indexing: ${queued} of this user's are waiting or being indexed, and ${more} would pass the limit of ${max} per user (${hint}); try again when some have finished`,
    { details: { limit: 'maxQueuedDocuments', max, queued } },
  );
}
