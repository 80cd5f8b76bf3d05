import { isPlatformError, PlatformError } from '../../errors.js';
import type { DocumentRecord } from '../../storage/types.js';
import { completeEvent } from '../follow-document.js';
import type { IndexingEvent } from '../indexing-events.js';
import type { RunningJob } from '../job-queue.js';
import type { KnowledgeOptions } from '../options.js';
import type { DocumentIndexer } from './index-document.js';
import type { SourceCache } from './sources.js';

/** What running a job needs. */
export interface RunDeps {
  readonly options: Pick<KnowledgeOptions, 'clock' | 'blobs' | 'maxAttempts'>;
  /** The texts submitted here, which a job run here takes instead of reading the blob store. */
  readonly sources: SourceCache;
  readonly indexer: DocumentIndexer;
  /** Sends a document's indexing event to every instance. */
  readonly emit: (documentId: string, event: IndexingEvent) => void;
}

/**
 * Runs a claimed job. Every write that tells the job's outcome (the document's status, its
 * chunk rows) is fenced by the lease, so a run that lost its job (cancelled, or taken over
 * after its lease ran out) changes nothing and reports nothing: the run that holds it does.
 */
export async function runJob(deps: RunDeps, job: RunningJob): Promise<void> {
  const { clock } = deps.options;
  const { lease, signal } = job;
  const kept = deps.sources.take(lease.jobId);
  const documentId = lease.documentId;
  try {
    const maxAttempts = deps.options.maxAttempts ?? 3;
    if (lease.attempts > maxAttempts) {
      // Each earlier start ended without finishing (the process stopped): this one would too.
      throw new PlatformError('internal', `indexing was started ${lease.attempts - 1} times without finishing, over the limit of ${maxAttempts} attempts`);
    }
    let doc: DocumentRecord | undefined;
    const started = await job.fenced(async (tx) => {
      doc = await tx.documents.update(documentId, { status: 'processing', error: null, updatedAt: clock.now() });
    });
    if (!started || !doc) return; // cancelled or deleted meanwhile
    const result = await deps.indexer.index(doc, kept ?? (await source(deps, doc)), job);
    signal.throwIfAborted();
    const done = await job.fenced(async (tx) => {
      await tx.documents.update(documentId, { status: 'completed', ...result, updatedAt: clock.now() });
      await tx.jobs.finish(lease);
    });
    if (done) deps.emit(documentId, completeEvent(documentId));
  } catch (error) {
    // Aborted: shut down (the lease is released), cancelled, or the job lost to another run.
    if (signal.aborted) return;
    const reason = isPlatformError(error) || error instanceof Error ? error.message : String(error);
    const message = `Failed to index document: ${reason}`;
    const done = await job
      .fenced(async (tx) => {
        await tx.documents.update(documentId, { status: 'failed', error: message, updatedAt: clock.now() });
        await tx.jobs.finish(lease);
      })
      .catch(() => false);
    if (done) deps.emit(documentId, { type: 'error', message, documentId });
  }
}

/** The bytes of a document's source: the blob recorded with it (`sourceKey`), nothing a caller names. */
async function source(deps: RunDeps, doc: DocumentRecord): Promise<Uint8Array> {
  const bytes = await deps.options.blobs.get(doc.sourceKey);
  if (!bytes) throw new PlatformError('internal', 'the source of the document is missing');
  return bytes;
}
