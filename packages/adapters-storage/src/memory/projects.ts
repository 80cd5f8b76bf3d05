import type { Page, ProjectListQuery, ProjectRecord, ProjectRepository } from '@agent-platform/core';
import { chatKey, clone, compareNewestFirst, deleteDocumentRows, insertUnique, patchRow, type Tables } from './tables.js';

function paginate(rows: ProjectRecord[], query: ProjectListQuery): Page<ProjectRecord> {
  const word = query.searchWord?.toLowerCase();
  const matching = rows.filter((p) => p.userId === query.userId && (!word || p.name.toLowerCase().includes(word))).sort(compareNewestFirst);
  const after = query.after;
  const start = after ? matching.filter((p) => compareNewestFirst(p, after) <= 0).length : (query.offset ?? 0);
  return { items: matching.slice(start, start + query.limit).map(clone), total: matching.length, start };
}

/** Projects in memory; deleting one takes its rows of every other table with it. */
export function memoryProjects(tables: () => Tables): ProjectRepository {
  return {
    async insert(project) {
      insertUnique(tables().projects, project.id, clone(project), 'Project');
    },
    async get(userId, id) {
      const project = tables().projects.get(id);
      return project?.userId === userId ? clone(project) : undefined;
    },
    async list(query) {
      return paginate([...tables().projects.values()], query);
    },
    async update(userId, id, patch) {
      return patchRow(tables().projects, id, patch, userId);
    },
    async usingCredential(userId, credentialId) {
      return [...tables().projects.values()]
        .filter((p) => p.userId === userId && p.credentialId === credentialId)
        .map((p) => p.id)
        .sort();
    },
    async namingNoCredential(userId, provider) {
      return [...tables().projects.values()]
        .filter((p) => p.userId === userId && p.provider === provider && p.credentialId === null)
        .map((p) => p.id)
        .sort();
    },
    async delete(userId, id) {
      const t = tables();
      if (t.projects.get(id)?.userId !== userId) return false;
      for (const doc of [...t.documents.values()]) if (doc.projectId === id) deleteDocumentRows(t, doc.id);
      for (const file of [...t.files.values()]) if (file.projectId === id) t.files.delete(file.id);
      for (const chat of [...t.chats.values()]) {
        if (chat.projectId === id) {
          t.chats.delete(chatKey(chat.userId, chat.id));
          t.messages.delete(chatKey(chat.userId, chat.id));
        }
      }
      for (const tool of [...t.tools.values()]) if (tool.projectId === id) t.tools.delete(tool.id);
      for (const server of [...t.mcpServers.values()]) if (server.projectId === id) t.mcpServers.delete(server.id);
      for (const approval of [...t.approvals.values()]) if (approval.projectId === id) t.approvals.delete(approval.id);
      for (const response of [...t.responses.values()]) if (response.projectId === id) t.responses.delete(response.id);
      t.settings.delete(id);
      return t.projects.delete(id);
    },
  };
}
