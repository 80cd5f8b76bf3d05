import type { DocumentStatus } from '../schemas/knowledge.js';
import type { Page } from './page.js';

export interface DocumentRecord {
  readonly id: string;
  readonly userId: string;
  readonly projectId: string;
  /** The caller's file the document is linked to (its upload, or one it names), or null. */
  readonly fileId: string | null;
  /**
   * Key of the blob the document's source lives under, chosen by the service: the document's
   * own id for posted text, the file's id for an uploaded file. Re-indexing reads it and deleting
   * the document releases it; it is never derived from `fileId` or `sourceType`, which callers set.
   */
  readonly sourceKey: string;
  readonly fileName: string;
  readonly fileType: string;
  readonly sourceType: string;
  readonly status: DocumentStatus;
  readonly chunkCount: number;
  readonly vectorCount: number;
  readonly error: string | null;
  /** size (bytes), pages, language, and what the parser found. */
  readonly metadata: Record<string, unknown>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type DocumentPatch = Partial<Pick<DocumentRecord, 'status' | 'chunkCount' | 'vectorCount' | 'error' | 'metadata'>> & { readonly updatedAt: Date };

export interface DocumentListQuery {
  readonly userId: string;
  readonly projectId: string;
  readonly status?: DocumentStatus;
  readonly limit: number;
  readonly offset: number;
}

export interface DocumentRepository {
  insert(document: DocumentRecord): Promise<void>;
  get(userId: string, id: string): Promise<DocumentRecord | undefined>;
  /** Newest first. `start` of the page is the offset. */
  list(query: DocumentListQuery): Promise<Page<DocumentRecord>>;
  /** Internal updates by the indexing pipeline (no owner check); undefined when gone. */
  update(id: string, patch: DocumentPatch): Promise<DocumentRecord | undefined>;
  /** Deletes the document, its chunks and jobs. True when a document of that user was deleted. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Documents in any of these states, all users, oldest first (restart recovery). */
  listByStatus(statuses: readonly DocumentStatus[]): Promise<DocumentRecord[]>;
  /**
   * The blob keys a project's rows refer to: each document's source (its own text, or the file
   * it was uploaded as) and each file uploaded into it. Deleting the project deletes those rows,
   * so these blobs go after it (no document of another project has one as its source).
   */
  blobKeysOfProject(projectId: string): Promise<string[]>;
}
