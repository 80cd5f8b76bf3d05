import type { ChunkRecord, ChunkRepository } from '@agent-platform/core';
import { bm25Rank } from '@agent-platform/core/internal';
import { clone, deleteChunkRows, insertUnique, type Tables } from './tables.js';

/** The document's chunks in document order (not cloned). */
function chunksOf(t: Tables, documentId: string): ChunkRecord[] {
  return [...t.chunks.values()].filter((c) => c.documentId === documentId).sort((a, b) => a.index - b.index);
}

/** Chunks and their stored vectors in memory; keyword search ranks with `bm25Rank`. */
export function memoryChunks(tables: () => Tables): ChunkRepository {
  return {
    async replaceForDocument(documentId, chunks, embeddings) {
      const t = tables();
      if (!t.documents.has(documentId)) throw new Error(`Document ${documentId} does not exist`);
      if (embeddings && embeddings.vectors.length !== chunks.length) {
        throw new Error(`${embeddings.vectors.length} vectors for ${chunks.length} chunks`);
      }
      deleteChunkRows(t, documentId);
      chunks.forEach((chunk, i) => {
        insertUnique(t.chunks, chunk.id, clone(chunk), 'Chunk');
        if (embeddings) t.embeddings.set(chunk.id, { model: embeddings.model, vector: (embeddings.vectors[i] as Float32Array).slice() });
      });
    },
    async embeddingsByText(documentId, model) {
      const t = tables();
      const out = new Map<string, Float32Array>();
      for (const chunk of t.chunks.values()) {
        const stored = chunk.documentId === documentId ? t.embeddings.get(chunk.id) : undefined;
        if (stored?.model === model) out.set(chunk.text, stored.vector.slice());
      }
      return out;
    },
    async embeddingsById(projectId, ids, model) {
      const t = tables();
      const out = new Map<string, Float32Array>();
      for (const id of ids) {
        const stored = t.embeddings.get(id);
        if (stored?.model === model && t.chunks.get(id)?.projectId === projectId) out.set(id, stored.vector.slice());
      }
      return out;
    },
    async getMany(projectId, ids) {
      const t = tables();
      return ids.flatMap((id) => {
        const chunk = t.chunks.get(id);
        return chunk?.projectId === projectId ? [clone(chunk)] : [];
      });
    },
    async get(userId, id) {
      const t = tables();
      const chunk = t.chunks.get(id);
      return chunk && t.documents.get(chunk.documentId)?.userId === userId ? clone(chunk) : undefined;
    },
    async listByDocument(documentId) {
      return chunksOf(tables(), documentId).map(clone);
    },
    async pageByDocument(query) {
      const all = chunksOf(tables(), query.documentId);
      return { items: all.slice(query.offset, query.offset + query.limit).map(clone), total: all.length, start: query.offset };
    },
    async keywordSearch(projectId, query, limit) {
      const docs = [...tables().chunks.values()].filter((c) => c.projectId === projectId);
      return bm25Rank(docs, query, limit);
    },
    async anyInProject(projectId) {
      for (const c of tables().chunks.values()) if (c.projectId === projectId) return true;
      return false;
    },
  };
}
