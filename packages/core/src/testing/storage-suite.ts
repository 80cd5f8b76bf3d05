import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../storage/types.js';
import { describeSharedWrites } from './instances-suite.js';
import { describeJobQueue } from './job-queue-suite.js';
import { describeAccounts } from './storage-accounts-suite.js';
import { describeApprovals } from './storage-approvals-suite.js';
import { describeAudit } from './storage-audit-suite.js';
import { describeCredentialsAndChats } from './storage-chats-suite.js';
import { describeKnowledge } from './storage-knowledge-suite.js';
import type { StorageSuiteOptions } from './storage-options.js';
import { describeResponses } from './storage-responses-suite.js';
import { at, project, type StorageUnderTest } from './storage-rows.js';
import { describeToolsAndMcpServers } from './storage-tools-suite.js';
import { describeUserCounts } from './user-counts-suite.js';

export type { StorageSuiteOptions } from './storage-options.js';

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

    const reopenAdapter = options.reopen;
    const suite: StorageUnderTest = {
      current: () => storage,
      ...(reopenAdapter ? { reopen: async () => (storage = await reopenAdapter(storage)) } : {}),
    };

    describeAccounts(suite);
    describeKnowledge(suite);
    describeCredentialsAndChats(suite);
    describeToolsAndMcpServers(suite);
    describeApprovals(suite);
    describeResponses(suite);
    describeAudit(suite);

    describeJobQueue(() => storage, options);
    describeSharedWrites(() => storage, options);
    describeUserCounts(() => storage, options);

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
