import type { ApiKeyRepository } from '@agent-platform/core';
import { clone, compareNewestFirst, insertUnique, type Tables } from './tables.js';

/** API keys in memory. */
export function memoryApiKeys(tables: () => Tables): ApiKeyRepository {
  return {
    // Memory transactions run one at a time already: nothing to wait for.
    async lockBootstrap() {},
    async insert(key) {
      const t = tables();
      if ([...t.apiKeys.values()].some((k) => k.lookup === key.lookup)) throw new Error('API key lookup already exists');
      insertUnique(t.apiKeys, key.id, clone(key), 'API key');
    },
    async findByLookup(lookup) {
      const key = [...tables().apiKeys.values()].find((k) => k.lookup === lookup);
      return key && clone(key);
    },
    async list({ userId, limit, offset }) {
      const matching = [...tables().apiKeys.values()].filter((k) => k.userId === userId).sort(compareNewestFirst);
      return { items: matching.slice(offset, offset + limit).map(clone), total: matching.length, start: offset };
    },
    async listAll() {
      return [...tables().apiKeys.values()].sort(compareNewestFirst).map(clone);
    },
    async delete(userId, id) {
      const t = tables();
      if (t.apiKeys.get(id)?.userId !== userId) return false;
      return t.apiKeys.delete(id);
    },
    async touch(id, at) {
      const t = tables();
      const key = t.apiKeys.get(id);
      if (key) t.apiKeys.set(id, { ...key, lastUsedAt: new Date(at.getTime()) });
    },
    async count() {
      return tables().apiKeys.size;
    },
  };
}
