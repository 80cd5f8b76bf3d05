import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProjectRecord, StorageAdapter } from '../storage/types.js';

export interface StorageSuiteOptions {
  /** A fresh, empty adapter for one test. */
  create(): Promise<StorageAdapter> | StorageAdapter;
  /**
   * Closes `adapter` and opens the same data again, for adapters that persist (a file
   * database). Omit for adapters that forget everything on close.
   */
  reopen?(adapter: StorageAdapter): Promise<StorageAdapter>;
}

const t0 = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(t0 + seconds * 1000);

function project(userId: string, n: number, overrides: Partial<ProjectRecord> = {}): ProjectRecord {
  return {
    id: `proj_${String(n).padStart(6, '0')}`,
    userId,
    name: `Project ${n}`,
    description: '',
    icon: '',
    color: '',
    model: 'gpt-4o-mini',
    provider: 'openai',
    createdAt: at(n),
    updatedAt: at(n),
    ...overrides,
  };
}

/**
 * The behaviour every `StorageAdapter` must have. Call it inside a vitest test file:
 * `describeStorageAdapter('sqlite', { create: () => sqliteStorage({ path: ':memory:' }) })`.
 */
export function describeStorageAdapter(name: string, options: StorageSuiteOptions): void {
  describe(`StorageAdapter conformance: ${name}`, () => {
    let storage: StorageAdapter;

    beforeEach(async () => {
      storage = await options.create();
      await storage.users.insert({ id: 'user_a', createdAt: at(0) });
      await storage.users.insert({ id: 'user_b', createdAt: at(0) });
    });
    afterEach(async () => {
      await storage.close();
    });

    it('stores and reads users', async () => {
      expect(await storage.users.get('user_a')).toEqual({ id: 'user_a', createdAt: at(0) });
      expect(await storage.users.get('user_missing')).toBeUndefined();
    });

    it('rejects a duplicate user id', async () => {
      await expect(storage.users.insert({ id: 'user_a', createdAt: at(1) })).rejects.toThrow();
    });

    it('finds keys by lookup, lists them per user newest first, and deletes only the owner\'s', async () => {
      const key = (id: string, userId: string, s: number) => ({
        id,
        userId,
        name: id,
        lookup: `lk_${id}`,
        hash: `h_${id}`,
        createdAt: at(s),
        lastUsedAt: null,
      });
      await storage.apiKeys.insert(key('key_1', 'user_a', 1));
      await storage.apiKeys.insert(key('key_2', 'user_a', 2));
      await storage.apiKeys.insert(key('key_3', 'user_b', 3));
      expect(await storage.apiKeys.count()).toBe(3);
      expect(await storage.apiKeys.findByLookup('lk_key_2')).toEqual(key('key_2', 'user_a', 2));
      expect(await storage.apiKeys.findByLookup('nope')).toBeUndefined();
      expect((await storage.apiKeys.list('user_a')).map((k) => k.id)).toEqual(['key_2', 'key_1']);

      await storage.apiKeys.touch('key_1', at(10));
      expect((await storage.apiKeys.findByLookup('lk_key_1'))?.lastUsedAt).toEqual(at(10));

      expect(await storage.apiKeys.delete('user_a', 'key_3')).toBe(false);
      expect(await storage.apiKeys.delete('user_b', 'key_3')).toBe(true);
      expect(await storage.apiKeys.delete('user_b', 'key_3')).toBe(false);
      expect(await storage.apiKeys.count()).toBe(2);
    });

    it('rejects a duplicate key lookup', async () => {
      const key = { id: 'key_1', userId: 'user_a', name: 'k', lookup: 'same', hash: 'h', createdAt: at(1), lastUsedAt: null };
      await storage.apiKeys.insert(key);
      await expect(storage.apiKeys.insert({ ...key, id: 'key_2' })).rejects.toThrow();
    });

    it('round-trips a project with every field', async () => {
      const p = project('user_a', 1, { description: 'd', icon: '🤖', color: '#ff0000', provider: 'ollama' });
      await storage.projects.insert(p);
      expect(await storage.projects.get('user_a', p.id)).toEqual(p);
    });

    it('never returns another user\'s project', async () => {
      const p = project('user_a', 1);
      await storage.projects.insert(p);
      expect(await storage.projects.get('user_b', p.id)).toBeUndefined();
      expect(await storage.projects.update('user_b', p.id, { name: 'x', updatedAt: at(5) })).toBeUndefined();
      expect(await storage.projects.delete('user_b', p.id)).toBe(false);
      expect((await storage.projects.list({ userId: 'user_b', limit: 10 })).total).toBe(0);
      expect(await storage.projects.get('user_a', p.id)).toEqual(p);
    });

    it('updates only the given fields', async () => {
      const p = project('user_a', 1, { description: 'keep' });
      await storage.projects.insert(p);
      const updated = await storage.projects.update('user_a', p.id, { name: 'Renamed', updatedAt: at(9) });
      expect(updated).toEqual({ ...p, name: 'Renamed', updatedAt: at(9) });
      expect(await storage.projects.get('user_a', p.id)).toEqual(updated);
    });

    it('deletes a project', async () => {
      await storage.projects.insert(project('user_a', 1));
      await storage.projects.insert(project('user_a', 2));
      expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
      expect((await storage.projects.list({ userId: 'user_a', limit: 10 })).total).toBe(1);
      expect(await storage.projects.get('user_a', 'proj_000001')).toBeUndefined();
      expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(false);
    });

    it('lists newest first with total, limit and offset', async () => {
      for (let n = 1; n <= 25; n++) await storage.projects.insert(project('user_a', n));
      await storage.projects.insert(project('user_b', 99));
      const first = await storage.projects.list({ userId: 'user_a', limit: 10 });
      expect(first.total).toBe(25);
      expect(first.items.map((p) => p.id)).toEqual(
        Array.from({ length: 10 }, (_, i) => `proj_${String(25 - i).padStart(6, '0')}`),
      );
      const last = await storage.projects.list({ userId: 'user_a', limit: 10, offset: 20 });
      expect(last.items.map((p) => p.name)).toEqual(['Project 5', 'Project 4', 'Project 3', 'Project 2', 'Project 1']);
      expect(last.start).toBe(20);
      expect((await storage.projects.list({ userId: 'user_a', limit: 10, offset: 30 })).items).toEqual([]);
      const tenth = first.items[9] as ProjectRecord;
      const next = await storage.projects.list({ userId: 'user_a', limit: 10, after: tenth });
      expect(next.start).toBe(10);
      expect(next.items[0]?.id).toBe('proj_000015');
    });

    it('breaks createdAt ties by id, descending, and pages after a position', async () => {
      // Same timestamp for all: order falls back to id.
      for (let n = 1; n <= 5; n++) await storage.projects.insert(project('user_a', n, { createdAt: at(100) }));
      const all = await storage.projects.list({ userId: 'user_a', limit: 10 });
      expect(all.items.map((p) => p.id)).toEqual(['proj_000005', 'proj_000004', 'proj_000003', 'proj_000002', 'proj_000001']);
      const third = all.items[2] as ProjectRecord;
      const after = await storage.projects.list({ userId: 'user_a', limit: 10, after: { createdAt: third.createdAt, id: third.id } });
      expect(after.items.map((p) => p.id)).toEqual(['proj_000002', 'proj_000001']);
      expect(after.total).toBe(5);
      expect(after.start).toBe(3);
    });

    it('filters by name, case-insensitively, with % and _ as literal characters', async () => {
      await storage.projects.insert(project('user_a', 1, { name: 'Support Bot' }));
      await storage.projects.insert(project('user_a', 2, { name: 'sales assistant' }));
      await storage.projects.insert(project('user_a', 3, { name: '100% coverage' }));
      await storage.projects.insert(project('user_a', 4, { name: 'snake_case' }));
      await storage.projects.insert(project('user_a', 5, { name: 'snakeXcase' }));
      const names = async (searchWord: string) =>
        (await storage.projects.list({ userId: 'user_a', limit: 10, searchWord })).items.map((p) => p.name);
      expect(await names('BOT')).toEqual(['Support Bot']);
      expect(await names('s')).toEqual(['snakeXcase', 'snake_case', 'sales assistant', 'Support Bot']);
      expect(await names('%')).toEqual(['100% coverage']);
      expect(await names('e_c')).toEqual(['snake_case']);
      expect((await storage.projects.list({ userId: 'user_a', limit: 1, searchWord: 's' })).total).toBe(4);
      const afterSales = { createdAt: at(2), id: 'proj_000002' };
      const filtered = await storage.projects.list({ userId: 'user_a', limit: 10, searchWord: 's', after: afterSales });
      expect(filtered.items.map((p) => p.name)).toEqual(['Support Bot']);
      expect(filtered.start).toBe(3);
    });

    it('commits a transaction and rolls back a failed one', async () => {
      await storage.transaction(async (tx) => {
        await tx.users.insert({ id: 'user_c', createdAt: at(1) });
        await tx.projects.insert(project('user_c', 1));
      });
      expect(await storage.projects.get('user_c', 'proj_000001')).toBeDefined();

      await expect(
        storage.transaction(async (tx) => {
          await tx.users.insert({ id: 'user_d', createdAt: at(1) });
          await tx.projects.insert(project('user_d', 2));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(await storage.users.get('user_d')).toBeUndefined();
      expect(await storage.projects.get('user_d', 'proj_000002')).toBeUndefined();
    });

    if (options.reopen) {
      const reopen = options.reopen;
      it('keeps everything after close and reopen', async () => {
        const p = project('user_a', 1, { description: 'persisted', color: '#00ff00' });
        await storage.projects.insert(p);
        await storage.apiKeys.insert({ id: 'key_1', userId: 'user_a', name: 'k', lookup: 'lk', hash: 'h', createdAt: at(1), lastUsedAt: null });
        storage = await reopen(storage);
        expect(await storage.users.get('user_a')).toEqual({ id: 'user_a', createdAt: at(0) });
        expect(await storage.projects.get('user_a', p.id)).toEqual(p);
        expect((await storage.apiKeys.findByLookup('lk'))?.userId).toBe('user_a');
        expect((await storage.projects.list({ userId: 'user_a', limit: 5 })).total).toBe(1);
      });
    }
  });
}
