export { memoryStorage } from './memory/index.js';
export { type SqliteStorageOptions, sqliteStorage } from './sqlite/index.js';
