import type { ToolRepository } from '@agent-platform/core';
import { clone, compareNewestFirst, insertUnique, patchRow, projectPage, type Tables } from './tables.js';

/** Tools in memory. */
export function memoryTools(tables: () => Tables): ToolRepository {
  return {
    async insert(tool) {
      const t = tables();
      if (t.projects.get(tool.projectId)?.userId !== tool.userId) throw new Error(`Project ${tool.projectId} does not exist`);
      insertUnique(t.tools, tool.id, clone(tool), 'Tool');
    },
    async get(userId, id) {
      const tool = tables().tools.get(id);
      return tool?.userId === userId ? clone(tool) : undefined;
    },
    async list(query) {
      return projectPage(tables().tools, query);
    },
    async enabled(projectId) {
      return [...tables().tools.values()]
        .filter((t) => t.projectId === projectId && t.enabled)
        .sort((a, b) => compareNewestFirst(b, a))
        .map(clone);
    },
    async update(userId, id, patch) {
      return patchRow(tables().tools, id, patch, userId);
    },
    async delete(userId, id) {
      const t = tables();
      if (t.tools.get(id)?.userId !== userId) return false;
      return t.tools.delete(id);
    },
  };
}
