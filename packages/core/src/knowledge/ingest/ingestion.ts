import type { Caller } from '../../context.js';
import { randomString } from '../../ids.js';
import { createMemoryNotifier, type Notifier } from '../../notify/notifier.js';
import type { KnowledgeSettings } from '../../schemas/knowledge.js';
import type { DocumentRecord, StorageAdapter } from '../../storage/types.js';
import { DocumentProcesses } from '../document-processes.js';
import { type IndexingEvent, IndexingEvents, type IndexingListener } from '../indexing-events.js';
import type { EmbeddingModel, VectorStore } from '../interfaces.js';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, DEFAULT_OVERTAKE_MS, DEFAULT_POLL_MS, DEFAULT_SPARE_JOBS, JobQueue } from '../job-queue.js';
import { DEFAULT_CONCURRENCY, DEFAULT_CONCURRENT_BYTES, type KnowledgeOptions } from '../options.js';
import type { ParseInput } from '../parse/index.js';
import type { DocumentReader } from '../read-document.js';
import { type KnowledgeStores, vectorNamespace } from '../stores.js';
import { DocumentIndexer } from './index-document.js';
import { type ReindexDeps, reindexDocuments, reindexProject } from './reindex.js';
import { runJob } from './run.js';
import { SourceCache } from './sources.js';
import { type SubmitDeps, type SubmitInput, submitDocuments } from './submit.js';

/**
 * The notifier channel telling every instance to stop its run of a document (deleted, or queued
 * again): `{ documentId, except? }`, `except` the id of its new job, whose run goes on.
 */
export const CANCEL_CHANNEL = 'knowledge.cancel';

/**
 * Ingestion (parse → chunk → embed → store) through a job queue persisted in storage. One
 * instance per platform.
 */
export class Ingestion {
  readonly #o: KnowledgeOptions;
  readonly #stores: KnowledgeStores;
  /** Claims jobs from storage and runs them (`runJob`) under the concurrency and byte limits. */
  readonly #queue: JobQueue;
  /** This instance's id, the owner of its leases. */
  readonly #instanceId: string;
  /** Indexing events from every instance's runs (through the notifier). */
  readonly #events: IndexingEvents;
  readonly #notifier: Notifier;
  readonly #stopCancels: () => void;
  /** The texts of jobs submitted by this process, until they run. */
  readonly #sources: SourceCache;
  #closed = false;
  /** Parses and chunks documents away from this thread, under the limits. */
  readonly #reader: DocumentReader;
  readonly #submitting: SubmitDeps;
  readonly #requeueing: ReindexDeps;

  constructor(options: KnowledgeOptions, stores: KnowledgeStores) {
    this.#o = options;
    this.#stores = stores;
    this.#instanceId = options.instanceId ?? `instance_${randomString(16)}`;
    this.#notifier = options.notifier ?? createMemoryNotifier();
    this.#events = new IndexingEvents(this.#notifier);
    this.#sources = new SourceCache(options.leaseMs);
    // Its run here stops at once, not at its next heartbeat or fenced write.
    this.#stopCancels = this.#notifier.subscribe(CANCEL_CHANNEL, (payload) => {
      const { documentId, except } = (payload ?? {}) as { documentId?: unknown; except?: unknown };
      if (typeof documentId === 'string') this.#queue.abort(documentId, typeof except === 'string' ? except : undefined);
    });
    this.#reader =
      options.reader ??
      new DocumentProcesses({
        ...(options.limits ? { limits: options.limits } : {}),
        ...(options.limitHints ? { limitHints: options.limitHints } : {}),
        ...(options.documentProcesses ? { processes: options.documentProcesses } : {}),
      });
    const emit = (documentId: string, event: IndexingEvent) => this.#events.emit(documentId, event);
    const indexer = new DocumentIndexer({ options, stores, reader: this.#reader, emit, closed: () => this.#closed });
    const wake = () => this.#queue.wake();
    this.#submitting = { options, sources: this.#sources, wake };
    this.#requeueing = { options, stores, cancelEverywhere: (documentId, except) => this.#cancelEverywhere(documentId, except), wake };
    const running = { options, sources: this.#sources, indexer, emit };
    this.#queue = new JobQueue({
      storage: options.storage,
      clock: options.clock,
      owner: this.#instanceId,
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      spare: DEFAULT_SPARE_JOBS,
      concurrentBytes: options.concurrentBytes ?? DEFAULT_CONCURRENT_BYTES,
      overtakeMs: options.overtakeMs ?? DEFAULT_OVERTAKE_MS,
      leaseMs: options.leaseMs ?? DEFAULT_LEASE_MS,
      heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      pollMs: options.pollMs ?? DEFAULT_POLL_MS,
      run: (job) => runJob(running, job),
    });
  }

  /**
   * Stores a pending document and its job, and queues it; `listener` gets its indexing events.
   * The source is either the posted text (`content`, kept in the blob store under the document
   * id) or a file just uploaded (`upload`: its bytes already in the blob store under its id; its
   * file row is stored with the document). A `fileId` the request names must be a file of the
   * caller (`not_found` "File not found" otherwise, as for a missing one): it only links the
   * document to that file, whose bytes are never this document's source. The blob a document's
   * source lives under is recorded with it (`sourceKey`), never derived from what callers set.
   * Refused with `rate_limited` when the caller's queue is full (`maxQueuedDocuments`).
   */
  async submit(caller: Caller, input: SubmitInput, listener?: IndexingListener): Promise<DocumentRecord> {
    const [document] = (await this.submitAll(caller, [input], listener && ((doc) => this.subscribe(doc.id, listener)))) as [DocumentRecord];
    return document;
  }

  /**
   * Stores several documents as `submit` does, in one transaction: all of them are queued, or
   * (an error, the caller's queue too full for all of them) none. `stored` is called with each
   * document before it can be claimed.
   */
  submitAll(caller: Caller, inputs: readonly SubmitInput[], stored?: (doc: DocumentRecord) => void): Promise<DocumentRecord[]> {
    return submitDocuments(this.#submitting, caller, inputs, stored);
  }

  /**
   * The text of a file that is not stored (a response's `input_file`): read by the same reader
   * as documents (txt, md, html, pdf, docx; its process, its time and size limits), the
   * caller's share of it, its text in chunks of the largest size without overlap, joined.
   */
  async readFileText(caller: Caller, file: { bytes: Uint8Array; fileName: string; fileType?: string | undefined }, signal?: AbortSignal): Promise<string> {
    const input: ParseInput = { bytes: file.bytes, fileName: file.fileName, ...(file.fileType ? { fileType: file.fileType } : {}) };
    const reading = await this.#reader.read(input, { chunkSize: 8192, chunkOverlap: 0 }, { ...(signal ? { signal } : {}), owner: caller.userId });
    return reading.chunks.map((c) => c.text).join('\n\n');
  }

  /** Calls `listener` with the indexing events of a document (run by any instance) until it completes or fails. */

  subscribe(documentId: string, listener: IndexingListener): () => void {
    return this.#events.subscribe(documentId, listener);
  }

  /** Resolves when the document's job has ended, on any instance (or after `ms`). True when it ended. */
  waitFor(documentId: string, ms: number): Promise<boolean> {
    return this.#events.waitFor(documentId, ms);
  }

  /**
   * After a start: takes back the jobs an earlier run of this instance id left leased (it is
   * dead: this is it), fails documents left pending or processing without a job, so no document
   * stays unfinished, and starts claiming jobs (polling for those of other instances and those
   * whose lease ran out).
   */
  async resume(): Promise<void> {
    const { storage } = this.#o;
    if (this.#o.instanceId) await storage.jobs.releaseOwner(this.#o.instanceId);
    const withJob = new Set((await storage.jobs.list()).map((j) => j.documentId));
    for (const doc of await storage.documents.listByStatus(['pending', 'processing'])) {
      if (!withJob.has(doc.id)) {
        await storage.documents.update(doc.id, {
          status: 'failed',
          error: 'Failed to index document: indexing was interrupted',
          updatedAt: this.#o.clock.now(),
        });
      }
    }
    this.#queue.start();
  }

  /** Stops taking jobs and aborts running ones, releasing their leases (any instance, or the next start, takes them). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#stopCancels();
    this.#events.close();
    await this.#queue.close();
    this.#sources.clear();
    await this.#reader.close();
  }

  /**
   * Deletes a document with its chunks and vectors, also while it is being indexed (on any
   * instance: its job goes with it, so the run's next heartbeat or write hears it is cancelled),
   * and the blobs it leaves unused: its own text, and a file of its owner that no other document
   * of theirs refers to any more. Another user's file is never touched.
   */
  async deleteDocument(caller: Caller, id: string): Promise<boolean> {
    const { storage, blobs } = this.#o;
    const doc = await storage.documents.get(caller.userId, id);
    if (!doc) return false;
    this.#queue.abort(id);
    const released = await storage.transaction(async (tx) => {
      await tx.jobs.cancel(id);
      if (!(await tx.documents.delete(caller.userId, id))) return undefined;
      const files = [...new Set([doc.sourceKey, doc.fileId].filter((key): key is string => key !== null && key !== doc.id))];
      const gone: string[] = [];
      for (const file of files) if (await tx.files.deleteIfUnreferenced(file)) gone.push(file);
      return doc.sourceKey === doc.id ? [doc.id, ...gone] : gone;
    });
    if (!released) return false;
    this.#cancelEverywhere(id);
    const settings = await this.#stores.settings(doc.projectId);
    const model = this.#stores.embedderFor(settings, doc.userId);
    await (await this.#stores.vectorsFor(settings)).deleteDocument(vectorNamespace(doc.projectId, model), id);
    for (const key of released) await blobs.delete(key);
    return true;
  }

  /** Queues documents of a project for indexing again (see `reindexDocuments`); answers the documents queued. */
  reindex(caller: Caller, projectId: string, documentIds?: readonly string[], also?: (tx: StorageAdapter) => Promise<void>): Promise<DocumentRecord[]> {
    return reindexDocuments(this.#requeueing, caller, projectId, documentIds, also);
  }

  /** Queues every document of a project again for a new embedding model or store, with its new settings (see `reindexProject`). */
  reindexProject(
    caller: Caller,
    projectId: string,
    change: { readonly previous: EmbeddingModel; readonly previousStore: VectorStore; readonly settings: KnowledgeSettings; readonly at: Date },
  ): Promise<number> {
    return reindexProject(this.#requeueing, caller, projectId, change);
  }

  /**
   * Stops the runs of a document on every instance once its job was cancelled in storage (all
   * but the run of its new job `except`, which may have started already).
   */
  #cancelEverywhere(documentId: string, except?: string): void {
    this.#queue.abort(documentId, except);
    this.#notifier.publish(CANCEL_CHANNEL, except ? { documentId, except } : { documentId }).catch(() => {
      // Not heard: the run stops at its next heartbeat or fenced write instead.
    });
  }
}
