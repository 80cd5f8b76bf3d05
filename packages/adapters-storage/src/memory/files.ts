import type { FileRepository } from '@agent-platform/core';
import { clone, insertUnique, type Tables } from './tables.js';

/** Uploaded files in memory. */
export function memoryFiles(tables: () => Tables): FileRepository {
  return {
    async insert(file) {
      const t = tables();
      if (t.projects.get(file.projectId)?.userId !== file.userId) throw new Error(`Project ${file.projectId} does not exist`);
      insertUnique(t.files, file.id, clone(file), 'File');
    },
    async get(userId, id) {
      const file = tables().files.get(id);
      return file?.userId === userId ? clone(file) : undefined;
    },
    async deleteIfUnreferenced(id) {
      const t = tables();
      const file = t.files.get(id);
      if (!file) return false;
      for (const d of t.documents.values()) if (d.userId === file.userId && (d.fileId === id || d.sourceKey === id)) return false;
      return t.files.delete(id);
    },
  };
}
