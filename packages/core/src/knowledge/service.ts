import type { z } from 'zod';
import { type Caller, callerProject, type PlatformContext } from '../context.js';
import { PlatformError } from '../errors.js';
import { offsetPageFields } from '../paging.js';
import type {
  ChunkResponse,
  CreateDocumentRequest,
  CreateDocumentResponse,
  DocumentResponse,
  GetSettingsQuery,
  KnowledgeSettingsResponse,
  ListChunksQuery,
  ListChunksResponse,
  ListDocumentsQuery,
  ListDocumentsResponse,
  PutSettingsRequest,
  PutSettingsResponse,
  ReindexRequest,
  ReindexResponse,
  SearchRequest,
  SearchResponse,
  UploadRequest,
  UploadResponse,
} from '../schemas/knowledge.js';
import { buildKnowledge, type KnowledgeEngine } from './engine.js';
import { eventQueue, followDocument } from './follow-document.js';
import type { IndexingEvent } from './indexing-events.js';
import { uploadFiles } from './ingest/upload.js';
import { toKnowledgeChunk, toKnowledgeDocument } from './mappers.js';
import type { KnowledgeAdapters } from './options.js';
import type { Retriever } from './search/retrieve.js';
import { effectiveSettings } from './settings.js';
import { updateSettings } from './settings-update.js';
import { vectorNamespace } from './stores.js';

type DocumentBody = z.output<typeof CreateDocumentRequest>;
type DocumentsQuery = z.output<typeof ListDocumentsQuery>;
type ChunksQuery = z.output<typeof ListChunksQuery>;
type SearchBody = z.output<typeof SearchRequest>;
type ReindexBody = z.output<typeof ReindexRequest>;

/**
 * The knowledge area: a project's documents (posted, uploaded, indexed through the job queue),
 * their chunks, search, re-indexing and settings, and what a project's delete leaves to it
 * (`dropProject`). Without `adapters` the calls that need a knowledge base answer `unsupported`.
 */
export class KnowledgeService {
  readonly #ctx: PlatformContext;
  readonly #adapters: KnowledgeAdapters | undefined;
  readonly #engine: KnowledgeEngine | undefined;

  constructor(ctx: PlatformContext, deps: { readonly adapters: KnowledgeAdapters | undefined }) {
    this.#ctx = ctx;
    this.#adapters = deps.adapters;
    this.#engine = deps.adapters ? buildKnowledge(ctx, deps.adapters) : undefined;
  }

  /** What other areas use of the knowledge base (none without one): `retriever` searches for completions, `files` reads a response's files as documents are read. */
  get retriever(): Retriever | undefined {
    return this.#engine?.retriever;
  }
  get files(): Pick<KnowledgeEngine['ingestion'], 'readFileText'> | undefined {
    return this.#engine?.ingestion;
  }

  /** Resumes indexing jobs left by an earlier run. */
  async start(): Promise<void> {
    await this.#engine?.ingestion.resume();
  }

  /** Stops indexing, then closes the stores made for projects, the default vector store and the embedder (or a resolver owning embedders) when it has a close. */
  async close(): Promise<void> {
    await this.#engine?.ingestion.close();
    await this.#engine?.stores.closeStores();
    await this.#adapters?.vectors.close();
    await (this.#adapters?.embedder as { close?: () => Promise<void> } | undefined)?.close?.();
  }

  #kb(): KnowledgeEngine {
    if (this.#engine) return this.#engine;
    throw new PlatformError('unsupported', 'The knowledge base is not configured: construct AgentPlatform with `knowledge: { vectors, embedder }`');
  }

  #project(caller: Caller, projectId: string) {
    return callerProject(this.#ctx, caller, projectId);
  }

  /**
   * `POST /api/knowledge/documents`: stores the document and indexes it in the background;
   * answers `completed` (or `failed`) when that finished within the wait, else `processing`.
   */
  async createDocument(caller: Caller, body: DocumentBody): Promise<CreateDocumentResponse> {
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const doc = await kb.ingestion.submit(caller, body);
    await kb.ingestion.waitFor(doc.id, this.#adapters?.waitMs ?? 5000);
    const now = await this.#ctx.storage.documents.get(caller.userId, doc.id);
    if (now?.status === 'completed') {
      return { success: true, status: 'completed', message: 'Document indexed successfully', documentId: doc.id };
    }
    if (now?.status === 'failed') {
      return { success: false, status: 'failed', message: now.error ?? 'Failed to index document', documentId: null };
    }
    return { success: true, status: 'processing', message: 'Document is being indexed', documentId: doc.id };
  }

  /**
   * `POST /api/knowledge/documents/stream`: the indexing events of a new document, ending with
   * `complete` or `error`. Invalid input and unknown projects throw before the first event.
   */
  async createDocumentStream(caller: Caller, body: DocumentBody): Promise<AsyncIterable<IndexingEvent>> {
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const events = eventQueue<IndexingEvent>();
    await kb.ingestion.submit(caller, body, events.push);
    return {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const event = events.shift();
          if (event) {
            yield event;
            if (event.type !== 'progress') return;
          } else {
            await events.wait();
          }
        }
      },
    };
  }

  /**
   * `POST /api/knowledge/upload`: stores each file and indexes it as a document. A file of an
   * unsupported type fails alone (no document); the others still index. Waits for indexing
   * like `createDocument`, for all files together, unless `wait` is false (the `?wait=false` of
   * the route): then it answers once the files are stored, and `documentEvents` follows each.
   */
  async upload(caller: Caller, body: z.output<typeof UploadRequest>, options: { wait?: boolean } = {}): Promise<UploadResponse> {
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const waitMs = options.wait === false ? 0 : (this.#adapters?.waitMs ?? 5000);
    return uploadFiles({ ctx: this.#ctx, ingestion: kb.ingestion, blobs: kb.blobs, waitMs }, caller, body);
  }

  /** `GET /api/knowledge/documents`: a project's documents, newest first. */
  async listDocuments(caller: Caller, q: DocumentsQuery): Promise<ListDocumentsResponse> {
    await this.#project(caller, q.projectId);
    const page = await this.#ctx.storage.documents.list({
      userId: caller.userId,
      projectId: q.projectId,
      limit: q.limit,
      offset: q.offset,
      ...(q.status ? { status: q.status } : {}),
    });
    const documents = page.items.map((d) => {
      const { id, projectId, fileName, fileType, sourceType, status, chunkCount, vectorCount, createdAt, updatedAt } = toKnowledgeDocument(d);
      return { id, projectId, fileName, fileType, sourceType, status, chunkCount, vectorCount, createdAt, updatedAt };
    });
    return {
      success: true,
      documents,
      ...offsetPageFields(q.offset, page),
    };
  }

  /** `GET /api/knowledge/documents/{id}`. */
  async getDocument(caller: Caller, id: string): Promise<DocumentResponse> {
    const doc = await this.#ctx.storage.documents.get(caller.userId, id);
    if (!doc) throw PlatformError.notFound(`Document ${id} not found`);
    return { success: true, document: toKnowledgeDocument(doc) };
  }

  /**
   * `GET /api/knowledge/documents/{id}/events`: a document's indexing from now on, as the stream
   * route reports it (progress 10 to 90, then `complete` or `error`); a document whose indexing
   * has ended answers its final event alone. Follows uploads (PDF, DOCX) as the stream route
   * follows texts.
   */
  async documentEvents(caller: Caller, id: string, signal?: AbortSignal): Promise<AsyncIterable<IndexingEvent>> {
    const kb = this.#kb();
    const events = await followDocument({
      documentId: id,
      subscribe: (documentId, listener) => kb.ingestion.subscribe(documentId, listener),
      read: () => this.#ctx.storage.documents.get(caller.userId, id),
      signal,
    });
    if (!events) throw PlatformError.notFound(`Document ${id} not found`);
    return events;
  }

  /** `GET /api/knowledge/chunks/{id}`: one chunk of the caller's knowledge, with its text (what a citation points at). */
  async getChunk(caller: Caller, id: string): Promise<ChunkResponse> {
    const chunk = await this.#ctx.storage.chunks.get(caller.userId, id);
    if (!chunk) throw PlatformError.notFound(`Chunk ${id} not found`);
    return { success: true, chunk: toKnowledgeChunk(chunk) };
  }

  /**
   * `GET /api/knowledge/documents/{id}/chunks`: a page of one of the caller's documents' chunks
   * in document order, with their text, token counts and metadata (page, section).
   */
  async listChunks(caller: Caller, id: string, q: ChunksQuery): Promise<ListChunksResponse> {
    if (!(await this.#ctx.storage.documents.get(caller.userId, id))) throw new PlatformError('not_found', `Document ${id} not found`);
    const page = await this.#ctx.storage.chunks.pageByDocument({ documentId: id, limit: q.limit, offset: q.offset });
    return { success: true, chunks: page.items.map(toKnowledgeChunk), ...offsetPageFields(q.offset, page) };
  }

  /** `DELETE /api/knowledge/documents/{id}`: the document, its chunks and vectors (also mid-indexing). */
  async deleteDocument(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.#kb().ingestion.deleteDocument(caller, id))) throw PlatformError.notFound(`Document ${id} not found`);
    return { success: true, message: 'Document deleted' };
  }

  /** `POST /api/knowledge/search`. */
  async search(caller: Caller, body: SearchBody): Promise<SearchResponse> {
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const documents = await kb.retriever.search(caller, body.projectId, body);
    return {
      success: true,
      documents,
      message: documents.length === 0 ? 'No documents matched the query' : `Found ${documents.length} matching chunk${documents.length === 1 ? '' : 's'}`,
    };
  }

  /** Vectors stored for a project under its current embedding model (for checks and operators). */
  async countVectors(caller: Caller, projectId: string): Promise<number> {
    const kb = this.#kb();
    await this.#project(caller, projectId);
    const settings = await kb.stores.settings(projectId);
    const model = kb.stores.embedderFor(settings, caller.userId);
    return (await kb.stores.vectorsFor(settings)).count(vectorNamespace(projectId, model));
  }

  /**
   * `POST /api/knowledge/reindex`: indexes the project's documents (or those named) again from
   * their stored sources with the project's current settings, through the job queue; each
   * document goes `pending` → `processing` → `completed` and search answers its earlier chunks
   * until its new ones are written (`reindexDocuments`).
   */
  async reindex(caller: Caller, body: ReindexBody): Promise<ReindexResponse> {
    await this.#project(caller, body.projectId);
    const queued = await this.#kb().ingestion.reindex(caller, body.projectId, body.documentIds);
    const n = queued.length;
    return {
      success: true,
      message: n === 0 ? 'The project has no documents to re-index' : `Re-indexing ${n} document${n === 1 ? '' : 's'}`,
      queued: n,
      documentIds: queued.map((d) => d.id),
    };
  }

  /**
   * `GET /api/knowledge/settings?projectId=`: every RAG setting's value in effect (the project's,
   * else the default), secrets redacted, and which are defaults.
   */
  async getSettings(caller: Caller, { projectId }: z.output<typeof GetSettingsQuery>): Promise<KnowledgeSettingsResponse> {
    await this.#project(caller, projectId);
    return { success: true, ...effectiveSettings(await this.#kb().stores.settings(projectId)) };
  }

  /**
   * `PUT /api/knowledge/settings`: changes the members given (null takes one back to its
   * default; members left out keep their value). Secrets of the vector store configuration are
   * sealed at rest; one sent back redacted as GET answered it keeps the stored secret. A new
   * embedding model or vector store re-indexes the project; new chunking is applied by
   * `reindex` (the answer's `reindex` says which).
   */
  async updateSettings(caller: Caller, body: z.output<typeof PutSettingsRequest>): Promise<PutSettingsResponse> {
    await this.#project(caller, body.projectId);
    return updateSettings({ ctx: this.#ctx, ...this.#kb() }, caller, body);
  }

  /**
   * A project's delete (`ProjectCleanup`): reads what the delete of its rows takes with it (its
   * settings, embedding model and the blob keys of its documents) and answers the work to do
   * once that delete has succeeded: its blobs and its vectors go. Called before the delete,
   * which is what checks the owner: for another user's project the answer is never run.
   */
  async dropProject(caller: Caller, projectId: string): Promise<() => Promise<void>> {
    const kb = this.#engine;
    const settings = kb ? await kb.stores.settings(projectId) : undefined;
    const model = kb && settings ? kb.stores.embedderFor(settings, caller.userId) : undefined;
    const blobs = kb?.blobs;
    const blobKeys = blobs ? await this.#ctx.storage.documents.blobKeysOfProject(projectId) : [];
    return async () => {
      // The project's texts and uploaded files: nothing refers to them any more (a failure leaves
      // the blob behind, unread, rather than failing a delete that has happened).
      for (let i = 0; blobs && i < blobKeys.length; i += 16) {
        await Promise.all(blobKeys.slice(i, i + 16).map((key) => blobs.delete(key).catch(() => false)));
      }
      if (kb && settings && model) {
        // A third-party store that is down keeps the vectors of a deleted project; nothing reads them.
        await kb.stores
          .vectorsFor(settings)
          .then((store) => store.dropNamespace(vectorNamespace(projectId, model)))
          .catch(() => {});
      }
    };
  }
}
