import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import {
  type ChunkResponse,
  CreateDocumentRequest,
  type CreateDocumentResponse,
  type DocumentResponse,
  GetSettingsQuery,
  type KnowledgeSettingsResponse,
  ListChunksQuery,
  type ListChunksResponse,
  ListDocumentsQuery,
  type ListDocumentsResponse,
  PutSettingsRequest,
  type PutSettingsResponse,
  ReindexRequest,
  type ReindexResponse,
  SearchRequest,
  type SearchResponse,
  UploadRequest,
  type UploadResponse,
} from '../schemas/knowledge.js';
import { parseInput } from '../validation.js';
import type { IndexingEvent } from './indexing-events.js';
import type { KnowledgeService } from './service.js';

/**
 * Projects' knowledge bases: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `KnowledgeService`; the server calls the service with the values its routes parsed.
 */
export const knowledgeMethods = publicMethods<{ knowledge: KnowledgeService }>()({
  /**
   * `POST /api/knowledge/documents`: stores the document and indexes it in the background;
   * answers `completed` (or `failed`) when that finished within the wait, else `processing`.
   */
  async createDocument(caller: Caller, input: CreateDocumentRequest): Promise<CreateDocumentResponse> {
    return this.knowledge.createDocument(caller, parseInput(CreateDocumentRequest, input));
  },

  /**
   * `POST /api/knowledge/documents/stream`: the indexing events of a new document, ending with
   * `complete` or `error`. Invalid input and unknown projects throw before the first event.
   */
  async createDocumentStream(caller: Caller, input: CreateDocumentRequest): Promise<AsyncIterable<IndexingEvent>> {
    return this.knowledge.createDocumentStream(caller, parseInput(CreateDocumentRequest, input));
  },

  /**
   * `POST /api/knowledge/upload`: stores each file and indexes it as a document. A file of an
   * unsupported type fails alone (no document); the others still index. Waits for indexing
   * like `createDocument`, for all files together, unless `wait` is false (the `?wait=false` of
   * the route): then it answers once the files are stored, and `documentEvents` follows each.
   */
  async uploadFiles(caller: Caller, input: UploadRequest, options: { wait?: boolean } = {}): Promise<UploadResponse> {
    return this.knowledge.upload(caller, parseInput(UploadRequest, input), options);
  },

  /** `GET /api/knowledge/documents`: a project's documents, newest first. */
  async listDocuments(caller: Caller, query: ListDocumentsQuery): Promise<ListDocumentsResponse> {
    return this.knowledge.listDocuments(caller, parseInput(ListDocumentsQuery, query));
  },

  /** `GET /api/knowledge/documents/{id}`. */
  getDocument(caller: Caller, id: string): Promise<DocumentResponse> {
    return this.knowledge.getDocument(caller, id);
  },

  /**
   * `GET /api/knowledge/documents/{id}/events`: a document's indexing from now on, as the stream
   * route reports it (progress 10 to 90, then `complete` or `error`); a document whose indexing
   * has ended answers its final event alone.
   */
  documentEvents(caller: Caller, id: string, signal?: AbortSignal): Promise<AsyncIterable<IndexingEvent>> {
    return this.knowledge.documentEvents(caller, id, signal);
  },

  /** `GET /api/knowledge/chunks/{id}`: one chunk of the caller's knowledge, with its text (what a citation points at). */
  getChunk(caller: Caller, id: string): Promise<ChunkResponse> {
    return this.knowledge.getChunk(caller, id);
  },

  /** `GET /api/knowledge/documents/{id}/chunks`: a page of one of the caller's documents' chunks in document order. */
  async listDocumentChunks(caller: Caller, id: string, query: ListChunksQuery = {}): Promise<ListChunksResponse> {
    return this.knowledge.listChunks(caller, id, parseInput(ListChunksQuery, query));
  },

  /** `DELETE /api/knowledge/documents/{id}`: the document, its chunks and vectors (also mid-indexing). */
  deleteDocument(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.knowledge.deleteDocument(caller, id);
  },

  /** `POST /api/knowledge/search`. */
  async searchKnowledge(caller: Caller, input: SearchRequest): Promise<SearchResponse> {
    return this.knowledge.search(caller, parseInput(SearchRequest, input));
  },

  /**
   * Searches a project's knowledge base: the same call as {@link searchKnowledge} (named after
   * its route), under the name library users look for first.
   */
  async search(caller: Caller, input: SearchRequest): Promise<SearchResponse> {
    return this.knowledge.search(caller, parseInput(SearchRequest, input));
  },

  /** Vectors stored for a project under its current embedding model (for checks and operators). */
  countVectors(caller: Caller, projectId: string): Promise<number> {
    return this.knowledge.countVectors(caller, projectId);
  },

  /**
   * `POST /api/knowledge/reindex`: indexes the project's documents (or those named) again from
   * their stored sources with the project's current settings, through the job queue.
   */
  async reindexKnowledge(caller: Caller, input: ReindexRequest): Promise<ReindexResponse> {
    return this.knowledge.reindex(caller, parseInput(ReindexRequest, input));
  },

  /** `GET /api/knowledge/settings?projectId=`: every RAG setting's value in effect, secrets redacted, and which are defaults. */
  async getKnowledgeSettings(caller: Caller, query: GetSettingsQuery): Promise<KnowledgeSettingsResponse> {
    return this.knowledge.getSettings(caller, parseInput(GetSettingsQuery, query));
  },

  /**
   * `PUT /api/knowledge/settings`: changes the members given (null takes one back to its
   * default); a new embedding model or vector store re-indexes the project.
   */
  async putKnowledgeSettings(caller: Caller, input: PutSettingsRequest): Promise<PutSettingsResponse> {
    return this.knowledge.updateSettings(caller, parseInput(PutSettingsRequest, input));
  },
});
