import { type McpServerRepository, PlatformError } from '@agent-platform/core';
import { clone, compareNewestFirst, insertUnique, patchRow, projectPage, type Tables } from './tables.js';

/** MCP servers in memory, names unique within a project. */
export function memoryMcpServers(tables: () => Tables): McpServerRepository {
  return {
    async insert(server) {
      const t = tables();
      if (t.projects.get(server.projectId)?.userId !== server.userId) throw new Error(`Project ${server.projectId} does not exist`);
      if ([...t.mcpServers.values()].some((m) => m.projectId === server.projectId && m.name === server.name)) {
        throw new PlatformError('conflict', `An MCP server named "${server.name}" already exists in this project`);
      }
      insertUnique(t.mcpServers, server.id, clone(server), 'MCP server');
    },
    async get(userId, id) {
      const server = tables().mcpServers.get(id);
      return server?.userId === userId ? clone(server) : undefined;
    },
    async list(query) {
      return projectPage(tables().mcpServers, query);
    },
    async forProject(projectId) {
      return [...tables().mcpServers.values()]
        .filter((m) => m.projectId === projectId)
        .sort((a, b) => compareNewestFirst(b, a))
        .map(clone);
    },
    async setRequiresApproval(userId, id, requiresApproval, updatedAt) {
      return patchRow(tables().mcpServers, id, { requiresApproval, updatedAt }, userId);
    },
    async delete(userId, id) {
      const t = tables();
      if (t.mcpServers.get(id)?.userId !== userId) return false;
      return t.mcpServers.delete(id);
    },
  };
}
