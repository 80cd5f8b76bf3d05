import { PlatformError } from '../../errors.js';
import { createPacer } from '../../pacer.js';
import { DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_SIZE } from '../../schemas/knowledge.js';
import type { ChunkRecord, DocumentRecord } from '../../storage/types.js';
import type { IndexingEvent } from '../indexing-events.js';
import type { EmbeddingModel, VectorStore } from '../interfaces.js';
import type { RunningJob } from '../job-queue.js';
import type { KnowledgeOptions } from '../options.js';
import type { DocumentReader } from '../read-document.js';
import { type KnowledgeStores, vectorNamespace } from '../stores.js';

export const STEP_MESSAGES = {
  10: 'Parsing document',
  30: 'Extracting text',
  60: 'Creating embeddings',
  90: 'Storing vectors',
} as const;

/** What indexing a document needs. */
export interface IndexerDeps {
  readonly options: Pick<KnowledgeOptions, 'storage' | 'ids' | 'embedBatchSize'>;
  readonly stores: KnowledgeStores;
  /** Parses and chunks documents away from this thread, under the limits. */
  readonly reader: DocumentReader;
  /** Sends a document's indexing event to every instance. */
  readonly emit: (documentId: string, event: IndexingEvent) => void;
  /** Whether the knowledge base is closing (its runs aborted to be taken over, not cancelled). */
  readonly closed: () => boolean;
}

/** Indexes documents: parse and chunk (in the reader), embed, and write chunk rows and vectors. */
export class DocumentIndexer {
  readonly #d: IndexerDeps;

  constructor(deps: IndexerDeps) {
    this.#d = deps;
  }

  /** Per document, the write step of its latest indexing run: one run writes at a time. */
  readonly #writing = new Map<string, Promise<unknown>>();

  /** Indexes a claimed job's document from its source: answers what the document's row records of it. */
  async index(doc: DocumentRecord, bytes: Uint8Array, job: RunningJob): Promise<{ chunkCount: number; vectorCount: number; metadata: Record<string, unknown> }> {
    const { storage, ids } = this.#d.options;
    const { signal } = job;
    const { stores } = this.#d;
    const settings = await stores.settings(doc.projectId);
    const model = stores.embedderFor(settings, doc.userId);
    const vectors = await stores.vectorsFor(settings);
    const namespace = vectorNamespace(doc.projectId, model);
    const step = (progress: 10 | 30 | 60 | 90) => {
      signal.throwIfAborted();
      this.#d.emit(doc.id, { type: 'progress', progress, message: STEP_MESSAGES[progress] });
    };

    step(10);
    // Parsing and chunking run in a process of their own, under the limits (see DocumentProcesses).
    // The reader tells when parsing ended only when it took a while: else 30 follows at once.
    let parsed = false;
    const extracted = () => {
      if (!parsed) this.#d.emit(doc.id, { type: 'progress', progress: 30, message: STEP_MESSAGES[30] });
      parsed = true;
    };
    const reading = await this.#d.reader.read(
      { bytes, fileName: doc.fileName, fileType: doc.fileType },
      { chunkSize: settings.chunkSize ?? DEFAULT_CHUNK_SIZE, chunkOverlap: settings.chunkOverlap ?? DEFAULT_CHUNK_OVERLAP },
      { signal, onParsed: extracted, owner: job.lease.tenant },
    );
    signal.throwIfAborted();
    extracted();
    const pieces = reading.chunks;
    if (pieces.length === 0) throw PlatformError.invalid('the document has no text to index');
    // A document can make thousands of chunks: the work on them here yields to the event loop
    // every 20 ms, so other requests are answered meanwhile.
    const pace = createPacer();
    const chunks: ChunkRecord[] = [];
    for (const piece of pieces) {
      chunks.push({
        id: ids.next('chunk'),
        documentId: doc.id,
        projectId: doc.projectId,
        index: piece.index,
        text: piece.text,
        tokenCount: piece.tokenCount,
        metadata: {
          fileName: doc.fileName,
          fileType: doc.fileType,
          chunkIndex: piece.index,
          ...(piece.pageNumber !== undefined ? { pageNumber: piece.pageNumber, pageEnd: piece.pageEnd ?? piece.pageNumber } : {}),
          ...(piece.section !== undefined ? { section: piece.section } : {}),
        },
      });
      await pace();
    }

    step(60);
    // Text already embedded by this model (kept with the chunk rows) is not embedded again: a
    // re-index into another store embeds nothing, one with another chunk size only new text.
    const known = await storage.chunks.embeddingsByText(doc.id, model.id);
    const missing = [...new Set(chunks.map((c) => c.text))].filter((text) => !known.has(text));
    // Batches of similar lengths: a model padding a batch to its longest text wastes less.
    missing.sort((a, b) => a.length - b.length);
    const batch = this.#d.options.embedBatchSize ?? 32;
    for (let i = 0; i < missing.length; i += batch) {
      const texts = missing.slice(i, i + batch);
      const out = await model.embed(texts, { signal });
      signal.throwIfAborted();
      if (out.length !== texts.length) throw new PlatformError('internal', `the embedding model gave ${out.length} vectors for ${texts.length} texts`);
      for (const [j, text] of texts.entries()) known.set(text, out[j] as Float32Array);
      await pace();
    }
    const embedded = chunks.map((c) => known.get(c.text) as Float32Array);

    step(90);
    // A run superseded by a re-index (aborted) may still be writing: the new run writes after
    // it, so the chunk rows never end up the old run's while the vectors are the new run's.
    const previous = this.#writing.get(doc.id);
    const write = (async () => {
      await previous?.catch(() => {});
      // Only while this run still holds its job: one that lost it (cancelled, or taken over by
      // another instance after its lease ran out) must not remove the holder's vectors.
      signal.throwIfAborted();
      await job.heartbeat();
      signal.throwIfAborted();
      const upsertAll = async () => {
        for (let i = 0; i < chunks.length; i += 1000) {
          const slice = chunks.slice(i, i + 1000);
          await vectors.upsert(
            namespace,
            slice.map((c, j) => ({ id: c.id, documentId: doc.id, vector: embedded[i + j] as Float32Array })),
          );
          await pace();
          signal.throwIfAborted();
        }
      };
      // Order matters for crash safety and for search meanwhile. With `pruneDocument`: the new
      // vectors first (search skips a vector without its chunk row), then the chunk rows in one
      // transaction, then every other vector of the document goes (the old ones, and any an
      // interrupted run left): search answers the old chunks until the new ones are in, and a
      // crash anywhere leaves the old chunks or the new ones, never a mix. Without it: old
      // vectors first, then chunk rows, then new vectors, so a vector never exists without its
      // chunk row.
      const prune = vectors.pruneDocument?.bind(vectors);
      try {
        if (prune) await upsertAll();
        else await vectors.deleteDocument(namespace, doc.id);
        // The chunk rows land only if the job is still this run's, checked in their transaction.
        await job.fenced((tx) => tx.chunks.replaceForDocument(doc.id, chunks, { model: model.id, vectors: embedded }));
        signal.throwIfAborted();
        if (prune)
          await prune(
            namespace,
            doc.id,
            chunks.map((c) => c.id),
          );
        else await upsertAll();
      } finally {
        if ((signal.aborted && !this.#d.closed()) || !(await storage.documents.get(doc.userId, doc.id))) {
          // Deleted, or moved to another model or store, while its vectors were being written:
          // take them back out (that namespace is no longer searched, or already dropped).
          if (await this.#leftBehind(doc, model, vectors)) await vectors.deleteDocument(namespace, doc.id);
          signal.throwIfAborted();
        }
      }
    })();
    this.#writing.set(doc.id, write);
    try {
      await write;
    } finally {
      if (this.#writing.get(doc.id) === write) this.#writing.delete(doc.id);
    }
    return {
      chunkCount: chunks.length,
      vectorCount: chunks.length,
      metadata: {
        ...doc.metadata,
        ...(reading.pageCount !== undefined ? { pages: reading.pageCount } : {}),
        ...(reading.language ? { language: reading.language } : {}),
      },
    };
  }

  /**
   * Whether the vectors a run wrote for `doc` with `model` into `vectors` are no longer searched:
   * the document is gone, or its project moved to another model or store. Otherwise they are
   * where the run that now holds its job writes, which replaces them (its first write deletes
   * the document's vectors), and removing them would remove that run's.
   */
  async #leftBehind(doc: DocumentRecord, model: EmbeddingModel, vectors: VectorStore): Promise<boolean> {
    if (!(await this.#d.options.storage.documents.get(doc.userId, doc.id))) return true;
    const { stores } = this.#d;
    const settings = await stores.settings(doc.projectId);
    return stores.embedderFor(settings, doc.userId).id !== model.id || (await stores.vectorsFor(settings).catch(() => undefined)) !== vectors;
  }
}
