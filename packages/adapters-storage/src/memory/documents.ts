import type { DocumentRepository } from '@agent-platform/core';
import { clone, compareNewestFirst, deleteDocumentRows, insertUnique, patchRow, type Tables } from './tables.js';

/** Documents in memory; deleting one takes its chunks and jobs with it. */
export function memoryDocuments(tables: () => Tables): DocumentRepository {
  return {
    async insert(doc) {
      const t = tables();
      if (t.projects.get(doc.projectId)?.userId !== doc.userId) throw new Error(`Project ${doc.projectId} does not exist`);
      insertUnique(t.documents, doc.id, clone(doc), 'Document');
    },
    async get(userId, id) {
      const doc = tables().documents.get(id);
      return doc?.userId === userId ? clone(doc) : undefined;
    },
    async list(query) {
      const matching = [...tables().documents.values()]
        .filter((d) => d.userId === query.userId && d.projectId === query.projectId && (!query.status || d.status === query.status))
        .sort(compareNewestFirst);
      return {
        items: matching.slice(query.offset, query.offset + query.limit).map(clone),
        total: matching.length,
        start: query.offset,
      };
    },
    async update(id, patch) {
      return patchRow(tables().documents, id, patch);
    },
    async delete(userId, id) {
      const t = tables();
      if (t.documents.get(id)?.userId !== userId) return false;
      deleteDocumentRows(t, id);
      return true;
    },
    async listByStatus(statuses) {
      return [...tables().documents.values()]
        .filter((d) => statuses.includes(d.status))
        .sort((a, b) => compareNewestFirst(b, a))
        .map(clone);
    },
    async blobKeysOfProject(projectId) {
      const t = tables();
      const keys = new Set<string>();
      for (const d of t.documents.values()) if (d.projectId === projectId && d.sourceKey) keys.add(d.sourceKey);
      for (const f of t.files.values()) if (f.projectId === projectId) keys.add(f.id);
      return [...keys];
    },
  };
}
