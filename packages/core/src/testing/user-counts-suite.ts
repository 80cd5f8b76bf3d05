import { beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessageRecord, StorageAdapter, UserCounts } from '../storage/types.js';
import { secondInstance } from './instances-suite.js';
import type { StorageSuiteOptions } from './storage-options.js';

const at = (seconds: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + seconds * 1000);

const none: UserCounts = { keys: 0, projects: 0, credentials: 0, chats: 0, tools: 0, mcpServers: 0, documents: 0, messages: 0 };

const rows = {
  key: (id: string, userId: string) => ({ id, userId, name: id, lookup: `lk_${id}`, hash: 'h', createdAt: at(1), lastUsedAt: null }),
  project: (id: string, userId: string, n = 1) => ({
    id,
    userId,
    name: id,
    description: '',
    instructions: '',
    icon: '',
    color: '',
    model: 'm',
    provider: 'openai',
    credentialId: null,
    providerOptions: null,
    createdAt: at(n),
    updatedAt: at(n),
  }),
  credential: (id: string, userId: string) => ({
    id,
    userId,
    name: id,
    provider: 'openai',
    secret: 's',
    last4: 'abcd',
    fields: null,
    baseUrl: null,
    baseUrlSecret: null,
    proxy: false,
    isValid: null,
    isDefault: false,
    createdAt: at(1),
    updatedAt: at(1),
  }),
  chat: (id: string, userId: string, projectId: string) => ({ id, userId, projectId, name: id, createdAt: at(1), updatedAt: at(1) }),
  tool: (id: string, userId: string, projectId: string) => ({
    id,
    userId,
    projectId,
    name: id,
    description: 'd',
    language: 'javascript' as const,
    code: 'function main() {}',
    parameters: {},
    dependencies: [],
    enabled: true,
    exposeOverMcp: false,
    requiresApproval: false,
    createdAt: at(1),
    updatedAt: at(1),
  }),
  server: (id: string, userId: string, projectId: string) => ({
    id,
    userId,
    projectId,
    name: id,
    transport: 'http' as const,
    url: 'https://mcp.example.com/mcp',
    command: null,
    args: [],
    headerNames: [],
    envNames: [],
    allowSampling: false,
    secrets: null,
    requiresApproval: false,
    createdAt: at(1),
    updatedAt: at(1),
  }),
  document: (id: string, userId: string, projectId: string) => ({
    id,
    userId,
    projectId,
    fileId: null,
    sourceKey: id,
    fileName: 'f.md',
    fileType: 'md',
    sourceType: 'upload',
    status: 'pending' as const,
    chunkCount: 0,
    vectorCount: 0,
    error: null,
    metadata: {},
    createdAt: at(1),
    updatedAt: at(1),
  }),
};

const message = (content: string): Omit<ChatMessageRecord, 'chatId' | 'position'> => ({ role: 'user', content, toolCalls: null, toolCallId: null, createdAt: at(2) });

/**
 * What the per-user caps stand on (`describeStorageAdapter` calls it): each user's counts follow
 * every insert and delete, cascades included, and a check of a count under `lockCounts` followed
 * by an insert in the same transaction lets no more through than the cap when many race, from
 * two adapters on the same data (`share`) where the adapter has them. Chat messages read from
 * the end come newest first, a page at a time.
 */
export function describeUserCounts(current: () => StorageAdapter, options: StorageSuiteOptions): void {
  describe('per-user counts', () => {
    const adapters = secondInstance(current, options);
    let storage: StorageAdapter;
    let other: StorageAdapter;
    beforeEach(() => {
      ({ storage, other } = adapters());
    });

    it("counts each kind of a user as rows come and go, cascades included, never another user's", async () => {
      expect(await storage.users.lockCounts('user_a')).toEqual(none);
      expect(await storage.users.lockCounts('user_missing')).toBeUndefined();
      for (const user of ['user_a', 'user_b']) {
        await storage.apiKeys.insert(rows.key(`key_${user}`, user));
        await storage.credentials.insert(rows.credential(`cred_${user}`, user));
        for (const p of [1, 2]) {
          const projectId = `proj_${user}_${p}`;
          await storage.projects.insert(rows.project(projectId, user, p));
          await storage.tools.insert(rows.tool(`tool_${user}_${p}`, user, projectId));
          await storage.mcpServers.insert(rows.server(`mcp_${user}_${p}`, user, projectId));
          await storage.documents.insert(rows.document(`doc_${user}_${p}`, user, projectId));
          for (const c of [1, 2]) {
            await storage.chats.insert(rows.chat(`chat_${user}_${p}_${c}`, user, projectId));
            await storage.chats.appendMessages(user, `chat_${user}_${p}_${c}`, [message('a'), message('b'), message('c')]);
          }
        }
      }
      await storage.apiKeys.insert(rows.key('key_a2', 'user_a'));
      const full = { keys: 2, projects: 2, credentials: 1, chats: 4, tools: 2, mcpServers: 2, documents: 2, messages: 12 };
      expect(await storage.users.lockCounts('user_a')).toEqual(full);
      expect(await storage.users.lockCounts('user_b')).toEqual({ ...full, keys: 1 });

      // Deleted one by one; another user's delete changes nothing.
      expect(await storage.chats.delete('user_b', 'chat_user_a_1_1')).toBe(false);
      expect(await storage.chats.delete('user_a', 'chat_user_a_1_1')).toBe(true);
      await storage.apiKeys.delete('user_a', 'key_a2');
      await storage.credentials.delete('user_a', 'cred_user_a');
      await storage.tools.delete('user_a', 'tool_user_a_1');
      await storage.mcpServers.delete('user_a', 'mcp_user_a_1');
      await storage.documents.delete('user_a', 'doc_user_a_1');
      const less = { keys: 1, projects: 2, credentials: 0, chats: 3, tools: 1, mcpServers: 1, documents: 1, messages: 9 };
      expect(await storage.users.lockCounts('user_a')).toEqual(less);
      // A project takes its chats (and their messages), tools, MCP servers and documents with it.
      expect(await storage.projects.delete('user_a', 'proj_user_a_2')).toBe(true);
      expect(await storage.users.lockCounts('user_a')).toEqual({ ...less, projects: 1, chats: 1, tools: 0, mcpServers: 0, documents: 0, messages: 3 });
      expect(await storage.users.lockCounts('user_b')).toEqual({ ...full, keys: 1 });
      // In a transaction that rolls back, nothing is counted.
      await expect(
        storage.transaction(async (tx) => {
          await tx.chats.appendMessages('user_a', 'chat_user_a_1_2', [message('d')]);
          expect((await tx.users.lockCounts('user_a'))?.messages).toBe(4);
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect((await storage.users.lockCounts('user_a'))?.messages).toBe(3);
    });

    it('lets no more than the cap through when checks and inserts under the lock race from several instances', async () => {
      await storage.projects.insert(rows.project('proj_p', 'user_a'));
      await storage.chats.insert(rows.chat('chat_p', 'user_a', 'proj_p'));
      const within = <T>(s: StorageAdapter, count: (c: UserCounts) => number, adding: number, cap: number, write: (tx: StorageAdapter) => Promise<T>) =>
        s.transaction(async (tx) => {
          const counts = (await tx.users.lockCounts('user_a')) as UserCounts;
          if (count(counts) + adding > cap) return false;
          await write(tx);
          return true;
        });
      const projects = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          within(
            n % 2 ? storage : other,
            (c) => c.projects,
            1,
            5,
            (tx) => tx.projects.insert(rows.project(`proj_${n}`, 'user_a', n + 2)),
          ),
        ),
      );
      expect(projects.filter(Boolean)).toHaveLength(4);
      expect((await storage.projects.list({ userId: 'user_a', limit: 100 })).total).toBe(5);
      const appends = await Promise.all(
        Array.from({ length: 12 }, (_, n) =>
          within(
            n % 2 ? other : storage,
            (c) => c.messages,
            2,
            9,
            (tx) => tx.chats.appendMessages('user_a', 'chat_p', [message(`${n}q`), message(`${n}a`)]),
          ),
        ),
      );
      expect(appends.filter(Boolean)).toHaveLength(4);
      expect(await storage.chats.messages('user_a', 'chat_p')).toHaveLength(8);
      expect(await storage.users.lockCounts('user_a')).toMatchObject({ projects: 5, chats: 1, messages: 8 });
    });

    it('reads a chat from its end, newest first, a page at a time', async () => {
      await storage.projects.insert(rows.project('proj_r', 'user_a'));
      await storage.chats.insert(rows.chat('chat_r', 'user_a', 'proj_r'));
      await storage.chats.appendMessages(
        'user_a',
        'chat_r',
        Array.from({ length: 7 }, (_, n) => message(`m${n}`)),
      );
      const newest = await storage.chats.recentMessages('user_a', 'chat_r', { limit: 3 });
      expect(newest.map((m) => [m.position, m.content])).toEqual([
        [6, 'm6'],
        [5, 'm5'],
        [4, 'm4'],
      ]);
      const older = await storage.chats.recentMessages('user_a', 'chat_r', { limit: 3, before: 4 });
      expect(older.map((m) => m.position)).toEqual([3, 2, 1]);
      expect((await storage.chats.recentMessages('user_a', 'chat_r', { limit: 3, before: 1 })).map((m) => m.position)).toEqual([0]);
      expect(await storage.chats.recentMessages('user_a', 'chat_r', { limit: 3, before: 0 })).toEqual([]);
      expect(await storage.chats.recentMessages('user_a', 'chat_missing', { limit: 3 })).toEqual([]);
      expect(newest[0]).toEqual((await storage.chats.messages('user_a', 'chat_r'))[6]);
    });
  });
}
