import type { StorageAdapter } from '@agent-platform/core';
import { expect } from 'vitest';

// The chats of a database from before chat ids were keyed per user (SQLite's 0020, PostgreSQL's
// 0011), as each migration test writes them in its own dialect: users `user_u` and `user_v` with
// projects `proj_u` and `proj_v`; `user_u`'s chat `my-chat` (created at 1, updated at 2) with
// "hi" and "hello [1]" (the second with `source`), and `user_v`'s chat `chat_v` with "yo".

export const source = { index: 1, chunkId: 'c', documentId: 'd', fileName: 'f.md', score: 0.5, excerpt: 'e' };

/** Expects those chats whole after the migration, and chat ids then unique per user only. */
export async function expectChatsKeyedByUser(storage: StorageAdapter): Promise<void> {
  const texts = async (userId: string, chatId: string) => (await storage.chats.messages(userId, chatId)).map((m) => m.content);
  expect(await storage.chats.get('user_u', 'my-chat')).toEqual({ id: 'my-chat', userId: 'user_u', projectId: 'proj_u', name: 'Mine', createdAt: new Date(1), updatedAt: new Date(2) });
  const messages = await storage.chats.messages('user_u', 'my-chat');
  expect(messages.map((m) => [m.position, m.content])).toEqual([
    [0, 'hi'],
    [1, 'hello [1]'],
  ]);
  expect(messages[1]?.sources).toEqual([source]);
  expect(await texts('user_v', 'chat_v')).toEqual(['yo']);
  // Another user's chat of the same id is a chat of their own.
  await storage.chats.insert({ id: 'my-chat', userId: 'user_v', projectId: 'proj_v', name: 'Also mine', createdAt: new Date(8), updatedAt: new Date(8) });
  await storage.chats.appendMessages('user_v', 'my-chat', [{ role: 'user', content: 'separate', toolCalls: null, toolCallId: null, createdAt: new Date(9) }]);
  expect(await texts('user_u', 'my-chat')).toEqual(['hi', 'hello [1]']);
  expect(await texts('user_v', 'my-chat')).toEqual(['separate']);
  // Messages still go with their chat, and chats with their project.
  await storage.projects.delete('user_u', 'proj_u');
  expect(await storage.chats.messages('user_u', 'my-chat')).toEqual([]);
  expect(await texts('user_v', 'my-chat')).toEqual(['separate']);
}
