export { describeStorageAdapter, type StorageSuiteOptions } from './storage-suite.js';
export { describeBlobStore } from './blob-store-suite.js';
export { describeVectorStore, type VectorStoreSuiteOptions } from './vector-store-suite.js';
export { describeEmbeddingModel, type EmbeddingSuiteOptions } from './embedding-suite.js';
export { describeChatModel, type ChatModelSuiteOptions, type ScriptedChatReply } from './chat-model-suite.js';
export { describeToolSandbox, type ToolSandboxSuiteOptions } from './tool-sandbox-suite.js';
export { deepJson, deepValue, type NestingShape } from './deep-values.js';
export { postgresDatabase } from './postgres-run.js';
export { type PostgresCluster, createPostgresDatabase, findServerBinaries, startPostgresCluster, stopPostgresCluster } from './postgres-cluster.js';
