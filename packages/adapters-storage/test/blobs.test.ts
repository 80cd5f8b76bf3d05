import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBlobStore, postgresDatabase } from '@agent-platform/core/testing';
import type { DatabaseStorage } from '../src/kysely/storage.js';
import { postgresStorage } from '../src/postgres/index.js';
import { sqliteStorage } from '../src/sqlite/index.js';
import { fileBlobStore, memoryBlobStore } from '../src/blobs/index.js';

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
