import { beforeEach, expect, it } from 'vitest';
import type { ProjectRecord, StorageAdapter } from '../storage/types.js';
import { at, project, type StorageUnderTest } from './storage-rows.js';

/**
 * Users, API keys, projects (paging, cursors, the name filter) and transactions: the part of the
 * storage suite `describeStorageAdapter` runs first, at its top level.
 */
export function describeAccounts(suite: StorageUnderTest): void {
  let storage: StorageAdapter;
  beforeEach(() => {
    storage = suite.current();
  });

  it('stores and reads users', async () => {
    expect(await storage.users.get('user_a')).toEqual({ id: 'user_a', createdAt: at(0) });
    expect(await storage.users.get('user_missing')).toBeUndefined();
  });

  it('rejects a duplicate user id', async () => {
    await expect(storage.users.insert({ id: 'user_a', createdAt: at(1) })).rejects.toThrow();
  });

  it("finds keys by lookup, lists them per user newest first, and deletes only the owner's", async () => {
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
    const page = await storage.apiKeys.list({ userId: 'user_a', limit: 10, offset: 0 });
    expect([page.items.map((k) => k.id), page.total, page.start]).toEqual([['key_2', 'key_1'], 2, 0]);
    // A page at a time, with the user's total.
    const second = await storage.apiKeys.list({ userId: 'user_a', limit: 1, offset: 1 });
    expect([second.items.map((k) => k.id), second.total, second.start]).toEqual([['key_1'], 2, 1]);
    expect(await storage.apiKeys.list({ userId: 'user_a', limit: 1, offset: 2 })).toEqual({ items: [], total: 2, start: 2 });
    expect(await storage.apiKeys.list({ userId: 'user_missing', limit: 5, offset: 0 })).toEqual({ items: [], total: 0, start: 0 });
    expect((await storage.apiKeys.listAll()).map((k) => [k.id, k.userId])).toEqual([
      ['key_3', 'user_b'],
      ['key_2', 'user_a'],
      ['key_1', 'user_a'],
    ]);

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
    const p = project('user_a', 1, { description: 'd', instructions: 'You answer in French.', icon: '🤖', color: '#ff0000', provider: 'ollama' });
    await storage.projects.insert(p);
    expect(await storage.projects.get('user_a', p.id)).toEqual(p);
  });

  it("keeps a project's instructions apart from its description, long and multi-line, and changes them alone", async () => {
    const long = `Rules:\n${'Ne réponds qu’en français. 🙂 '.repeat(1100)}`.slice(0, 32_000);
    const p = project('user_a', 1, { description: 'Support bot', instructions: long });
    await storage.projects.insert(p);
    expect((await storage.projects.get('user_a', p.id))?.instructions).toBe(long);
    expect((await storage.projects.list({ userId: 'user_a', limit: 5 })).items[0]?.instructions).toBe(long);
    const updated = await storage.projects.update('user_a', p.id, { instructions: 'Be brief.', updatedAt: at(9) });
    expect(updated).toEqual({ ...p, instructions: 'Be brief.', updatedAt: at(9) });
    expect(await storage.projects.update('user_a', p.id, { description: 'Mail bot', updatedAt: at(10) })).toMatchObject({ description: 'Mail bot', instructions: 'Be brief.' });
  });

  it("never returns another user's project", async () => {
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
    expect(first.items.map((p) => p.id)).toEqual(Array.from({ length: 10 }, (_, i) => `proj_${String(25 - i).padStart(6, '0')}`));
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
    const names = async (searchWord: string) => (await storage.projects.list({ userId: 'user_a', limit: 10, searchWord })).items.map((p) => p.name);
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
}
