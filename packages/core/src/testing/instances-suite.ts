import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../storage/types.js';
import type { StorageSuiteOptions } from './storage-options.js';

const at = new Date(Date.parse('2026-01-01T00:00:00.000Z'));

/**
 * In the enclosing `describe`: each test's adapter (`current`) and a second one on the same data,
 * as another instance opens it (`share`, closed after the test); the same adapter where there is
 * none, or where its transactions cannot be open together with the first's in one process.
 */
export function secondInstance(current: () => StorageAdapter, options: StorageSuiteOptions): () => { storage: StorageAdapter; other: StorageAdapter } {
  let storage: StorageAdapter;
  let other: StorageAdapter;
  beforeEach(async () => {
    storage = current();
    other = options.share && options.concurrentTransactions !== false ? await options.share(storage) : storage;
  });
  afterEach(async () => {
    if (other !== storage) await other.close();
  });
  return () => ({ storage, other });
}

/**
 * Writes that several instances make at once (`describeStorageAdapter` calls it): appends to one
 * chat racing from two adapters on the same data (`share`) get distinct, gap-free positions, and
 * "create the first key when none exists" under `lockBootstrap` creates one key however many
 * race. Without `share` (or with `concurrentTransactions: false`) the races run on one adapter.
 */
export function describeSharedWrites(current: () => StorageAdapter, options: StorageSuiteOptions): void {
  describe('writes racing from several instances', () => {
    const adapters = secondInstance(current, options);
    let storage: StorageAdapter;
    let other: StorageAdapter;
    beforeEach(() => {
      ({ storage, other } = adapters());
    });

    it('gives appends to one chat from two adapters distinct positions in one sequence', async () => {
      await storage.projects.insert({
        id: 'proj_c',
        userId: 'user_a',
        name: 'c',
        description: '',
        instructions: '',
        icon: '',
        color: '',
        model: 'm',
        provider: 'openai',
        credentialId: null,
        providerOptions: null,
        createdAt: at,
        updatedAt: at,
      });
      await storage.chats.insert({ id: 'chat_1', userId: 'user_a', projectId: 'proj_c', name: 'c', createdAt: at, updatedAt: at });
      const message = (text: string) => ({ role: 'user' as const, content: text, toolCalls: null, toolCallId: null, createdAt: at });
      await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? storage : other).chats.appendMessages('user_a', 'chat_1', [message(`${i}a`), message(`${i}b`)])));
      const stored = await storage.chats.messages('user_a', 'chat_1');
      expect(stored.map((m) => m.position)).toEqual(Array.from({ length: 60 }, (_, p) => p));
      // Each append's two messages are adjacent: no other append slipped between them.
      for (let p = 0; p < 60; p += 2) expect(String(stored[p + 1]?.content).replace('b', 'a')).toBe(stored[p]?.content);
      expect(new Set(stored.map((m) => m.content)).size).toBe(60);
    });

    it('leaves one default credential per user and provider when instances add and move defaults together', async () => {
      const credential = (n: number, isDefault: boolean | 'if-none') => ({
        id: `cred_${n}`,
        userId: 'user_a',
        name: `c${n}`,
        provider: 'openai',
        secret: 's',
        last4: 'abcd',
        fields: null,
        baseUrl: null,
        baseUrlSecret: null,
        proxy: false,
        isValid: null,
        isDefault,
        createdAt: at,
        updatedAt: at,
      });
      // The first credential of a provider, added 8 times at once: one of them is the default.
      const added = await Promise.all(Array.from({ length: 8 }, (_, n) => (n % 2 ? storage : other).credentials.insert(credential(n, 'if-none'))));
      expect(added.filter((c) => c.isDefault)).toHaveLength(1);
      const stored = async () => (await storage.credentials.list('user_a')).filter((c) => c.isDefault).map((c) => c.id);
      expect(await stored()).toEqual([added.find((c) => c.isDefault)?.id]);
      // Moved to each of them at once, and added as the default at once: still exactly one.
      await Promise.all([
        ...added.map((c, n) => (n % 2 ? other : storage).credentials.update('user_a', c.id, { isDefault: true, updatedAt: at })),
        ...Array.from({ length: 4 }, (_, n) => (n % 2 ? storage : other).credentials.insert(credential(10 + n, true))),
      ]);
      expect(await stored()).toHaveLength(1);
      expect((await storage.credentials.defaultOf('user_a', 'openai'))?.id).toBe((await stored())[0]);
    });

    it('creates one first key when instances check for none and create it together', async () => {
      const bootstrap = (s: StorageAdapter, n: number) =>
        s.transaction(async (tx) => {
          await tx.apiKeys.lockBootstrap();
          if ((await tx.apiKeys.count()) > 0) return false;
          await tx.apiKeys.insert({ id: `key_${n}`, userId: 'user_a', name: 'first', lookup: `lookup_${n}`, hash: 'h', createdAt: at, lastUsedAt: null });
          return true;
        });
      const created = await Promise.all(Array.from({ length: 8 }, (_, n) => bootstrap(n % 2 ? storage : other, n)));
      expect(created.filter(Boolean)).toHaveLength(1);
      expect(await storage.apiKeys.count()).toBe(1);
    });
  });
}
