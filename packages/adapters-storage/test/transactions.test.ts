import type { StorageAdapter } from '@agent-platform/core';
import { postgresDatabase } from '@agent-platform/core/testing';
import { describe, expect, it } from 'vitest';
import { memoryStorage } from '../src/memory/index.js';
import { postgresStorage } from '../src/postgres/index.js';
import { sqliteStorage } from '../src/sqlite/index.js';

const at = new Date('2026-01-01T00:00:00.000Z');
const adapters: [string, () => Promise<StorageAdapter>][] = [
  ['memory', async () => memoryStorage()],
  ['sqlite', () => sqliteStorage({ path: ':memory:' })],
  ['postgres', async () => postgresStorage({ connectionString: await postgresDatabase() })],
];

describe.each(adapters)('%s transactions', (_name, create) => {
  it('runs nested transactions inside the outer one, at any depth', async () => {
    const storage = await create();
    try {
      const result = await storage.transaction((tx) =>
        tx.transaction((inner) =>
          inner.transaction(async (innermost) => {
            await innermost.users.insert({ id: 'user_a', createdAt: at });
            return 'done';
          }),
        ),
      );
      expect(result).toBe('done');
      expect(await storage.users.get('user_a')).toEqual({ id: 'user_a', createdAt: at });

      await expect(
        storage.transaction(async (tx) => {
          await tx.users.insert({ id: 'user_b', createdAt: at });
          await tx.transaction((inner) => inner.users.insert({ id: 'user_c', createdAt: at }));
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await storage.users.get('user_b')).toBeUndefined();
      expect(await storage.users.get('user_c')).toBeUndefined();
    } finally {
      await storage.close();
    }
  });

  it('keeps concurrent transactions apart: one rolling back does not undo the other', async () => {
    const storage = await create();
    try {
      const failing = storage.transaction(async (tx) => {
        await tx.users.insert({ id: 'user_a', createdAt: at });
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('abort');
      });
      const succeeding = storage.transaction((tx) => tx.users.insert({ id: 'user_b', createdAt: at }));
      await expect(failing).rejects.toThrow('abort');
      await succeeding;
      expect(await storage.users.get('user_a')).toBeUndefined();
      expect(await storage.users.get('user_b')).toEqual({ id: 'user_b', createdAt: at });
    } finally {
      await storage.close();
    }
  });
});
