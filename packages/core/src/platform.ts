import { type CompletionResult, CompletionsService } from './completions/service.js';
import type { AgentOptions } from './completions/options.js';
import { createMemoryNotifier, type Notifier } from './notify/notifier.js';
import type { StreamEvent, StreamHubOptions } from './completions/streams/hub.js';
import { memoryStreamStore, type StreamRecord, type StreamStore } from './completions/streams/stream-store.js';
import { ToolRunner, type ToolsOptions } from './tools/project-tools.js';
import {
  ActivateToolRequest,
  CreateToolRequest,
  ListToolsQuery,
  type ListToolsResponse,
  RunToolRequest,
  type RunToolResponse,
  type ToolFull,
  type ToolResponse,
  UpdateToolRequest,
} from './schemas/tools.js';
import { generateKey, keyLookup, keyMatches, keySummary } from './auth/keys.js';
import { type Clock, systemClock } from './clock.js';
import { type Caller, callerProject, type PlatformContext } from './context.js';
import { isPlatformError, PlatformError } from './errors.js';
import { CHAT_ID_RULE, createIdGenerator, type IdGenerator, isChatId } from './ids.js';
import { decodeCursor, encodeCursor, toProject } from './projects.js';
import {
  type ApiKeySummary,
  CreateKeyRequest,
  type CreateKeyResponse,
  ListKeysQuery,
  type ListKeysResponse,
} from './schemas/auth.js';
import { MAX_LIST_LIMIT } from './schemas/common.js';
import {
  CreateProjectRequest,
  ListProjectsQuery,
  type ListProjectsResponse,
  type ProjectDetail,
  type ProjectResponse,
  UpdateProjectRequest,
} from './schemas/projects.js';
import { checkNamedCredential, chooseCredential, type DefaultBaseUrl, describeChoice, type UsableCredential, unseal } from './agent/provider-credentials.js';
import type { BlobStore, EmbeddingModel, VectorStore, VectorStoreProvider } from './knowledge/interfaces.js';
import { type EmbedderResolver, type VectorStoreFactory, type IndexingEvent, KnowledgeBase, toKnowledgeDocument, vectorNamespace } from './knowledge/service.js';
import { followDocument } from './knowledge/follow-document.js';
import type { DocumentLimitName, DocumentLimits } from './knowledge/limits.js';
import { extensionOf, fileTypeOf, unsupportedFileMessage } from './knowledge/file-types.js';
import {
  type ChunkResponse,
  type KnowledgeChunk,
  CreateDocumentRequest,
  type CreateDocumentResponse,
  type DocumentResponse,
  ListDocumentsQuery,
  type ListDocumentsResponse,
  ListChunksQuery,
  type ListChunksResponse,
  GetSettingsQuery,
  type KnowledgeSettingsResponse,
  PutSettingsRequest,
  type PutSettingsResponse,
  ReindexRequest,
  type ReindexResponse,
  SearchRequest,
  type SearchResponse,
  UploadRequest,
  type UploadResponse,
} from './schemas/knowledge.js';
import {
  type Chat,
  type ChatMessagesResponse,
  CreateStreamRequest,
  type ChatResponse,
  CreateChatRequest,
  ListChatsQuery,
  type ListChatsResponse,
  RenameChatRequest,
} from './schemas/chats.js';
import { ChatCompletionRequest } from './schemas/completions.js';
import { ListModelsQuery, type ListModelsResponse, type ModelObject } from './schemas/models.js';
import type { CreateCredentialRequest, CredentialResponse, CredentialTestResponse, ListCredentialsResponse, UpdateCredentialRequest } from './schemas/credentials.js';
import { CredentialService } from './credentials/service.js';
import type { DefaultModelsQuery, ProviderModelsResponse } from './schemas/provider-models.js';
import type { SecretBox } from './security/secrets.js';
import { ollamaRuntime } from './local-models/ollama.js';
import type { ByteLimit } from './net/upstream-limits.js';
import { defaultLocalModelBaseUrl, type LocalModelRuntime } from './local-models/runtime.js';
import { deleteLocalModel, type LocalModelResult, type LocalModelServiceOptions, listLocalModels } from './local-models/service.js';
import { allowingUrls, createGuardedFetch, type GuardedFetch } from './net/guarded-fetch.js';
import { createOutboundPolicy, type OutboundPolicyOptions } from './net/policy.js';
import type { DeleteLocalModelRequest, DeleteLocalModelResponse, ListLocalModelsQuery, ListLocalModelsResponse } from './schemas/local-models.js';
import type { ChatRecord, ChunkRecord, ProjectRecord, StorageAdapter, ToolRecord } from './storage/types.js';
import { parseInput, samePathId } from './validation.js';
import { UserCapGuard, type UserCapName, type UserCaps } from './user-caps.js';
import { applySettingsChange, chunkingChanged, effectiveSettings } from './knowledge/settings.js';
import { MCP_DELETED_CHANNEL, MCP_TOOL_PREFIX, type McpOptions, mcpToolSource, newServerRecord, probeError, serverConfig, toServerView, toToolView } from './mcp/service.js';
import type { McpServerConfig } from './mcp/types.js';
import {
  AddMcpServerRequest,
  type AddMcpServerResponse,
  DetectTransportRequest,
  type DetectTransportResponse,
  ListMcpServersQuery,
  type ListMcpServersResponse,
  type McpServerResponse,
  type McpToolsResponse,
} from './schemas/mcp.js';

export interface KnowledgeAdapters {
  /** The built-in (default) vector store. */
  readonly vectors: VectorStore;
  /**
   * The stores of `vectorstoreProvider` (pinecone, weaviate, qdrant, chroma) from their
   * `vectorStoreConfig`, given the platform's guarded fetch to connect with (every request of
   * their clients goes through the outbound policy). Without it, third-party stores are refused.
   */
  readonly vectorStores?: VectorStoreFactory;
  /** The embedder, or a function choosing one by the project's `embeddingModel` setting. */
  readonly embedder: EmbeddingModel | EmbedderResolver;
  /** Where uploaded files and document texts are kept (for re-indexing). Default: in memory. */
  readonly blobs?: BlobStore;
  /** Most documents indexed at the same time. Default 32. */
  readonly concurrency?: number;
  /**
   * Most bytes of document sources indexed at the same time (a larger one runs alone); one more
   * document, of a user with nothing being indexed, may start beyond it. Default 64 MiB.
   */
  readonly concurrentBytes?: number;
  /**
   * How long (ms) after it was queued a document that does not fit the room left in
   * `concurrentBytes` may be passed over by documents that do; then it runs next (alone if it
   * must). Default 10,000.
   */
  readonly overtakeMs?: number;
  /**
   * Most documents one user may have waiting or being indexed; one more document, upload or
   * re-index is refused with `rate_limited` naming the limit, and nothing of it is written.
   * Default 1,000.
   */
  readonly maxQueuedDocuments?: number;
  /** How long `createDocument` waits for indexing before answering `processing`. Default 5000 ms. */
  readonly waitMs?: number;
  /**
   * Limits on reading (parsing and chunking) each document, which runs in child processes:
   * time, memory, PDF pages, unpacked DOCX bytes, nesting, text length, chunks. A document over
   * one ends `failed` naming it. Defaults: `DEFAULT_DOCUMENT_LIMITS`.
   */
  readonly limits?: DocumentLimits;
  /**
   * How an operator sets each limit, added to the error of a document over it (e.g.
   * `--max-document-pages`) and to the refusal of a full queue (`maxQueuedDocuments`). Default
   * `knowledge.limits.<name>`, `knowledge.maxQueuedDocuments`.
   */
  readonly limitHints?: Partial<Record<DocumentLimitName | 'maxQueuedDocuments', string>>;
  /** Most child processes reading documents at once. Default 2 (1 on a single core). */
  readonly documentProcesses?: number;
  /** Starts of one indexing job (counted before it runs, so across restarts) before its document fails. Default 3. */
  readonly maxAttempts?: number;
  /**
   * This instance's id, the owner of the indexing jobs it claims (see docs/KNOWLEDGE.md, "The
   * job queue"). Default: a new random id per process. A stable one lets a restart take its
   * jobs back at once instead of after their leases; two running processes must never share one.
   */
  readonly instanceId?: string;
  /** Lease of a claimed indexing job; after it, another instance may take the job over. Default 30,000 ms. */
  readonly leaseMs?: number;
  /** How often a running job's lease is extended. Default 10,000 ms. */
  readonly heartbeatMs?: number;
  /** How often an instance with free slots looks for jobs it was not woken for. Default 1,000 ms. */
  readonly pollMs?: number;
}

export interface AgentPlatformOptions {
  readonly storage: StorageAdapter;
  /** The knowledge base's vector store and embedder. Without them, knowledge calls answer `unsupported`. */
  readonly knowledge?: KnowledgeAdapters;
  /** Tool sandboxes by language. Without them, tool calls answer `unsupported`. */
  readonly tools?: ToolsOptions;
  /** Chat models and agent settings. Without them, chat completions answer `unsupported`. */
  readonly agent?: AgentOptions;
  /** MCP connections. Without them, MCP calls answer `unsupported`. */
  readonly mcp?: McpOptions;
  /** Encrypts provider credentials at rest. Without it, credential calls answer `unsupported`. */
  readonly secrets?: SecretBox;
  /** How long `testCredential`'s call to the provider may take, answer included. Default 10,000 ms. */
  readonly credentialTestTimeoutMs?: number;
  /** Which hosts caller-supplied URLs may reach (DESIGN.md, "Outbound URLs"). Default: public addresses only. */
  readonly outbound?: OutboundPolicyOptions;
  /** The fetch for caller-supplied URLs; default: one enforcing `outbound`. */
  readonly fetch?: GuardedFetch;
  /**
   * The fetch of the operator's own address the platform reaches for callers: the default local
   * model runtime (`localModelUrl`), which calls that give no `baseUrl` use. Default: `fetch`
   * with that address (its host and port) allowed as well; a `baseUrl` a caller gives is judged
   * by `fetch` alone.
   */
  readonly operatorFetch?: GuardedFetch;
  /** The local model runtime; default: Ollama over the guarded fetch (`operatorFetch` for the default address). */
  readonly localModels?: LocalModelRuntime;
  /** Most bytes of one answer of the default local model runtime, and the setting that raises it. Default 1 MiB (`DEFAULT_UPSTREAM_LIMITS.runtimeAnswerBytes`). */
  readonly localModelAnswerLimit?: ByteLimit;
  /** Runtime address when a call gives none. Default: OLLAMA_HOST or http://127.0.0.1:11434. */
  readonly localModelUrl?: string;
  /**
   * Messages between the instances sharing `storage`: indexing progress and completion,
   * cancelled indexing runs, deleted MCP servers (docs/KNOWLEDGE.md, docs/MCP.md). Default: an
   * in-process notifier, for one instance; several instances on one PostgreSQL database use
   * `postgresNotifier` from `@agent-platform/adapters-storage/postgres`. Closed by `close()`.
   */
  readonly notifier?: Notifier;
  /** Resumable chat streams: how long they are kept and how many one user may have open (for the default store). */
  readonly streams?: Omit<StreamHubOptions, 'clock'>;
  /** Where resumable chat streams are kept. Default: in this process (`memoryStreamStore` with `streams`). */
  readonly streamStore?: StreamStore;
  /**
   * The most keys, projects, credentials, chats, tools, MCP servers, documents and chat messages
   * one user may have; one more is refused with `rate_limited`, naming the cap (and `userCapHints`'
   * way to set it). Missing ones: `DEFAULT_USER_CAPS`. Keys an operator makes
   * (`createUserWithKey`, `createKeyForUser`) are not capped.
   */
  readonly userCaps?: Partial<UserCaps>;
  /** How an operator sets each cap, named in its error (the server's flags). Default `userCaps.<name>`. */
  readonly userCapHints?: Partial<Record<UserCapName, string>>;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
}

/** `total`, `hasMore` and `nextOffset` of an offset-paged list. */
/** A stored chunk as the API shows it (`content` is its text). */
function toKnowledgeChunk({ id, documentId, projectId, index, text, tokenCount, metadata }: ChunkRecord): KnowledgeChunk {
  return { id, documentId, projectId, index, content: text, tokenCount, metadata };
}

function offsetPageFields(offset: number, page: { items: readonly unknown[]; total: number }) {
  const nextOffset = offset + page.items.length;
  return { total: page.total, hasMore: nextOffset < page.total, nextOffset };
}

/** A store that cannot be used, as the settings route answers it: "Invalid vectorstore configuration: <reason>" (400). */
function invalidStoreConfiguration(error: unknown): PlatformError {
  const message = error instanceof Error ? error.message : String(error);
  const reason = message.replace(/^Invalid vectorstore configuration: /, '');
  return PlatformError.invalid(`Invalid vectorstore configuration: ${reason}`, [{ path: ['settings', 'vectorStoreConfig'], code: 'custom', message: reason }]);
}

/** Project tools and MCP tools share the model's function names: `mcp__` belongs to MCP servers. */
function checkToolName(name: string): void {
  if (name.startsWith(MCP_TOOL_PREFIX)) {
    throw PlatformError.invalid(`name: must not start with ${MCP_TOOL_PREFIX} (the names of MCP servers' tools)`, [{ path: ['name'], code: 'custom', message: `must not start with ${MCP_TOOL_PREFIX}` }]);
  }
}

function toTool(t: ToolRecord): ToolFull {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    language: t.language,
    enabled: t.enabled,
    createdAt: t.createdAt.toISOString(),
    projectId: t.projectId,
    code: t.code,
    parameters: t.parameters,
    dependencies: [...t.dependencies],
    updatedAt: t.updatedAt.toISOString(),
  };
}

function toChat(record: ChatRecord): Chat {
  return {
    id: record.id,
    name: record.name,
    projectId: record.projectId,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** Blobs in a Map, for platforms built without a blob store. */
function inMemoryBlobs(): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return {
    put: async (key, bytes) => void blobs.set(key, new Uint8Array(bytes)),
    get: async (key) => blobs.get(key),
    delete: async (key) => blobs.delete(key),
  };
}

/** How often a key's `lastUsedAt` is written at most (it is a hint, not an audit log). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The engine. One method per API endpoint; each takes the caller and the request as the
 * client sent it (validated here), and answers the response body of the endpoint.
 */
export class AgentPlatform {
  readonly storage: StorageAdapter;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly #knowledge: KnowledgeBase | undefined;
  readonly #knowledgeAdapters: KnowledgeAdapters | undefined;
  readonly #secrets: SecretBox | undefined;
  readonly #streams: StreamStore;
  readonly #tools: ToolRunner | undefined;
  readonly #mcp: McpOptions | undefined;
  readonly #notifier: Notifier;
  readonly #unsubscribe: (() => void)[] = [];
  /** Fetch for every URL a caller supplies: checks the outbound policy before connecting. */
  readonly fetch: GuardedFetch;
  readonly #localModels: LocalModelRuntime;
  /** The runtime client of the default address (`localModelUrl`): by the operator's fetch. */
  readonly #defaultLocalModels: LocalModelRuntime;
  readonly #localModelUrl: string | undefined;
  readonly #defaultBaseUrl: DefaultBaseUrl | undefined;
  readonly #credentials: CredentialService;
  readonly #caps: UserCapGuard;
  /** What every area service is built from. */
  readonly #ctx: PlatformContext;
  /** Chat completions, the models list and resumable chat streams. */
  readonly completions: CompletionsService;

  constructor(options: AgentPlatformOptions) {
    this.storage = options.storage;
    this.#caps = new UserCapGuard(options.userCaps, options.userCapHints);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? createIdGenerator(() => this.clock.now().getTime());
    this.#streams = options.streamStore ?? memoryStreamStore({ ...options.streams, clock: this.clock });
    this.#secrets = options.secrets;
    this.fetch = options.fetch ?? createGuardedFetch(createOutboundPolicy(options.outbound));
    const answerLimit = options.localModelAnswerLimit ? { answerLimit: options.localModelAnswerLimit } : {};
    this.#localModels = options.localModels ?? ollamaRuntime({ fetch: this.fetch, ...answerLimit });
    this.#localModelUrl = options.localModelUrl;
    this.#defaultLocalModels = options.localModels ?? ollamaRuntime({ fetch: options.operatorFetch ?? allowingUrls(this.fetch, [options.localModelUrl ?? defaultLocalModelBaseUrl()]), ...answerLimit });
    this.#defaultBaseUrl = options.agent?.defaultBaseUrl;
    this.#notifier = options.notifier ?? createMemoryNotifier();
    this.#ctx = { storage: this.storage, clock: this.clock, ids: this.ids, notifier: this.#notifier, fetch: this.fetch, secrets: this.#secrets, caps: this.#caps };
    this.#credentials = new CredentialService({
      storage: this.storage,
      secrets: options.secrets,
      fetch: this.fetch,
      models: options.agent?.models,
      defaultBaseUrl: this.#defaultBaseUrl,
      clock: this.clock,
      ids: this.ids,
      caps: this.#caps,
      ...(options.credentialTestTimeoutMs !== undefined ? { testTimeoutMs: options.credentialTestTimeoutMs } : {}),
    });
    const k = options.knowledge;
    this.#knowledgeAdapters = k;
    if (k) {
      const embedder = k.embedder;
      this.#knowledge = new KnowledgeBase({
        storage: this.storage,
        notifier: this.#notifier,
        vectors: k.vectors,
        ...(k.vectorStores ? { vectorStores: this.#guardedStores(k.vectorStores) } : {}),
        embedders: typeof embedder === 'function' ? embedder : () => embedder,
        clock: this.clock,
        ids: this.ids,
        caps: this.#caps,
        blobs: k.blobs ?? inMemoryBlobs(),
        secrets: options.secrets,
        ...(k.concurrency ? { concurrency: k.concurrency } : {}),
        ...(k.concurrentBytes ? { concurrentBytes: k.concurrentBytes } : {}),
        ...(k.overtakeMs !== undefined ? { overtakeMs: k.overtakeMs } : {}),
        ...(k.maxQueuedDocuments ? { maxQueuedDocuments: k.maxQueuedDocuments } : {}),
        ...(k.limits ? { limits: k.limits } : {}),
        ...(k.limitHints ? { limitHints: k.limitHints } : {}),
        ...(k.documentProcesses ? { documentProcesses: k.documentProcesses } : {}),
        ...(k.maxAttempts ? { maxAttempts: k.maxAttempts } : {}),
        ...(k.instanceId ? { instanceId: k.instanceId } : {}),
        ...(k.leaseMs ? { leaseMs: k.leaseMs } : {}),
        ...(k.heartbeatMs ? { heartbeatMs: k.heartbeatMs } : {}),
        ...(k.pollMs ? { pollMs: k.pollMs } : {}),
      });
    }
    this.#tools = options.tools ? new ToolRunner(options.tools) : undefined;
    this.#mcp = options.mcp;
    const mcp = this.#mcp;
    if (mcp) {
      // A server deleted through any instance: each instance closes its own connection to it.
      this.#unsubscribe.push(
        this.#notifier.subscribe(MCP_DELETED_CHANNEL, (payload) => {
          const serverId = (payload as { serverId?: unknown } | null)?.serverId;
          if (typeof serverId === 'string') mcp.connector.disconnect(serverId).catch(() => {});
        }),
      );
    }
    this.completions = new CompletionsService(this.#ctx, {
      agent: options.agent,
      streams: this.#streams,
      chats: { get: (caller, chatId) => this.#chat(caller, chatId), open: (caller, chatId, projectId) => this.#openChat(caller, chatId, projectId) },
      credentials: { resolve: (caller, provider, credentialId) => this.providerCredential(caller, provider, credentialId) },
      knowledge: this.#knowledge,
      tools: [
        ...(this.#tools ? [this.#tools.source(this.storage)] : []),
        ...(this.#mcp ? [mcpToolSource(this.storage, this.#secrets, this.#mcp)] : []),
        ...(options.agent?.toolSources ?? []),
      ],
    });
  }

  /** Resumes background work left by an earlier run (unfinished indexing jobs). Call once after constructing. */
  async start(): Promise<void> {
    await this.#knowledge?.resume();
  }

  /** Stops background work and closes the adapters (storage last). Idempotent. */
  async close(): Promise<void> {
    for (const stop of this.#unsubscribe.splice(0)) stop();
    await this.#knowledge?.close();
    await this.#knowledgeAdapters?.vectors.close();
    // An embedder, or a resolver that owns embedders, may have something to close.
    await (this.#knowledgeAdapters?.embedder as { close?: () => Promise<void> } | undefined)?.close?.();
    await this.#tools?.close();
    await this.#mcp?.connector.close();
    await this.fetch.close();
    await this.#streams.close?.();
    await this.#notifier.close();
    await this.storage.close();
  }

  /**
   * Third-party stores connect where the caller's configuration says (`endpoint`, Weaviate's
   * `grpcEndpoint`, ...): they get the guarded fetch, so the outbound policy decides on every
   * connection their clients open, as the connection is made.
   */
  #guardedStores(factory: VectorStoreFactory) {
    return (provider: VectorStoreProvider, config: Record<string, unknown>) => factory(provider, config, { fetch: this.fetch });
  }

  #kb(): KnowledgeBase {
    if (!this.#knowledge) {
      throw new PlatformError('unsupported', 'The knowledge base is not configured: construct AgentPlatform with `knowledge: { vectors, embedder }`');
    }
    return this.#knowledge;
  }

  #project(caller: Caller, projectId: string) {
    return callerProject(this.#ctx, caller, projectId);
  }

  // ---- users and keys -------------------------------------------------------------------

  /** Creates a user and its first key (operator bootstrap: `agent-platform keys create`). */
  async createUserWithKey(input: CreateKeyRequest): Promise<CreateKeyResponse> {
    const { name } = parseInput(CreateKeyRequest, input);
    const userId = this.ids.next('user');
    const createdAt = this.clock.now();
    return this.storage.transaction(async (tx) => {
      await tx.users.insert({ id: userId, createdAt });
      return this.#insertKey(tx, userId, name);
    });
  }

  /**
   * The first key of an empty platform: a new user with a key when no key exists yet, else
   * undefined. Instances starting together on one database create one between them (the check
   * and the insert run under the storage's bootstrap lock, in one transaction).
   */
  async createFirstKey(input: CreateKeyRequest): Promise<CreateKeyResponse | undefined> {
    const { name } = parseInput(CreateKeyRequest, input);
    return this.storage.transaction(async (tx) => {
      await tx.apiKeys.lockBootstrap();
      if ((await tx.apiKeys.count()) > 0) return undefined;
      const userId = this.ids.next('user');
      await tx.users.insert({ id: userId, createdAt: this.clock.now() });
      return this.#insertKey(tx, userId, name);
    });
  }

  /** `POST /api/auth/create-key`: another key for the caller's user, within the user's cap of keys. */
  async createKey(caller: Caller, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    const { name } = parseInput(CreateKeyRequest, input);
    return this.storage.transaction(async (tx) => {
      await this.#caps.reserve(tx, caller.userId, 'keys');
      return this.#insertKey(tx, caller.userId, name);
    });
  }

  /** Creates a key for an existing user (operator: `keys create --user`; not capped). */
  async createKeyForUser(userId: string, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    const { name } = parseInput(CreateKeyRequest, input);
    if (!(await this.storage.users.get(userId))) throw PlatformError.notFound(`User ${userId} not found`);
    return this.#insertKey(this.storage, userId, name);
  }

  async #insertKey(storage: StorageAdapter, userId: string, name: string): Promise<CreateKeyResponse> {
    const { key, lookup, hash } = generateKey();
    const id = this.ids.next('key');
    const createdAt = this.clock.now();
    await storage.apiKeys.insert({ id, userId, name, lookup, hash, createdAt, lastUsedAt: null });
    return { success: true, key, id, name, userId, createdAt: createdAt.toISOString() };
  }

  /** `GET /api/auth/keys`: a page of the caller's keys, newest first, without secrets. */
  async listKeys(caller: Caller, query: ListKeysQuery = {}): Promise<ListKeysResponse> {
    const q = parseInput(ListKeysQuery, query);
    const page = await this.storage.apiKeys.list({ userId: caller.userId, limit: q.limit, offset: q.offset });
    return { success: true, userId: caller.userId, keys: page.items.map(keySummary), ...offsetPageFields(q.offset, page) };
  }

  /** Every key of an existing user, newest first (operator: `keys list --user`); `not_found` for an unknown user. */
  async listKeysForUser(userId: string): Promise<{ userId: string; keys: ApiKeySummary[] }> {
    if (!(await this.storage.users.get(userId))) throw PlatformError.notFound(`User ${userId} not found`);
    const keys: ApiKeySummary[] = [];
    for (let offset = 0; ; offset += MAX_LIST_LIMIT) {
      const page = await this.storage.apiKeys.list({ userId, limit: MAX_LIST_LIMIT, offset });
      keys.push(...page.items.map(keySummary));
      if (page.items.length < MAX_LIST_LIMIT) return { userId, keys };
    }
  }

  /**
   * Every user's keys, without secrets (operator: `agent-platform keys list`): one entry per
   * user that has a key, the user with the newest key first, each user's keys newest first.
   */
  async listAllKeys(): Promise<{ userId: string; keys: ApiKeySummary[] }[]> {
    const byUser = new Map<string, ApiKeySummary[]>();
    for (const record of await this.storage.apiKeys.listAll()) {
      const keys = byUser.get(record.userId) ?? [];
      keys.push(keySummary(record));
      byUser.set(record.userId, keys);
    }
    return [...byUser].map(([userId, keys]) => ({ userId, keys }));
  }

  /** `DELETE /api/auth/keys/{id}`: revokes one of the caller's keys (also the one in use). */
  async deleteKey(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.storage.apiKeys.delete(caller.userId, id))) throw PlatformError.notFound(`API key ${id} not found`);
    return { success: true, message: 'API key revoked' };
  }

  /** The caller a presented key belongs to, or undefined for an unknown or malformed key. */
  async authenticate(key: string): Promise<Caller | undefined> {
    const lookup = keyLookup(key);
    if (!lookup) return undefined;
    const record = await this.storage.apiKeys.findByLookup(lookup);
    if (!record || !keyMatches(key, record.hash)) return undefined;
    const now = this.clock.now();
    if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      await this.storage.apiKeys.touch(record.id, now);
    }
    return { userId: record.userId };
  }

  /** Number of keys of all users (the server prints a first key when there is none). */
  countKeys(): Promise<number> {
    return this.storage.apiKeys.count();
  }

  // ---- projects -------------------------------------------------------------------------

  /** `POST /api/projects/create`. */
  async createProject(caller: Caller, input: CreateProjectRequest): Promise<ProjectResponse> {
    const body = parseInput(CreateProjectRequest, input);
    const now = this.clock.now();
    const record: ProjectRecord = {
      id: this.ids.next('project'),
      userId: caller.userId,
      name: body.name,
      description: body.description ?? '',
      instructions: body.instructions ?? '',
      icon: body.icon ?? '',
      color: body.color ?? '',
      model: body.model,
      provider: body.provider,
      credentialId: body.credentialId ?? null,
      createdAt: now,
      updatedAt: now,
    };
    // Checked and written in one transaction, so a credential deleted meanwhile is never named.
    await this.storage.transaction(async (tx) => {
      await this.#caps.reserve(tx, caller.userId, 'projects');
      if (record.credentialId) await checkNamedCredential(tx, caller.userId, record.credentialId, record.provider);
      await tx.projects.insert(record);
    });
    return { success: true, project: await this.#projectDetail(caller, record) };
  }

  /** A project with where its model calls go (`resolved`): the precedence of credentials applied. */
  async #projectDetail(caller: Caller, record: ProjectRecord): Promise<ProjectDetail> {
    try {
      const choice = await chooseCredential(this.storage, caller.userId, record.provider, record.credentialId);
      return { ...toProject(record), resolved: describeChoice(record, choice, this.#defaultBaseUrl) };
    } catch {
      // The named credential is gone (completions say so): nothing to show but its id.
      return { ...toProject(record), resolved: { credentialId: record.credentialId, baseUrl: null, source: 'project' } };
    }
  }

  /**
   * `GET /api/v1/projects`: newest first. With `cursor`, the page starts right after the
   * cursor's project (stable while projects are created); otherwise at `offset`.
   */
  async listProjects(caller: Caller, query: ListProjectsQuery = {}): Promise<ListProjectsResponse> {
    const q = parseInput(ListProjectsQuery, query);
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const page = await this.storage.projects.list({
      userId: caller.userId,
      limit: q.limit + 1,
      ...(q.searchWord ? { searchWord: q.searchWord } : {}),
      ...(after ? { after } : { offset: q.offset }),
    });
    const hasMore = page.items.length > q.limit;
    const items = hasMore ? page.items.slice(0, q.limit) : page.items;
    const last = items.at(-1);
    return {
      success: true,
      projects: items.map(toProject),
      nextCursor: hasMore && last ? encodeCursor(last) : '',
      nextOffset: page.start + items.length,
      hasMore,
      total: page.total,
      message: items.length === 0 ? 'No projects found' : `Found ${page.total} project${page.total === 1 ? '' : 's'}`,
    };
  }

  /** `GET /api/v1/projects/{id}`. */
  async getProject(caller: Caller, id: string): Promise<ProjectResponse> {
    const record = await this.storage.projects.get(caller.userId, id);
    if (!record) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, project: await this.#projectDetail(caller, record) };
  }

  /** `PATCH /api/v1/projects/{id}`. */
  async updateProject(caller: Caller, id: string, input: UpdateProjectRequest): Promise<ProjectResponse> {
    const patch = parseInput(UpdateProjectRequest, input);
    const record = await this.storage.transaction(async (tx) => {
      const current = await tx.projects.get(caller.userId, id);
      if (!current) throw PlatformError.notFound(`Project ${id} not found`);
      // The credential the project will name must be the caller's and of the provider it will use.
      const credentialId = patch.credentialId !== undefined ? patch.credentialId : current.credentialId;
      if (credentialId && (patch.credentialId !== undefined || patch.provider !== undefined)) {
        await checkNamedCredential(tx, caller.userId, credentialId, patch.provider ?? current.provider);
      }
      return tx.projects.update(caller.userId, id, { ...patch, updatedAt: this.clock.now() });
    });
    if (!record) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, project: await this.#projectDetail(caller, record) };
  }

  /** `DELETE /api/v1/projects/{id}`: the project and everything in it (documents, chunks, vectors). */
  async deleteProject(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    const kb = this.#knowledge;
    const settings = kb ? await kb.settings(id) : undefined;
    const model = kb && settings ? kb.embedderFor(settings, caller) : undefined;
    const servers = this.#mcp ? await this.storage.mcpServers.forProject(id) : [];
    // Read before the delete takes the rows with it. The delete is what checks the owner: the
    // keys of another user's project are read, but nothing is removed unless it succeeds.
    const blobs = kb?.blobs;
    const blobKeys = blobs ? await this.storage.documents.blobKeysOfProject(id) : [];
    if (!(await this.storage.projects.delete(caller.userId, id))) throw PlatformError.notFound(`Project ${id} not found`);
    // The project's texts and uploaded files: nothing refers to them any more (a failure leaves
    // the blob behind, unread, rather than failing a delete that has happened).
    for (let i = 0; blobs && i < blobKeys.length; i += 16) {
      await Promise.all(blobKeys.slice(i, i + 16).map((key) => blobs.delete(key).catch(() => false)));
    }
    if (kb && settings && model) {
      // A third-party store that is down keeps the vectors of a deleted project; nothing reads them.
      await kb
        .vectorsFor(settings)
        .then((store) => store.dropNamespace(vectorNamespace(id, model)))
        .catch(() => {});
    }
    await Promise.all(servers.map((server) => this.#disconnectEverywhere(server.id)));
    return { success: true, message: 'Project deleted' };
  }

  // ---- chat completions -----------------------------------------------------------------

  /**
   * `POST /api/v1/chat/completions` (`form: 'v1'`) and `POST /api/v1/ai/chat/completions`
   * (`form: 'ai'`). Answers the whole completion, or with `stream: true` the chunks to send.
   */
  chatCompletion(caller: Caller, input: ChatCompletionRequest, options: { form: 'v1' | 'ai'; signal?: AbortSignal }): Promise<CompletionResult> {
    return this.completions.create(caller, parseInput(ChatCompletionRequest, input), options);
  }

  /**
   * `GET /api/v1/models` (no `id`): a page of the caller's projects as OpenAI model objects
   * (`limit`, `after`); with `id` (`GET /api/v1/models/{id}`) that one project, or `not_found`.
   */
  models(caller: Caller, query?: ListModelsQuery): Promise<ListModelsResponse>;
  models(caller: Caller, id: string): Promise<ModelObject>;
  models(caller: Caller, idOrQuery?: string | ListModelsQuery): Promise<ListModelsResponse | ModelObject> {
    return typeof idOrQuery === 'string' ? this.completions.getModel(caller, idOrQuery) : this.completions.listModels(caller, parseInput(ListModelsQuery, idOrQuery ?? {}));
  }

  /** `POST /api/chats/{chatId}/streams`: a stream of the chat that completions can write to. */
  createStream(caller: Caller, chatId: string, input: CreateStreamRequest): Promise<{ success: true; message: string; stream: { id: string; chatId: string; createdAt: string } }> {
    return this.completions.createStream(caller, chatId, parseInput(CreateStreamRequest, input));
  }

  /**
   * `GET /api/chats/{chatId}/streams/{streamId}`: the stream's records (chunks, or the failure
   * that ended it) after `lastEventId` (0: from the start), then live ones until it ends.
   */
  readStream(caller: Caller, chatId: string, streamId: string, lastEventId: string | undefined, signal?: AbortSignal): Promise<AsyncIterable<StreamEvent<StreamRecord>>> {
    return this.completions.readStream(caller, chatId, streamId, lastEventId, signal);
  }

  // ---- tools ----------------------------------------------------------------------------

  #runner(): ToolRunner {
    if (!this.#tools) throw new PlatformError('unsupported', 'Tools are not configured: construct AgentPlatform with `tools: { sandboxes }`');
    return this.#tools;
  }

  async #tool(caller: Caller, id: string): Promise<ToolRecord> {
    const tool = await this.storage.tools.get(caller.userId, id);
    if (!tool) throw PlatformError.notFound('Tool not found');
    return tool;
  }

  /** `POST /api/tools/create`. */
  async createTool(caller: Caller, input: CreateToolRequest): Promise<ToolResponse> {
    const body = parseInput(CreateToolRequest, input);
    const runner = this.#runner();
    await this.#project(caller, body.projectId);
    // Refused before its packages are installed; decided when it is written.
    await this.#caps.check(this.storage, caller.userId, 'tools');
    runner.sandbox(body.language);
    checkToolName(body.name);
    await runner.compileParameters(caller.userId, body.parameters);
    await runner.prepare(caller.userId, body);
    const now = this.clock.now();
    const record: ToolRecord = { id: this.ids.next('tool'), userId: caller.userId, ...body, createdAt: now, updatedAt: now };
    await this.storage.transaction(async (tx) => {
      await this.#caps.reserve(tx, caller.userId, 'tools');
      await tx.tools.insert(record);
    });
    return { success: true, tool: toTool(record) };
  }

  /** `GET /api/tools`: a project's tools, newest first. */
  async listTools(caller: Caller, query: ListToolsQuery): Promise<ListToolsResponse> {
    const q = parseInput(ListToolsQuery, query);
    await this.#project(caller, q.projectId);
    const page = await this.storage.tools.list({ userId: caller.userId, projectId: q.projectId, limit: q.limit, offset: q.offset });
    return {
      success: true,
      tools: page.items.map((t) => {
        const { id, name, description, language, enabled, createdAt } = toTool(t);
        return { id, name, description, language, enabled, createdAt };
      }),
      ...offsetPageFields(q.offset, page),
      message: page.total === 0 ? 'No tools found' : `Found ${page.total} tool${page.total === 1 ? '' : 's'}`,
    };
  }

  /** `GET /api/tools/{id}`. */
  async getTool(caller: Caller, id: string): Promise<ToolResponse> {
    return { success: true, tool: toTool(await this.#tool(caller, id)) };
  }

  /** `PUT /api/tools/{id}`: `toolId` must equal the path id; changes the members of `tool` given. */
  async updateTool(caller: Caller, id: string, input: UpdateToolRequest): Promise<{ success: true; message: string }> {
    const { toolId, tool } = parseInput(UpdateToolRequest, input);
    if (toolId !== id) throw samePathId('toolId', 'tool');
    if (tool.name) checkToolName(tool.name);
    if (tool.parameters) await this.#runner().compileParameters(caller.userId, tool.parameters);
    const current = await this.#tool(caller, id);
    // New code or dependencies are readied (and refused) before anything is written.
    if (tool.dependencies || tool.code) await this.#runner().prepare(caller.userId, { ...current, ...tool });
    const updated = await this.storage.tools.update(caller.userId, id, { ...tool, updatedAt: this.clock.now() });
    if (!updated) throw PlatformError.notFound('Tool not found');
    return { success: true, message: 'Tool updated' };
  }

  /** `POST /api/tools/{id}/activate`: enables (`activeState: true`) or disables the tool. */
  async activateTool(caller: Caller, id: string, input: ActivateToolRequest): Promise<{ success: true; message: string }> {
    const { toolId, activeState } = parseInput(ActivateToolRequest, input);
    if (toolId !== id) throw samePathId('toolId', 'tool');
    const updated = await this.storage.tools.update(caller.userId, id, { enabled: activeState, updatedAt: this.clock.now() });
    if (!updated) throw PlatformError.notFound('Tool not found');
    return { success: true, message: activeState ? 'Tool activated' : 'Tool deactivated' };
  }

  /** `DELETE /api/tools/{id}`. */
  async deleteTool(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.storage.tools.delete(caller.userId, id))) throw PlatformError.notFound('Tool not found');
    return { success: true, message: 'Tool deleted' };
  }

  /** `POST /api/tools/{id}/run`: runs the tool in its sandbox; a failing tool answers `success: false` with its error. */
  async runTool(caller: Caller, id: string, input: RunToolRequest, signal?: AbortSignal): Promise<RunToolResponse> {
    const { args } = parseInput(RunToolRequest, input);
    const tool = await this.#tool(caller, id);
    const outcome = await this.#runner().run(tool, args, signal);
    return outcome.ok
      ? { success: true, result: outcome.result, logs: [...outcome.logs], durationMs: outcome.durationMs }
      : { success: false, message: outcome.error.message, error: { kind: outcome.error.kind }, logs: [...outcome.logs], durationMs: outcome.durationMs };
  }

  // ---- MCP servers ----------------------------------------------------------------------

  #mcpOptions(): McpOptions {
    if (!this.#mcp) throw new PlatformError('unsupported', 'MCP is not configured: construct AgentPlatform with `mcp: { connector }`');
    return this.#mcp;
  }

  async #mcpServer(caller: Caller, id: string) {
    const server = await this.storage.mcpServers.get(caller.userId, id);
    if (!server) throw PlatformError.notFound('MCP server not found');
    return server;
  }

  /**
   * `POST /api/mcp/add-server`: connects once (lists the tools) before saving, so a server that
   * cannot be reached, is not an MCP server, is refused by the outbound policy, or is a stdio
   * command the operator did not allow is never saved.
   */
  async addMcpServer(caller: Caller, input: AddMcpServerRequest, signal?: AbortSignal): Promise<AddMcpServerResponse> {
    const body = parseInput(AddMcpServerRequest, input);
    const mcp = this.#mcpOptions();
    await this.#project(caller, body.projectId);
    if ((await this.storage.mcpServers.forProject(body.projectId)).some((s) => s.name === body.name)) {
      throw new PlatformError('conflict', `An MCP server named "${body.name}" already exists in this project`);
    }
    // Refused before connecting to it; decided when it is written.
    await this.#caps.check(this.storage, caller.userId, 'mcpServers');
    const config: McpServerConfig =
      body.transport === 'stdio'
        ? { transport: 'stdio', command: body.command ?? '', args: body.args ?? [], ...(body.env ? { env: body.env } : {}) }
        : { transport: body.transport, url: body.url ?? '', ...(body.headers ? { headers: body.headers } : {}) };
    let probe: Awaited<ReturnType<typeof mcp.connector.probe>>;
    try {
      probe = await mcp.connector.probe(config, signal ? { signal } : {});
    } catch (error) {
      throw probeError(error, config);
    }
    const now = this.clock.now();
    const { projectId, name, transport, url, command, args, headers, env } = body;
    const record = newServerRecord(
      { id: this.ids.next('mcpServer'), userId: caller.userId, projectId, name, transport, url, command, args, headers, env, createdAt: now, updatedAt: now },
      this.#secrets,
    );
    await this.storage.transaction(async (tx) => {
      await this.#caps.reserve(tx, caller.userId, 'mcpServers');
      await tx.mcpServers.insert(record);
    });
    return { success: true, server: toServerView(record), tools: probe.tools.map(toToolView) };
  }

  /** `GET /api/mcp/servers?projectId=`: a project's servers, newest first. */
  async listMcpServers(caller: Caller, query: ListMcpServersQuery): Promise<ListMcpServersResponse> {
    const q = parseInput(ListMcpServersQuery, query);
    await this.#project(caller, q.projectId);
    const page = await this.storage.mcpServers.list({ userId: caller.userId, projectId: q.projectId, limit: q.limit, offset: q.offset });
    return {
      success: true,
      servers: page.items.map(toServerView),
      ...offsetPageFields(q.offset, page),
      message: page.total === 0 ? 'No MCP servers found' : `Found ${page.total} MCP server${page.total === 1 ? '' : 's'}`,
    };
  }

  /** `GET /api/mcp/servers/{id}`. */
  async getMcpServer(caller: Caller, id: string): Promise<McpServerResponse> {
    return { success: true, server: toServerView(await this.#mcpServer(caller, id)) };
  }

  /** `GET /api/mcp/servers/{id}/tools`: what the server offers now, over its shared connection. */
  async listMcpTools(caller: Caller, id: string, signal?: AbortSignal): Promise<McpToolsResponse> {
    const server = await this.#mcpServer(caller, id);
    const tools = await this.#mcpOptions().connector.listTools(server.id, serverConfig(server, this.#secrets), signal ? { signal } : {});
    return {
      success: true,
      tools: tools.map(toToolView),
      message: `${tools.length} tool${tools.length === 1 ? '' : 's'}`,
    };
  }

  /** `DELETE /api/mcp/servers/{id}`: disconnects and deletes the configuration. */
  async deleteMcpServer(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    const mcp = this.#mcpOptions();
    if (!(await this.storage.mcpServers.delete(caller.userId, id))) throw PlatformError.notFound('MCP server not found');
    await this.#disconnectEverywhere(id, mcp);
    return { success: true, message: 'MCP server deleted' };
  }

  /** Closes the connections of every instance to a deleted server: this one's now, the others' when they hear it. */
  async #disconnectEverywhere(serverId: string, mcp = this.#mcp): Promise<void> {
    if (!mcp) return;
    await mcp.connector.disconnect(serverId);
    await this.#notifier.publish(MCP_DELETED_CHANNEL, { serverId }).catch(() => {
      // Not heard: another instance's connection stays open until it closes, though the server is
      // gone from storage, so no call reaches it through that instance any more.
    });
  }

  /** `POST /api/mcp/detect-transport`: which transports answer at the URL. */
  async detectMcpTransport(_caller: Caller, input: DetectTransportRequest, signal?: AbortSignal): Promise<DetectTransportResponse> {
    const { url } = parseInput(DetectTransportRequest, input);
    const found = await this.#mcpOptions().connector.detectTransport(url, signal ? { signal } : {});
    if (found.supportedTypes.length === 0) {
      throw new PlatformError('upstream_error', 'Unable to detect transport types');
    }
    return {
      success: true,
      message: `Detected ${found.supportedTypes.join(' and ')}; recommended: ${found.recommended}`,
      supportedTypes: [...found.supportedTypes],
      recommended: found.recommended ?? null,
    };
  }

  // ---- local model runtime --------------------------------------------------------------

  /** `GET /api/v1/localmodel/list-models`: `{ status, body }` (failures use `error`, with `models: []`). */
  listLocalModels(_caller: Caller, query: ListLocalModelsQuery = {}): Promise<LocalModelResult<ListLocalModelsResponse>> {
    return listLocalModels(this.#localModels, query, this.#localModelOptions());
  }

  /** `DELETE /api/v1/localmodel/delete-model`: `{ status, body }`. */
  deleteLocalModel(_caller: Caller, input: DeleteLocalModelRequest): Promise<LocalModelResult<DeleteLocalModelResponse>> {
    return deleteLocalModel(this.#localModels, input, this.#localModelOptions());
  }

  #localModelOptions(): LocalModelServiceOptions {
    return { defaultRuntime: this.#defaultLocalModels, ...(this.#localModelUrl ? { defaultBaseUrl: this.#localModelUrl } : {}) };
  }

  // ---- chats ----------------------------------------------------------------------------

  /** `POST /api/chats`: a chat of one of the caller's projects. */
  async createChat(caller: Caller, input: CreateChatRequest): Promise<ChatResponse> {
    const body = parseInput(CreateChatRequest, input);
    await this.#project(caller, body.projectId);
    const now = this.clock.now();
    const record: ChatRecord = { id: this.ids.next('chat'), userId: caller.userId, projectId: body.projectId, name: body.name ?? 'New chat', createdAt: now, updatedAt: now };
    await this.storage.transaction(async (tx) => {
      await this.#caps.reserve(tx, caller.userId, 'chats');
      await tx.chats.insert(record);
    });
    return { success: true, chat: toChat(record) };
  }

  /** `GET /api/chats`: the caller's chats, newest first. (The route's failures also answer the spec's empty list.) */
  async listChats(caller: Caller, query: ListChatsQuery = {}): Promise<ListChatsResponse> {
    const q = parseInput(ListChatsQuery, query);
    if (q.projectId !== undefined) await this.#project(caller, q.projectId);
    const page = await this.storage.chats.list({ userId: caller.userId, projectId: q.projectId, limit: q.limit, offset: q.offset });
    return {
      success: true,
      chats: page.items.map(toChat),
      ...offsetPageFields(q.offset, page),
      message: page.total === 0 ? 'No chats found' : `Found ${page.total} chat${page.total === 1 ? '' : 's'}`,
    };
  }

  /**
   * The caller's chat of an id the client chose, created (in `projectId`) when the caller has
   * none. Chat ids are unique per user: another user's chat of the same id is neither found nor
   * in the way, so every unknown id is answered alike and no id can be taken from anyone. A new
   * id must have the form of a chat id (`CHAT_ID_RULE`).
   */
  async #openChat(caller: Caller, id: string, projectId: string): Promise<ChatRecord> {
    if (!isChatId(id)) throw PlatformError.invalid(`chatId: ${CHAT_ID_RULE}`, [{ path: ['chatId'], code: 'invalid_format', message: CHAT_ID_RULE }]);
    const now = this.clock.now();
    const record: ChatRecord = { id, userId: caller.userId, projectId, name: 'New chat', createdAt: now, updatedAt: now };
    try {
      await this.storage.transaction(async (tx) => {
        await this.#caps.reserve(tx, caller.userId, 'chats');
        await tx.chats.insert(record);
      });
      return record;
    } catch (error) {
      // Created meanwhile by another request of the caller's: that one is the chat.
      const existing = isPlatformError(error) && error.code === 'conflict' ? await this.storage.chats.get(caller.userId, id) : undefined;
      if (!existing) throw error;
      return existing;
    }
  }

  async #chat(caller: Caller, chatId: string): Promise<ChatRecord> {
    const chat = await this.storage.chats.get(caller.userId, chatId);
    if (!chat) throw PlatformError.notFound('Chat not found');
    return chat;
  }

  /** `GET /api/chats/{chatId}/messages`: every stored message, in order (tool calls and results included). */
  async chatMessages(caller: Caller, chatId: string): Promise<ChatMessagesResponse> {
    await this.#chat(caller, chatId);
    const messages = await this.storage.chats.messages(caller.userId, chatId);
    return {
      success: true,
      messages: messages.map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.toolCalls ? { toolCalls: m.toolCalls.map((c) => ({ ...c })) } : {}),
        ...(m.toolCallId ? { toolCallId: m.toolCallId } : {}),
        ...(m.sources?.length ? { sources: m.sources.map((source) => ({ ...source })) } : {}),
        createdAt: m.createdAt.toISOString(),
      })),
    };
  }

  /** `PATCH /api/chats/{chatId}`: renames the chat. */
  async renameChat(caller: Caller, chatId: string, input: RenameChatRequest): Promise<ChatResponse> {
    const body = parseInput(RenameChatRequest, input);
    const chat = await this.storage.chats.update(caller.userId, chatId, { name: body.name, updatedAt: this.clock.now() });
    if (!chat) throw PlatformError.notFound('Chat not found');
    return { success: true, chat: toChat(chat) };
  }

  /** `DELETE /api/chats/{chatId}`: the chat and its messages. */
  async deleteChat(caller: Caller, chatId: string): Promise<{ success: true; message: string }> {
    if (!(await this.storage.chats.delete(caller.userId, chatId))) throw PlatformError.notFound('Chat not found');
    return { success: true, message: 'Chat deleted' };
  }

  // ---- credentials ----------------------------------------------------------------------

  /** `POST /api/v1/credentials`: the address checked against the outbound policy; the key sealed, never returned. */
  createCredential(caller: Caller, input: CreateCredentialRequest): Promise<CredentialResponse> {
    return this.#credentials.create(caller, input);
  }

  /** `GET /api/v1/credentials`: newest first, without secrets. */
  listCredentials(caller: Caller): Promise<ListCredentialsResponse> {
    return this.#credentials.list(caller);
  }

  /** `GET /api/v1/credentials/{id}`. */
  getCredential(caller: Caller, id: string): Promise<CredentialResponse> {
    return this.#credentials.get(caller, id);
  }

  /** `PATCH /api/v1/credentials/{id}`: changes only the members of `data` that are given. */
  updateCredential(caller: Caller, id: string, input: UpdateCredentialRequest): Promise<{ success: true; message: string }> {
    return this.#credentials.update(caller, id, input);
  }

  /** `DELETE /api/v1/credentials/{id}`: refused (409) while projects use it. */
  deleteCredential(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.#credentials.delete(caller, id);
  }

  /** `POST /api/v1/credentials/{id}/test`: one cheap real call with the credential; the outcome is recorded in `isValid`. */
  testCredential(caller: Caller, id: string, signal?: AbortSignal): Promise<CredentialTestResponse> {
    return this.#credentials.test(caller, id, signal);
  }

  /**
   * The caller's credential for a provider call, decrypted: the one `credentialId` names (a
   * project's), else the caller's default of the provider (`chooseCredential`).
   * Undefined when there is none (callers fall back to the environment).
   */
  async providerCredential(caller: Caller, provider: string, credentialId?: string | null): Promise<UsableCredential | undefined> {
    if (!this.#secrets) return undefined;
    const { record } = await chooseCredential(this.storage, caller.userId, provider, credentialId);
    return record ? unseal(record, this.#secrets) : undefined;
  }

  /** `GET /api/v1/credentials/{id}/models`: the models the credential's upstream offers. */
  listCredentialModels(caller: Caller, id: string, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    return this.#credentials.models(caller, id, signal);
  }

  /** `GET /api/v1/credentials/default/models?provider=`: the models of the upstream a project naming no credential calls. */
  listDefaultModels(caller: Caller, query: DefaultModelsQuery, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    return this.#credentials.defaultModels(caller, query, signal);
  }

  // ---- knowledge ------------------------------------------------------------------------

  /**
   * `POST /api/knowledge/documents`: stores the document and indexes it in the background;
   * answers `completed` (or `failed`) when that finished within the wait, else `processing`.
   */
  async createDocument(caller: Caller, input: CreateDocumentRequest): Promise<CreateDocumentResponse> {
    const body = parseInput(CreateDocumentRequest, input);
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const doc = await kb.submit(caller, body);
    await kb.waitFor(doc.id, this.#knowledgeAdapters?.waitMs ?? 5000);
    const now = await this.storage.documents.get(caller.userId, doc.id);
    if (now?.status === 'completed') {
      return { success: true, status: 'completed', message: 'Document indexed successfully', documentId: doc.id };
    }
    if (now?.status === 'failed') {
      return { success: false, status: 'failed', message: now.error ?? 'Failed to index document', documentId: null };
    }
    return { success: true, status: 'processing', message: 'Document is being indexed', documentId: doc.id };
  }

  /**
   * `POST /api/knowledge/documents/stream`: the indexing events of a new document, ending with
   * `complete` or `error`. Invalid input and unknown projects throw before the first event.
   */
  async createDocumentStream(caller: Caller, input: CreateDocumentRequest): Promise<AsyncIterable<IndexingEvent>> {
    const body = parseInput(CreateDocumentRequest, input);
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const events: IndexingEvent[] = [];
    let wake: (() => void) | undefined;
    await kb.submit(caller, body, (event) => {
      events.push(event);
      wake?.();
    });
    return {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const event = events.shift();
          if (event) {
            yield event;
            if (event.type !== 'progress') return;
          } else {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
          }
        }
      },
    };
  }

  /**
   * `POST /api/knowledge/upload`: stores each file and indexes it as a document. A file of an
   * unsupported type fails alone (no document); the others still index. Waits for indexing
   * like `createDocument`, for all files together, unless `wait` is false (the `?wait=false` of
   * the route): then it answers once the files are stored, and `documentEvents` follows each.
   */
  async uploadFiles(caller: Caller, input: UploadRequest, options: { wait?: boolean } = {}): Promise<UploadResponse> {
    const { projectId, files } = parseInput(UploadRequest, input);
    const kb = this.#kb();
    const blobs = kb.blobs;
    await this.#project(caller, projectId);
    // The whole upload is refused, nothing stored, when its documents would pass the user's cap.
    await this.#caps.check(this.storage, caller.userId, 'documents', files.filter((file) => fileTypeOf(file.name, file.type)).length);
    const started = files.map((file) => {
      const fileType = fileTypeOf(file.name, file.type);
      if (!fileType) {
        return { file, fileType: extensionOf(file.name) || file.type || 'unknown', fileId: null, documentId: null as string | null, error: unsupportedFileMessage(file.name) };
      }
      return { file, fileType, fileId: this.ids.next('file'), documentId: null as string | null, error: null };
    });
    const supported = started.filter((s): s is typeof s & { fileId: string } => s.fileId !== null);
    await Promise.all(supported.map((s) => blobs.put(s.fileId, s.file.bytes)));
    try {
      // One transaction: every supported file becomes a document, or (an error, a full queue) none.
      const docs = await kb.submitAll(
        caller,
        supported.map((s) => ({ projectId, fileName: s.file.name, fileType: s.fileType, sourceType: 'upload' as const, upload: { id: s.fileId, size: s.file.bytes.byteLength } })),
      );
      for (const [i, s] of supported.entries()) s.documentId = (docs[i] as { id: string }).id;
    } catch (error) {
      await Promise.all(supported.map((s) => blobs.delete(s.fileId).catch(() => {}))); // no file without its row
      throw error;
    }
    const wait = options.wait === false ? 0 : (this.#knowledgeAdapters?.waitMs ?? 5000);
    if (wait > 0) await Promise.all(started.map((s) => (s.documentId ? kb.waitFor(s.documentId, wait) : undefined)));
    const results = await Promise.all(
      started.map(async (s) => {
        const doc = s.documentId ? await this.storage.documents.get(caller.userId, s.documentId) : undefined;
        const status = doc ? (doc.status === 'pending' ? 'processing' : doc.status) : 'failed';
        return {
          fileId: s.fileId,
          fileName: s.file.name,
          fileType: s.fileType,
          size: s.file.bytes.byteLength,
          documentId: s.documentId,
          status,
          error: s.error ?? doc?.error ?? null,
        };
      }),
    );
    const failed = results.filter((r) => r.status === 'failed').length;
    return {
      success: failed < results.length,
      files: results,
      message: failed === 0 ? `Uploaded ${results.length} file${results.length === 1 ? '' : 's'}` : `${failed} of ${results.length} files failed`,
    };
  }

  /** `GET /api/knowledge/documents`: a project's documents, newest first. */
  async listDocuments(caller: Caller, query: ListDocumentsQuery): Promise<ListDocumentsResponse> {
    const q = parseInput(ListDocumentsQuery, query);
    await this.#project(caller, q.projectId);
    const page = await this.storage.documents.list({
      userId: caller.userId,
      projectId: q.projectId,
      limit: q.limit,
      offset: q.offset,
      ...(q.status ? { status: q.status } : {}),
    });
    const documents = page.items.map((d) => {
      const { id, projectId, fileName, fileType, sourceType, status, chunkCount, vectorCount, createdAt, updatedAt } = toKnowledgeDocument(d);
      return { id, projectId, fileName, fileType, sourceType, status, chunkCount, vectorCount, createdAt, updatedAt };
    });
    return {
      success: true,
      documents,
      ...offsetPageFields(q.offset, page),
    };
  }

  /** `GET /api/knowledge/documents/{id}`. */
  async getDocument(caller: Caller, id: string): Promise<DocumentResponse> {
    const doc = await this.storage.documents.get(caller.userId, id);
    if (!doc) throw PlatformError.notFound(`Document ${id} not found`);
    return { success: true, document: toKnowledgeDocument(doc) };
  }

  /**
   * `GET /api/knowledge/documents/{id}/events`: a document's indexing from now on, as the stream
   * route reports it (progress 10 to 90, then `complete` or `error`); a document whose indexing
   * has ended answers its final event alone. Follows uploads (PDF, DOCX) as the stream route
   * follows texts.
   */
  async documentEvents(caller: Caller, id: string, signal?: AbortSignal): Promise<AsyncIterable<IndexingEvent>> {
    const kb = this.#kb();
    const events = await followDocument({
      documentId: id,
      subscribe: (documentId, listener) => kb.subscribe(documentId, listener),
      read: () => this.storage.documents.get(caller.userId, id),
      signal,
    });
    if (!events) throw PlatformError.notFound(`Document ${id} not found`);
    return events;
  }

  /** `GET /api/knowledge/chunks/{id}`: one chunk of the caller's knowledge, with its text (what a citation points at). */
  async getChunk(caller: Caller, id: string): Promise<ChunkResponse> {
    const chunk = await this.storage.chunks.get(caller.userId, id);
    if (!chunk) throw PlatformError.notFound(`Chunk ${id} not found`);
    return { success: true, chunk: toKnowledgeChunk(chunk) };
  }

  /**
   * `GET /api/knowledge/documents/{id}/chunks`: a page of one of the caller's documents' chunks
   * in document order, with their text, token counts and metadata (page, section).
   */
  async listDocumentChunks(caller: Caller, id: string, query: ListChunksQuery = {}): Promise<ListChunksResponse> {
    const q = parseInput(ListChunksQuery, query);
    if (!(await this.storage.documents.get(caller.userId, id))) throw new PlatformError('not_found', `Document ${id} not found`);
    const page = await this.storage.chunks.pageByDocument({ documentId: id, limit: q.limit, offset: q.offset });
    return { success: true, chunks: page.items.map(toKnowledgeChunk), ...offsetPageFields(q.offset, page) };
  }

  /** `DELETE /api/knowledge/documents/{id}`: the document, its chunks and vectors (also mid-indexing). */
  async deleteDocument(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.#kb().deleteDocument(caller, id))) throw PlatformError.notFound(`Document ${id} not found`);
    return { success: true, message: 'Document deleted' };
  }

  /** `POST /api/knowledge/search`. */
  async searchKnowledge(caller: Caller, input: SearchRequest): Promise<SearchResponse> {
    const body = parseInput(SearchRequest, input);
    const kb = this.#kb();
    await this.#project(caller, body.projectId);
    const documents = await kb.search(caller, body.projectId, body);
    return {
      success: true,
      documents,
      message: documents.length === 0 ? 'No documents matched the query' : `Found ${documents.length} matching chunk${documents.length === 1 ? '' : 's'}`,
    };
  }

  /**
   * Searches a project's knowledge base: the same call as {@link searchKnowledge} (named after
   * its route), under the name library users look for first.
   */
  search(caller: Caller, input: SearchRequest): Promise<SearchResponse> {
    return this.searchKnowledge(caller, input);
  }

  /** Vectors stored for a project under its current embedding model (for checks and operators). */
  async countVectors(caller: Caller, projectId: string): Promise<number> {
    const kb = this.#kb();
    await this.#project(caller, projectId);
    const settings = await kb.settings(projectId);
    const model = kb.embedderFor(settings, caller);
    return (await kb.vectorsFor(settings)).count(vectorNamespace(projectId, model));
  }

  /**
   * `POST /api/knowledge/reindex`: indexes the project's documents (or those named) again from
   * their stored sources with the project's current settings, through the job queue; each
   * document goes `pending` → `processing` → `completed` and search answers its earlier chunks
   * until its new ones are written (`KnowledgeBase#reindex`).
   */
  async reindexKnowledge(caller: Caller, input: ReindexRequest): Promise<ReindexResponse> {
    const body = parseInput(ReindexRequest, input);
    await this.#project(caller, body.projectId);
    const queued = await this.#kb().reindex(caller, body.projectId, body.documentIds);
    const n = queued.length;
    return {
      success: true,
      message: n === 0 ? 'The project has no documents to re-index' : `Re-indexing ${n} document${n === 1 ? '' : 's'}`,
      queued: n,
      documentIds: queued.map((d) => d.id),
    };
  }

  /**
   * `GET /api/knowledge/settings?projectId=`: every RAG setting's value in effect (the project's,
   * else the default), secrets redacted, and which are defaults.
   */
  async getKnowledgeSettings(caller: Caller, query: GetSettingsQuery): Promise<KnowledgeSettingsResponse> {
    const { projectId } = parseInput(GetSettingsQuery, query);
    await this.#project(caller, projectId);
    return { success: true, ...effectiveSettings(await this.#kb().settings(projectId)) };
  }

  /**
   * `PUT /api/knowledge/settings`: changes the members given (null takes one back to its
   * default; members left out keep their value). Secrets of the vector store configuration are
   * sealed at rest; one sent back redacted as GET answered it keeps the stored secret. A new
   * embedding model or vector store re-indexes the project; new chunking is applied by
   * `reindexKnowledge` (the answer's `reindex` says which).
   */
  async putKnowledgeSettings(caller: Caller, input: PutSettingsRequest): Promise<PutSettingsResponse> {
    const parsed = parseInput(PutSettingsRequest, input);
    await this.#project(caller, parsed.projectId);
    const kb = this.#kb();
    const previous = await kb.settings(parsed.projectId);
    const body = { projectId: parsed.projectId, settings: applySettingsChange(previous, parsed.settings) };
    const before = kb.embedderFor(previous, caller);
    const after = kb.embedderFor(body.settings, caller); // an unknown model is refused here
    const oldStore = await kb.vectorsFor(previous).catch(() => undefined);
    // A new store must be usable before the project moves to it (reachable, the key accepted,
    // an existing index of the right dimension): the settings are not changed otherwise. The
    // same store is checked again when the model's dimension changes: an index of a server
    // (Chroma, Qdrant, Pinecone) has one dimension, so a model of another cannot go there (in
    // PostgreSQL mode every project's default store is such an index). A model that tells its
    // dimension only once it has embedded (0) is checked by its first write instead.
    const newStore = await kb.vectorsFor(body.settings).catch((error: unknown) => {
      throw invalidStoreConfiguration(error);
    });
    const newDimension = after.dimensions > 0 && after.dimensions !== before.dimensions;
    if ((newStore !== oldStore || newDimension) && newStore.check) {
      await newStore.check({ dimensions: after.dimensions }).catch((error: unknown) => {
        throw invalidStoreConfiguration(error);
      });
    }
    const at = this.clock.now();
    if (before.id !== after.id || newStore !== oldStore) {
      // The settings are stored with the documents' new jobs: both, or (a full queue) neither.
      const queued = await kb.reindexProject(caller, body.projectId, { previous: before, previousStore: oldStore ?? newStore, settings: body.settings, at });
      const provider = body.settings.vectorstoreProvider;
      // No provider (or `builtin`) is the server's default store: the built-in one on one machine, the shared one with --vector-store.
      const what = before.id !== after.id ? `with ${after.id}` : `into ${provider && provider !== 'builtin' ? `the ${provider}` : 'the default'} store`;
      return { success: true, message: `Knowledge settings updated; re-indexing ${queued} document${queued === 1 ? '' : 's'} ${what}`, reindex: 'started' };
    }
    await kb.putSettings(body.projectId, body.settings, at);
    // Documents already indexed keep the chunks they were cut into: offered, not forced (a
    // large knowledge base may be worth re-indexing only once the chunking is right).
    const hasDocuments = async () => (await this.storage.documents.list({ userId: caller.userId, projectId: body.projectId, limit: 1, offset: 0 })).total > 0;
    if (chunkingChanged(previous, body.settings) && (await hasDocuments())) {
      return {
        success: true,
        message: 'Knowledge settings updated; documents indexed before keep their chunks until re-indexed (POST /api/knowledge/reindex)',
        reindex: 'suggested',
      };
    }
    return { success: true, message: 'Knowledge settings updated', reindex: 'none' };
  }
}
