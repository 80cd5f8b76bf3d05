/**
 * Agent Platform's engine: \`AgentPlatform\`, its options, the errors it throws and the plug-in
 * interfaces (storage, vector stores, embedders, chat models, tool sandboxes, MCP connectors,
 * notifiers, stream stores) with the defaults a library user configures. The request and
 * response schemas are \`@agent-platform/core/schemas\`; conformance suites for plug-ins are
 * \`@agent-platform/core/testing\`. Helpers the sibling packages share are
 * \`@agent-platform/core/internal\`: not a public API, they change without notice.
 */
export {
  type ChatContentPart,
  type ChatEvent,
  type ChatMessage,
  type ChatModel,
  type ChatModelCapabilities,
  type ChatModelResolver,
  type ChatRequest,
  type ChatResult,
  type ChatRole,
  collectChat,
  type FinishReason,
  messageText,
  type ProviderConfig,
  type ReasoningBlock,
  type ResponseFormat,
  type ToolCall,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from './agent/chat-model.js';
export type { ElicitationAnswer, ElicitationRequest } from './agent/questions.js';
export type { AgentTool, ToolRunContext, ToolSampleRequest, ToolSampleResult, ToolSource } from './agent/tools.js';
export { type ApprovalOptions, DEFAULT_APPROVAL_TTL_MS, DEFAULT_QUESTION_TIMEOUT_MS, DEFAULT_RESUME_LEASE_MS } from './approvals/service.js';
export { type AuditOptions, DEFAULT_AUDIT_PURGE_INTERVAL_MS, DEFAULT_AUDIT_RETENTION_DAYS } from './audit/service.js';
export { type AuditEntry, MAX_USER_AGENT } from './audit-events.js';
export type { ChatImage } from './chats/service.js';
export { type Clock, systemClock } from './clock.js';
export { DEFAULT_IMAGE_LIMITS, type ImageLimits } from './completions/images.js';
export type { AgentOptions, OperatorKeyLimits } from './completions/options.js';
export type { StreamEvent, StreamHubOptions } from './completions/streams/hub.js';
export { type StorageStreamStoreOptions, storageStreamStore } from './completions/streams/storage-stream-store.js';
export { memoryStreamStore, type StreamInfo, type StreamRecord, type StreamStore, type StreamWriter } from './completions/streams/stream-store.js';
export { type Caller, workspaceOf } from './context.js';
export { type ErrorCode, isPlatformError, PlatformError, type PlatformErrorOptions, type ValidationIssue } from './errors.js';
export { createIdGenerator, type IdGenerator } from './ids.js';
export { IMAGE_TYPES, type ImageType } from './image-types.js';
export type { IndexingEvent } from './knowledge/indexing-events.js';
export type { BlobStore, EmbeddingModel, VectorHit, VectorQuery, VectorRecord, VectorStore, VectorStoreProvider } from './knowledge/interfaces.js';
export { DEFAULT_DOCUMENT_LIMITS, type DocumentLimitName, type DocumentLimits } from './knowledge/limits.js';
export type { EmbedderResolver, KnowledgeAdapters, VectorStoreConnection, VectorStoreFactory } from './knowledge/options.js';
export { type FetchLike, type OllamaRuntimeOptions, ollamaRuntime } from './local-models/ollama.js';
export { DEFAULT_LOCAL_MODEL_URL, defaultLocalModelBaseUrl, type LocalModelRuntime } from './local-models/runtime.js';
export type { McpConnector, McpDetection, McpOptions, McpProbe, McpServerConfig, McpTool, McpToolResult, McpTransport } from './mcp/types.js';
export { createGuardedFetch, type GuardedFetch, type GuardedFetchOptions, type HostResolver } from './net/guarded-fetch.js';
export { createOutboundPolicy, type OutboundPolicy, type OutboundPolicyOptions } from './net/policy.js';
export { type ByteLimit, DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits } from './net/upstream-limits.js';
export { createMemoryNotifier, type NotificationHandler, type NotificationPayload, type Notifier } from './notify/notifier.js';
export { AgentPlatform } from './platform.js';
export type { AgentPlatformOptions } from './platform-options.js';
export { EMBEDDERS, type EmbedderEntry, type EmbedderKind } from './registries/embedders.js';
export { type CredentialProviderId, MODEL_PROVIDERS, type ModelProviderEntry, type ModelProviderId } from './registries/model-providers.js';
export { OPENAI_COMPATIBLE_SERVICES, type OpenAICompatibleService } from './registries/openai-compatible.js';
export { VECTOR_STORES, type VectorStoreEntry } from './registries/vector-stores.js';
export { createSecretBox, type SecretBox } from './security/secrets.js';
export type {
  ApiKeyRecord,
  ApiKeyRepository,
  ApprovalDecision,
  ApprovalKind,
  ApprovalRecord,
  ApprovalRepository,
  ApprovalState,
  AuditEventRecord,
  AuditOutcome,
  AuditQuery,
  AuditRepository,
  ChatMessageRecord,
  ChatPatch,
  ChatRecord,
  ChatRepository,
  ChunkEmbeddings,
  ChunkRecord,
  ChunkRepository,
  ClaimOptions,
  CredentialPatch,
  CredentialRecord,
  CredentialRepository,
  DocumentListQuery,
  DocumentPatch,
  DocumentRecord,
  DocumentRepository,
  FileRecord,
  FileRepository,
  JobLease,
  JobRecord,
  JobRepository,
  KeywordHit,
  LeaseState,
  ListPosition,
  McpServerRecord,
  McpServerRepository,
  MessageSource,
  NewCredential,
  NewJob,
  Page,
  ProjectListQuery,
  ProjectPatch,
  ProjectRecord,
  ProjectRepository,
  ResponseRecord,
  ResponseRecordStatus,
  ResponseRepository,
  SettingsRepository,
  ShownCredentialFields,
  StorageAdapter,
  StoredContentPart,
  StreamRepository,
  StreamRow,
  ToolPatch,
  ToolRecord,
  ToolRepository,
  UserCounts,
  UserRecord,
  UserRepository,
} from './storage/types.js';
export type { ToolProgress, ToolProgressListener } from './tools/progress.js';
export { DEFAULT_TOOL_QUEUE, type ToolsOptions } from './tools/project-tools.js';
export type { CodeSyntaxError, ToolCodeCheck, ToolDefinitionToPrepare, ToolErrorKind, ToolLanguage, ToolOutcome, ToolRun, ToolSandbox } from './tools/sandbox.js';
export { DEFAULT_USER_CAPS, type UserCapName, type UserCaps } from './user-caps.js';
