import type { z } from 'zod';
import type { Caller, PlatformContext } from '../../context.js';
import type { UploadRequest, UploadResponse } from '../../schemas/knowledge.js';
import { extensionOf, fileTypeOf, unsupportedFileMessage } from '../file-types.js';
import type { BlobStore } from '../interfaces.js';
import type { Ingestion } from './ingestion.js';

/** What an upload needs: the platform's storage, ids and caps, and the knowledge base's ingestion and blobs. */
export interface UploadDeps {
  readonly ctx: Pick<PlatformContext, 'storage' | 'ids' | 'caps'>;
  readonly ingestion: Ingestion;
  readonly blobs: BlobStore;
  /** How long the answer waits for indexing (0: not at all). */
  readonly waitMs: number;
}

/**
 * Stores each file of a project's upload (the project checked already) and indexes it as a
 * document. A file of an unsupported type fails alone (no document); the others still index.
 * Waits up to `waitMs` for indexing, for all files together.
 */
export async function uploadFiles(deps: UploadDeps, caller: Caller, { projectId, files }: z.output<typeof UploadRequest>): Promise<UploadResponse> {
  const { storage, ids, caps } = deps.ctx;
  const { ingestion, blobs } = deps;
  // The whole upload is refused, nothing stored, when its documents would pass the user's cap.
  await caps.check(storage, caller.userId, 'documents', files.filter((file) => fileTypeOf(file.name, file.type)).length);
  const started = files.map((file) => {
    const fileType = fileTypeOf(file.name, file.type);
    if (!fileType) {
      return { file, fileType: extensionOf(file.name) || file.type || 'unknown', fileId: null, documentId: null as string | null, error: unsupportedFileMessage(file.name) };
    }
    return { file, fileType, fileId: ids.next('file'), documentId: null as string | null, error: null };
  });
  const supported = started.filter((s): s is typeof s & { fileId: string } => s.fileId !== null);
  await Promise.all(supported.map((s) => blobs.put(s.fileId, s.file.bytes)));
  try {
    // One transaction: every supported file becomes a document, or (an error, a full queue) none.
    const docs = await ingestion.submitAll(
      caller,
      supported.map((s) => ({ projectId, fileName: s.file.name, fileType: s.fileType, sourceType: 'upload' as const, upload: { id: s.fileId, size: s.file.bytes.byteLength } })),
    );
    for (const [i, s] of supported.entries()) s.documentId = (docs[i] as { id: string }).id;
  } catch (error) {
    await Promise.all(supported.map((s) => blobs.delete(s.fileId).catch(() => {}))); // no file without its row
    throw error;
  }
  const wait = deps.waitMs;
  if (wait > 0) await Promise.all(started.map((s) => (s.documentId ? ingestion.waitFor(s.documentId, wait) : undefined)));
  const results = await Promise.all(
    started.map(async (s) => {
      const doc = s.documentId ? await storage.documents.get(caller.userId, s.documentId) : undefined;
      const status = doc ? (doc.status === 'pending' ? 'processing' : doc.status) : 'failed';
      return {
        fileId: s.fileId,
        fileName: s.file.name,
        fileType: s.fileType,
        size: s.file.bytes.byteLength,
        documentId: s.documentId,
        status,
        error: s.error ?? doc?.error ?? null,
      };
    }),
  );
  const failed = results.filter((r) => r.status === 'failed').length;
  return {
    success: failed < results.length,
    files: results,
    message: failed === 0 ? `Uploaded ${results.length} file${results.length === 1 ? '' : 's'}` : `${failed} of ${results.length} files failed`,
  };
}
