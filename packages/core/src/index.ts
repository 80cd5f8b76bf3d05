export * from './agent/chat-model.js';
export { type AgentEvent, type AgentTurn, runAgentTurn, type Source, systemContext } from './agent/loop.js';
export type { AgentTool, ToolSource } from './agent/tools.js';
export { displayPrefix, generateKey, hashKey, KEY_PREFIX, keyLookup, keyMatches, type NewKey } from './auth/keys.js';
export { type Clock, systemClock } from './clock.js';
export { type Coalescer, createCoalescer } from './coalescer.js';
export { DEFAULT_HISTORY_TOKENS } from './completions/history.js';
export { getModel, listModels, MODEL_OWNER } from './completions/models.js';
export type { AgentOptions, OperatorKeyLimits } from './completions/options.js';
export { toChatMessages } from './completions/request.js';
export { DEFAULT_MAX_OPEN_STREAMS, type StreamEvent, type StreamHubOptions } from './completions/streams/hub.js';
export { DEFAULT_STREAM_LEASE_MS, STREAM_CHANNEL, type StorageStreamStoreOptions, storageStreamStore } from './completions/streams/storage-stream-store.js';
export { memoryStreamStore, type StreamInfo, type StreamRecord, type StreamStore, type StreamWriter } from './completions/streams/stream-store.js';
export type { Caller, PlatformContext } from './context.js';
export { type ErrorCode, isPlatformError, PlatformError, type PlatformErrorOptions, type ValidationIssue } from './errors.js';
export { relativePaths, withRelativePaths } from './fs-paths.js';
export { createIdGenerator, ID_PREFIXES, type IdGenerator, type IdKind, randomString } from './ids.js';
export { type Chunk, type ChunkOptions, chunkDocument, countTokens } from './knowledge/chunk/index.js';
export { DocumentProcesses, type DocumentProcessesOptions } from './knowledge/document-processes.js';
export { fileTypeOf, SUPPORTED_FILE_TYPES } from './knowledge/file-types.js';
export type { IndexingEvent } from './knowledge/indexing-events.js';
export { STEP_MESSAGES } from './knowledge/ingest/index-document.js';
export type * from './knowledge/interfaces.js';
export type { VectorStoreProvider } from './knowledge/interfaces.js';
export { BM25_B, BM25_K1, bm25Ceiling, bm25Rank, bm25Relative, keywordTerms, keywordWords } from './knowledge/keywords.js';
export { DEFAULT_DOCUMENT_LIMITS, type DocumentLimitName, type DocumentLimits } from './knowledge/limits.js';
export type { EmbedderResolver, KnowledgeAdapters, VectorStoreConnection, VectorStoreFactory } from './knowledge/options.js';
export type { DocumentPage, DocumentSection, ParseInput } from './knowledge/parse/index.js';
export { detectLanguage, type ParsedDocument, type ParseLimits, parseDocument } from './knowledge/parse/index.js';
export { type DocumentReader, type DocumentReading, type ReadHooks, type ReadOptions, readDocument } from './knowledge/read-document.js';
export { DEFAULT_SIMILARITY, dot, fuseHybrid, mmrSelect, relatedness, type SimilarityScale, similarityScore } from './knowledge/search.js';
export { vectorNamespace } from './knowledge/stores.js';
export { type FetchLike, normaliseDigest, type OllamaRuntimeOptions, ollamaRuntime } from './local-models/ollama.js';
export { DEFAULT_LOCAL_MODEL_URL, defaultLocalModelBaseUrl, type LocalModelRuntime } from './local-models/runtime.js';
export { deleteLocalModel, type LocalModelServiceOptions, listLocalModels } from './local-models/service.js';
export { MCP_TOOL_PREFIX, mcpFunctionName } from './mcp/tool-source.js';
export type * from './mcp/types.js';
export { exceedsNesting, jsonExceedsNesting, MAX_NESTING_DEPTH, nestingError } from './nesting.js';
export { baseUrlProblem } from './net/base-url.js';
export { answerTooLarge, answerTooLargeIn, type BodyLimit, type BoundedRequest, boundedFetch, isEventStream, limitBody } from './net/bounded-body.js';
export { displayUrl, safeReason } from './net/display.js';
export { allowingUrls, type CheckedTarget, createGuardedFetch, type GuardedFetch, type GuardedFetchOptions, type HostResolver, type ProxyRoute, type ResolvedAddress } from './net/guarded-fetch.js';
export {
  type AddressClass,
  type AddressKind,
  classifyAddress,
  createOutboundPolicy,
  hostPortEntry,
  type OutboundPolicy,
  type OutboundPolicyOptions,
  type PolicyDecision,
  parseAllowedHosts,
  refusalError,
} from './net/policy.js';
export { isUnresolvedHost, unreachableAs, unresolvedHostError } from './net/unresolved-host.js';
export {
  type ByteLimit,
  byteBudget,
  DEFAULT_UPSTREAM_LIMITS,
  resolveUpstreamLimits,
  type UpstreamLimitName,
  type UpstreamLimits,
  utf8Bytes,
} from './net/upstream-limits.js';
export {
  createMemoryNotifier,
  decodeNotification,
  encodeNotification,
  MAX_NOTIFICATION_BYTES,
  type NotificationHandler,
  NotificationHandlers,
  type NotificationPayload,
  type Notifier,
} from './notify/notifier.js';
export { createPacer } from './pacer.js';
export { AgentPlatform } from './platform.js';
export type { AgentPlatformOptions } from './platform-options.js';
export { decodeCursor, encodeCursor } from './projects/cursor.js';
export { toProject } from './projects/service.js';
export { EMBEDDER_FORMS, EMBEDDERS, type EmbedderEntry, type EmbedderKind, splitEmbedderName } from './registries/embedders.js';
export { type CredentialProviderId, MODEL_PROVIDERS, type ModelProviderEntry, type ModelProviderId } from './registries/model-providers.js';
export { SHARED_VECTOR_STORE_IDS, VECTOR_STORES, type VectorStoreEntry } from './registries/vector-stores.js';
export * from './schemas.js';
export { createSecretBox, type SecretBox } from './security/secrets.js';
export type * from './storage/types.js';
export { codeSyntaxError } from './tools/code-syntax.js';
export { FairQueue, type FairQueueLimits, FairScheduler } from './tools/fair-queue.js';
export { capLogs, jsonWithinDepth, parseToolResult, TOOL_LIMITS } from './tools/limits.js';
export { DEFAULT_TOOL_QUEUE, type ToolsOptions } from './tools/project-tools.js';
export type * from './tools/sandbox.js';
export { SchemaValidator, type SchemaValidatorOptions } from './tools/schema-validator.js';
export { DEFAULT_USER_CAPS, UserCapGuard, type UserCapName, type UserCaps } from './user-caps.js';
export { parseInput } from './validation.js';
