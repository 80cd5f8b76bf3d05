/**
 * Helpers the Agent Platform packages share (the server, the adapters, the sandbox, MCP):
 * not a public API. They may change in any release; library users import
 * `@agent-platform/core` and `@agent-platform/core/schemas`.
 */
export { type AgentEvent, type AgentTurn, runAgentTurn, type Source, systemContext } from './agent/loop.js';
export type { RunKey } from './agent-mcp/cancellations.js';
export { AGENT_MCP_TOOL_NAMES, AGENT_MCP_TOOLS, type AgentMcpTool, projectToolForMcp, searchKnowledgeResult } from './agent-mcp/tools.js';
export { displayPrefix, generateKey, hashKey, KEY_PREFIX, keyLookup, keyMatches, type NewKey } from './auth/keys.js';
export { type Coalescer, createCoalescer } from './coalescer.js';
export { DEFAULT_HISTORY_TOKENS } from './completions/history.js';
export { getModel, listModels, MODEL_OWNER } from './completions/models.js';
export { toChatMessages } from './completions/request.js';
export { DEFAULT_MAX_OPEN_STREAMS } from './completions/streams/hub.js';
export { DEFAULT_STREAM_LEASE_MS, STREAM_CHANNEL } from './completions/streams/storage-stream-store.js';
export type { PlatformContext } from './context.js';
export { decodeCursor, encodeCursor } from './cursor.js';
export { relativePaths, withRelativePaths } from './fs-paths.js';
export { ID_PREFIXES, type IdKind, randomString } from './ids.js';
export { type Chunk, type ChunkOptions, chunkDocument, countTokens } from './knowledge/chunk/index.js';
export { DocumentProcesses, type DocumentProcessesOptions } from './knowledge/document-processes.js';
export { fileTypeOf, SUPPORTED_FILE_TYPES } from './knowledge/file-types.js';
export { STEP_MESSAGES } from './knowledge/ingest/index-document.js';
export { BM25_B, BM25_K1, bm25Ceiling, bm25Rank, bm25Relative, keywordTerms, keywordWords } from './knowledge/keywords.js';
export { type DocumentPage, type DocumentSection, detectLanguage, type ParsedDocument, type ParseInput, type ParseLimits, parseDocument } from './knowledge/parse/index.js';
export { type DocumentReader, type DocumentReading, type ReadHooks, type ReadOptions, readDocument } from './knowledge/read-document.js';
export { DEFAULT_SIMILARITY, dot, fuseHybrid, mmrSelect, relatedness, type SimilarityScale, similarityScore } from './knowledge/search.js';
export { vectorNamespace } from './knowledge/stores.js';
export { normaliseDigest } from './local-models/ollama.js';
export { deleteLocalModel, type LocalModelServiceOptions, listLocalModels } from './local-models/service.js';
export { MCP_TOOL_PREFIX, mcpFunctionName } from './mcp/tool-source.js';
export { exceedsNesting, jsonExceedsNesting, MAX_NESTING_DEPTH, nestingError } from './nesting.js';
export { baseUrlProblem } from './net/base-url.js';
export { answerTooLarge, answerTooLargeIn, type BodyLimit, type BoundedRequest, boundedFetch, isEventStream, limitBody } from './net/bounded-body.js';
export { displayUrl, safeReason } from './net/display.js';
export { allowingUrls, type CheckedTarget, type ProxyRoute, type ResolvedAddress } from './net/guarded-fetch.js';
export { type AddressClass, type AddressKind, classifyAddress, hostPortEntry, type PolicyDecision, parseAllowedHosts, refusalError } from './net/policy.js';
export { isUnresolvedHost, unreachableAs, unresolvedHostError } from './net/unresolved-host.js';
export { byteBudget, resolveUpstreamLimits, type UpstreamLimitName, utf8Bytes } from './net/upstream-limits.js';
export { decodeNotification, encodeNotification, MAX_NOTIFICATION_BYTES, NotificationHandlers } from './notify/notifier.js';
export { createPacer } from './pacer.js';
export { toProject } from './projects/service.js';
export { EMBEDDER_FORMS, splitEmbedderName } from './registries/embedders.js';
export { BedrockOptions } from './registries/provider-schemas.js';
export { SHARED_VECTOR_STORE_IDS } from './registries/vector-stores.js';
export { failureOf as responseFailure } from './responses/items.js';
export { codeSyntaxError } from './tools/code-syntax.js';
export { FairQueue, type FairQueueLimits, FairScheduler } from './tools/fair-queue.js';
export { capLogs, jsonWithinDepth, parseToolResult, TOOL_LIMITS } from './tools/limits.js';
export { type ProgressRelay, progressRelay, toToolProgress } from './tools/progress.js';
export { SchemaValidator, type SchemaValidatorOptions } from './tools/schema-validator.js';
export { UserCapGuard } from './user-caps.js';
export { parseInput } from './validation.js';
