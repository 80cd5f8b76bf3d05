export { fileBlobStore, memoryBlobStore } from './blobs/index.js';
export type { DatabaseStorage } from './kysely/storage.js';
export { memoryStorage } from './memory/index.js';
export { type PostgresStorageOptions, postgresStorage } from './postgres/index.js';
export { type SqliteStorageOptions, sqliteStorage } from './sqlite/index.js';
