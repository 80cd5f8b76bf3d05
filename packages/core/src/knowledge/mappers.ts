import type { KnowledgeChunk, KnowledgeDocument } from '../schemas/knowledge.js';
import type { ChunkRecord, DocumentRecord } from '../storage/types.js';

export function toKnowledgeDocument(d: DocumentRecord): KnowledgeDocument {
  return {
    id: d.id,
    projectId: d.projectId,
    fileId: d.fileId,
    fileName: d.fileName,
    fileType: d.fileType,
    sourceType: d.sourceType,
    status: d.status,
    chunkCount: d.chunkCount,
    vectorCount: d.vectorCount,
    error: d.error,
    metadata: d.metadata,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
  };
}

/** A stored chunk as the API shows it (`content` is its text). */
export function toKnowledgeChunk({ id, documentId, projectId, index, text, tokenCount, metadata }: ChunkRecord): KnowledgeChunk {
  return { id, documentId, projectId, index, content: text, tokenCount, metadata };
}
