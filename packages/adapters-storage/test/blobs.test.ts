import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStore, postgresDatabase } from '@agent-platform/core/testing';
import { describe, expect, it } from 'vitest';
import { fileBlobStore, memoryBlobStore } from '../src/blobs/index.js';
import type { DatabaseStorage } from '../src/kysely/storage.js';
import { postgresStorage } from '../src/postgres/index.js';
import { sqliteStorage } from '../src/sqlite/index.js';

describeBlobStore('memory', { create: () => memoryBlobStore() });

let dir = '';
describeBlobStore('files', {
  async create() {
    dir = await mkdtemp(join(tmpdir(), 'ap-blobs-'));
    return fileBlobStore({ dir: join(dir, 'blobs') });
  },
  cleanup: () => rm(dir, { recursive: true, force: true }),
});

// The database blob store (the server's PostgreSQL mode): on a real PostgreSQL server and on SQLite.
let database: DatabaseStorage | undefined;
const closeDatabase = async () => {
  await database?.close();
  database = undefined;
};
describeBlobStore('postgres', {
  async create() {
    database = await postgresStorage({ connectionString: await postgresDatabase() });
    return database.blobs;
  },
  cleanup: closeDatabase,
});
describeBlobStore('sqlite table', {
  async create() {
    database = await sqliteStorage({ path: ':memory:' });
    return database.blobs;
  },
  cleanup: closeDatabase,
});

// `get` hands on the Buffer the file read or the driver made, not a copy of it: copying a 9 MB
// file again cost ~40 ms of the main thread here. A copy (`new Uint8Array(buffer)`) is not a Buffer.
describe('stores that read their bytes hand them on without copying them again', () => {
  const big = () => {
    const bytes = new Uint8Array(3 * 1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = i % 253;
    return bytes;
  };
  it.each([
    ['files', async () => fileBlobStore({ dir: join(await mkdtemp(join(tmpdir(), 'ap-blobs-')), 'blobs') })],
    [
      'sqlite table',
      async () => {
        database = await sqliteStorage({ path: ':memory:' });
        return database.blobs;
      },
    ],
  ])('%s', async (_, create) => {
    const blobs = await create();
    try {
      const bytes = big();
      await blobs.put('big', bytes);
      const read = await blobs.get('big');
      expect(Buffer.isBuffer(read)).toBe(true);
      expect(Buffer.from(bytes).equals(read as Buffer)).toBe(true);
    } finally {
      await closeDatabase();
    }
  });
});
