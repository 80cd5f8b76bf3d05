import { type ChatRepository, PlatformError } from '@agent-platform/core';
import { chatKey, clone, compareNewestFirst, patchRow, type Tables } from './tables.js';

/** Chats and their messages in memory, keyed by user and id (`chatKey`). */
export function memoryChats(tables: () => Tables): ChatRepository {
  return {
    async insert(chat) {
      const t = tables();
      if (t.projects.get(chat.projectId)?.userId !== chat.userId) throw new Error(`Project ${chat.projectId} does not exist`);
      const key = chatKey(chat.userId, chat.id);
      if (t.chats.has(key)) throw new PlatformError('conflict', `Chat ${chat.id} already exists`);
      t.chats.set(key, clone(chat));
      t.messages.set(key, []);
    },
    async get(userId, id) {
      const chat = tables().chats.get(chatKey(userId, id));
      return chat && clone(chat);
    },
    async list(query) {
      const matching = [...tables().chats.values()].filter((c) => c.userId === query.userId && (query.projectId === undefined || c.projectId === query.projectId)).sort(compareNewestFirst);
      return { items: matching.slice(query.offset, query.offset + query.limit).map(clone), total: matching.length, start: query.offset };
    },
    async update(userId, id, patch) {
      return patchRow(tables().chats, chatKey(userId, id), patch, userId);
    },
    async delete(userId, id) {
      const t = tables();
      t.messages.delete(chatKey(userId, id));
      for (const approval of [...t.approvals.values()]) if (approval.userId === userId && approval.chatId === id) t.approvals.delete(approval.id);
      return t.chats.delete(chatKey(userId, id));
    },
    async touch(userId, id, at) {
      const t = tables();
      const chat = t.chats.get(chatKey(userId, id));
      if (chat) t.chats.set(chatKey(userId, id), { ...chat, updatedAt: new Date(at.getTime()) });
    },
    async appendMessages(userId, chatId, messages) {
      const list = tables().messages.get(chatKey(userId, chatId));
      if (!list) throw new Error(`Chat ${chatId} does not exist`);
      // An empty list of sources (parts, reasoning blocks) is stored as none, as the other stores do.
      for (const { sources, parts, reasoning, provider, ...m } of messages) {
        const extra = { ...(sources?.length ? { sources } : {}), ...(parts?.length ? { parts } : {}), ...(reasoning?.length ? { reasoning } : {}), ...(provider !== undefined ? { provider } : {}) };
        list.push(clone({ ...m, ...extra, chatId, position: list.length }));
      }
    },
    async messages(userId, chatId) {
      return (tables().messages.get(chatKey(userId, chatId)) ?? []).map(clone);
    },
    async recentMessages(userId, chatId, { limit, before }) {
      const list = tables().messages.get(chatKey(userId, chatId)) ?? [];
      const end = Math.min(before ?? list.length, list.length);
      return list
        .slice(Math.max(0, end - limit), Math.max(0, end))
        .reverse()
        .map(clone);
    },
    async imageRefs(userId, scope) {
      const t = tables();
      const chats = 'chatId' in scope ? [t.chats.get(chatKey(userId, scope.chatId))] : [...t.chats.values()].filter((c) => c.userId === userId && c.projectId === scope.projectId);
      return chats.flatMap((chat) => {
        if (!chat || chat.userId !== userId) return [];
        const refs = new Set((t.messages.get(chatKey(userId, chat.id)) ?? []).flatMap((m) => (m.parts ?? []).flatMap((p) => (p.type === 'image' ? [p.ref] : []))));
        return [...refs].map((ref) => ({ chatId: chat.id, ref }));
      });
    },
  };
}
