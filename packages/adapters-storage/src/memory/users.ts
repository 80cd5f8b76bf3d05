import type { UserRepository } from '@agent-platform/core';
import { chatKey, clone, insertUnique, type Tables } from './tables.js';

/** Users in memory; `lockCounts` counts by scanning the tables. */
export function memoryUsers(tables: () => Tables): UserRepository {
  return {
    async insert(user) {
      insertUnique(tables().users, user.id, clone(user), 'User');
    },
    async get(id) {
      const user = tables().users.get(id);
      return user && clone(user);
    },
    // Transactions run one at a time already: the lock is the queue. Counted by scanning.
    async lockCounts(userId) {
      const t = tables();
      if (!t.users.has(userId)) return undefined;
      const owned = (rows: Map<string, { readonly userId: string }>) => {
        let n = 0;
        for (const row of rows.values()) if (row.userId === userId) n++;
        return n;
      };
      let messages = 0;
      for (const chat of t.chats.values()) if (chat.userId === userId) messages += t.messages.get(chatKey(userId, chat.id))?.length ?? 0;
      return {
        keys: owned(t.apiKeys),
        projects: owned(t.projects),
        credentials: owned(t.credentials),
        chats: owned(t.chats),
        tools: owned(t.tools),
        mcpServers: owned(t.mcpServers),
        documents: owned(t.documents),
        messages,
      };
    },
  };
}
