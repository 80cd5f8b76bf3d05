export { parseQdrantConfig, type QdrantConfig } from './config.js';
export { createQdrantVectorStore, type QdrantVectorStore, type QdrantVectorStoreOptions, qdrantPointId, upsertBatchSize } from './store.js';
