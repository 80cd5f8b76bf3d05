export { describeStorageAdapter, type StorageSuiteOptions } from './storage-suite.js';
export { describeBlobStore } from './blob-store-suite.js';
