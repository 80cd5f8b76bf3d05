export { memoryStorage } from './memory/index.js';
export { type SqliteStorageOptions, sqliteStorage } from './sqlite/index.js';
export { fileBlobStore, memoryBlobStore } from './blobs/index.js';
