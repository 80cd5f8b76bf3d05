export { describeStorageAdapter, type StorageSuiteOptions } from './storage-suite.js';
