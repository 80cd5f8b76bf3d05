import { PlatformError, type ResponseRepository } from '@agent-platform/core';
import { clone, type Tables } from './tables.js';

/** Stored responses in memory, keyed by id (response ids are the service's, unique). */
export function memoryResponses(tables: () => Tables): ResponseRepository {
  return {
    async insert(record) {
      const t = tables();
      if (t.responses.has(record.id)) throw new PlatformError('conflict', `Response ${record.id} already exists`);
      t.responses.set(record.id, clone(record));
    },
    async get(userId, id) {
      const row = tables().responses.get(id);
      return row?.userId === userId ? clone(row) : undefined;
    },
    async update(userId, id, patch, from) {
      const t = tables();
      const row = t.responses.get(id);
      if (row?.userId !== userId || !from.includes(row.status)) return false;
      t.responses.set(id, clone({ ...row, ...patch }));
      return true;
    },
    async delete(userId, id) {
      const t = tables();
      if (t.responses.get(id)?.userId !== userId) return false;
      return t.responses.delete(id);
    },
  };
}
