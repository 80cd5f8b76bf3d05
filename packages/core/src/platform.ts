import { AuthService } from './auth/service.js';
import { ChatsService } from './chats/service.js';
import { type Clock, systemClock } from './clock.js';
import type { AgentOptions } from './completions/options.js';
import { type CompletionResult, CompletionsService } from './completions/service.js';
import type { StreamEvent, StreamHubOptions } from './completions/streams/hub.js';
import { memoryStreamStore, type StreamRecord, type StreamStore } from './completions/streams/stream-store.js';
import type { Caller, PlatformContext } from './context.js';
import type { DefaultBaseUrl, UsableCredential } from './credentials/choose.js';
import { CredentialsService } from './credentials/service.js';
import { createIdGenerator, type IdGenerator } from './ids.js';
import type { IndexingEvent } from './knowledge/indexing-events.js';
import type { KnowledgeAdapters } from './knowledge/options.js';
import { KnowledgeService } from './knowledge/service.js';
import type { LocalModelRuntime } from './local-models/runtime.js';
import { LocalModelsService, withoutEmptyBaseUrl } from './local-models/service.js';
import { McpService } from './mcp/service.js';
import { MCP_TOOL_PREFIX, mcpToolSource } from './mcp/tool-source.js';
import type { McpOptions } from './mcp/types.js';
import { createGuardedFetch, type GuardedFetch } from './net/guarded-fetch.js';
import { createOutboundPolicy, type OutboundPolicyOptions } from './net/policy.js';
import type { ByteLimit } from './net/upstream-limits.js';
import { createMemoryNotifier, type Notifier } from './notify/notifier.js';
import { ProjectsService } from './projects/service.js';
import { type ApiKeySummary, CreateKeyRequest, type CreateKeyResponse, ListKeysQuery, type ListKeysResponse } from './schemas/auth.js';
import { type ChatMessagesResponse, type ChatResponse, CreateChatRequest, CreateStreamRequest, ListChatsQuery, type ListChatsResponse, RenameChatRequest } from './schemas/chats.js';
import { ChatCompletionRequest } from './schemas/completions.js';
import { CreateCredentialRequest, type CredentialResponse, type CredentialTestResponse, type ListCredentialsResponse, UpdateCredentialRequest } from './schemas/credentials.js';
import {
  type ChunkResponse,
  CreateDocumentRequest,
  type CreateDocumentResponse,
  type DocumentResponse,
  GetSettingsQuery,
  type KnowledgeSettingsResponse,
  ListChunksQuery,
  type ListChunksResponse,
  ListDocumentsQuery,
  type ListDocumentsResponse,
  PutSettingsRequest,
  type PutSettingsResponse,
  ReindexRequest,
  type ReindexResponse,
  SearchRequest,
  type SearchResponse,
  UploadRequest,
  type UploadResponse,
} from './schemas/knowledge.js';
import { DeleteLocalModelRequest, type DeleteLocalModelResponse, ListLocalModelsQuery, type ListLocalModelsResponse } from './schemas/local-models.js';
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
import { ListModelsQuery, type ListModelsResponse, type ModelObject } from './schemas/models.js';
import { CreateProjectRequest, ListProjectsQuery, type ListProjectsResponse, type ProjectResponse, UpdateProjectRequest } from './schemas/projects.js';
import { DefaultModelsQuery, type ProviderModelsResponse } from './schemas/provider-models.js';
import { ActivateToolRequest, CreateToolRequest, ListToolsQuery, type ListToolsResponse, RunToolRequest, type RunToolResponse, type ToolResponse, UpdateToolRequest } from './schemas/tools.js';
import type { SecretBox } from './security/secrets.js';
import type { StorageAdapter } from './storage/types.js';
import { ToolRunner, type ToolsOptions } from './tools/project-tools.js';
import { ToolsService } from './tools/service.js';
import { UserCapGuard, type UserCapName, type UserCaps } from './user-caps.js';
import { parseInput } from './validation.js';

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

/**
 * The engine. One method per API endpoint; each takes the caller and the request as the
 * client sent it (validated here), and answers the response body of the endpoint. The work is
 * done by one service per area (`auth`, `projects`, `chats`, ...), which take parsed input; the
 * methods that parse are `async`, so refused input rejects the promise rather than throwing.
 */
export class AgentPlatform {
  readonly storage: StorageAdapter;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly #secrets: SecretBox | undefined;
  readonly #streams: StreamStore;
  /** The sandboxes' runner, shared by `tools` and the completions' tool source. */
  readonly #tools: ToolRunner | undefined;
  readonly #mcp: McpOptions | undefined;
  readonly #notifier: Notifier;
  /** Fetch for every URL a caller supplies: checks the outbound policy before connecting. */
  readonly fetch: GuardedFetch;
  readonly #defaultBaseUrl: DefaultBaseUrl | undefined;
  readonly #caps: UserCapGuard;
  /** What every area service is built from. */
  readonly #ctx: PlatformContext;
  /** Chat completions, the models list and resumable chat streams. */
  readonly completions: CompletionsService;
  /** Documents, chunks, search and settings of projects' knowledge bases. */
  readonly knowledge: KnowledgeService;
  /** Users and API keys. */
  readonly auth: AuthService;
  /** Users' provider credentials, and which one a provider call uses. */
  readonly credentials: CredentialsService;
  /** Projects (agents) and their settings. */
  readonly projects: ProjectsService;
  /** Chats of projects and their messages. */
  readonly chats: ChatsService;
  /** Projects' tools (sandboxed code). */
  readonly tools: ToolsService;
  /** Projects' MCP servers. */
  readonly mcp: McpService;
  /** The local model runtime (Ollama). */
  readonly localModels: LocalModelsService;

  constructor(options: AgentPlatformOptions) {
    this.storage = options.storage;
    this.#caps = new UserCapGuard(options.userCaps, options.userCapHints);
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? createIdGenerator(() => this.clock.now().getTime());
    this.#streams = options.streamStore ?? memoryStreamStore({ ...options.streams, clock: this.clock });
    this.#secrets = options.secrets;
    this.fetch = options.fetch ?? createGuardedFetch(createOutboundPolicy(options.outbound));
    this.#defaultBaseUrl = options.agent?.defaultBaseUrl;
    this.#notifier = options.notifier ?? createMemoryNotifier();
    this.#ctx = { storage: this.storage, clock: this.clock, ids: this.ids, notifier: this.#notifier, fetch: this.fetch, secrets: this.#secrets, caps: this.#caps };
    this.auth = new AuthService(this.#ctx);
    this.localModels = new LocalModelsService(this.#ctx, {
      ...(options.localModels ? { runtime: options.localModels } : {}),
      ...(options.localModelAnswerLimit ? { answerLimit: options.localModelAnswerLimit } : {}),
      ...(options.localModelUrl ? { defaultBaseUrl: options.localModelUrl } : {}),
      ...(options.operatorFetch ? { operatorFetch: options.operatorFetch } : {}),
    });
    this.chats = new ChatsService(this.#ctx);
    this.credentials = new CredentialsService(this.#ctx, {
      models: options.agent?.models,
      defaultBaseUrl: this.#defaultBaseUrl,
      ...(options.credentialTestTimeoutMs !== undefined ? { testTimeoutMs: options.credentialTestTimeoutMs } : {}),
    });
    this.knowledge = new KnowledgeService(this.#ctx, { adapters: options.knowledge });
    this.#tools = options.tools ? new ToolRunner(options.tools) : undefined;
    this.tools = new ToolsService(this.#ctx, { runner: this.#tools, reservedPrefix: MCP_TOOL_PREFIX });
    this.#mcp = options.mcp;
    this.mcp = new McpService(this.#ctx, this.#mcp);
    // What deleting a project drops outside its rows: the knowledge's blobs and vectors, then the connections to its MCP servers.
    this.projects = new ProjectsService(this.#ctx, { credentials: this.credentials, cleanups: [this.knowledge, this.mcp] });
    this.completions = new CompletionsService(this.#ctx, {
      agent: options.agent,
      streams: this.#streams,
      chats: this.chats,
      credentials: this.credentials,
      knowledge: this.knowledge.retriever,
      tools: [...(this.#tools ? [this.#tools.source(this.storage)] : []), ...(this.#mcp ? [mcpToolSource(this.storage, this.#secrets, this.#mcp)] : []), ...(options.agent?.toolSources ?? [])],
    });
  }

  /** Resumes background work left by an earlier run (unfinished indexing jobs). Call once after constructing. */
  async start(): Promise<void> {
    await this.knowledge.start();
  }

  /** `await using platform = new AgentPlatform(...)`: closes the platform when the scope ends (`close()`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Stops background work and closes the adapters (storage last). Idempotent. */
  async close(): Promise<void> {
    await this.knowledge.close();
    await this.#tools?.close();
    await this.mcp.close();
    await this.fetch.close();
    await this.#streams.close?.();
    await this.#notifier.close();
    await this.storage.close();
  }

  /** Creates a user and its first key (operator bootstrap: `agent-platform keys create`). */
  async createUserWithKey(input: CreateKeyRequest): Promise<CreateKeyResponse> {
    return this.auth.createUserWithKey(parseInput(CreateKeyRequest, input));
  }

  /** The first key of an empty platform, or undefined when a key exists (`AuthService.createFirstKey`). */
  async createFirstKey(input: CreateKeyRequest): Promise<CreateKeyResponse | undefined> {
    return this.auth.createFirstKey(parseInput(CreateKeyRequest, input));
  }

  /** `POST /api/auth/create-key`: another key for the caller's user, within the user's cap of keys. */
  async createKey(caller: Caller, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    return this.auth.createKey(caller, parseInput(CreateKeyRequest, input));
  }

  /** Creates a key for an existing user (operator: `keys create --user`; not capped). */
  async createKeyForUser(userId: string, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    return this.auth.createKeyForUser(userId, parseInput(CreateKeyRequest, input));
  }

  /** `GET /api/auth/keys`: a page of the caller's keys, newest first, without secrets. */
  async listKeys(caller: Caller, query: ListKeysQuery = {}): Promise<ListKeysResponse> {
    return this.auth.listKeys(caller, parseInput(ListKeysQuery, query));
  }

  /** Every key of an existing user, newest first (operator: `keys list --user`); `not_found` for an unknown user. */
  listKeysForUser(userId: string): Promise<{ userId: string; keys: ApiKeySummary[] }> {
    return this.auth.listKeysForUser(userId);
  }

  /** Every user's keys, without secrets (operator: `agent-platform keys list`), the user with the newest key first. */
  listAllKeys(): Promise<{ userId: string; keys: ApiKeySummary[] }[]> {
    return this.auth.listAllKeys();
  }

  /** `DELETE /api/auth/keys/{id}`: revokes one of the caller's keys (also the one in use). */
  deleteKey(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.auth.deleteKey(caller, id);
  }

  /** The caller a presented key belongs to, or undefined for an unknown or malformed key. */
  authenticate(key: string): Promise<Caller | undefined> {
    return this.auth.authenticate(key);
  }

  /** Number of keys of all users (the server prints a first key when there is none). */
  countKeys(): Promise<number> {
    return this.auth.countKeys();
  }

  /** `POST /api/projects/create`. */
  async createProject(caller: Caller, input: CreateProjectRequest): Promise<ProjectResponse> {
    return this.projects.create(caller, parseInput(CreateProjectRequest, input));
  }

  /**
   * `GET /api/v1/projects`: newest first. With `cursor`, the page starts right after the
   * cursor's project (stable while projects are created); otherwise at `offset`.
   */
  async listProjects(caller: Caller, query: ListProjectsQuery = {}): Promise<ListProjectsResponse> {
    return this.projects.list(caller, parseInput(ListProjectsQuery, query));
  }

  /** `GET /api/v1/projects/{id}`. */
  getProject(caller: Caller, id: string): Promise<ProjectResponse> {
    return this.projects.get(caller, id);
  }

  /** `PATCH /api/v1/projects/{id}`. */
  async updateProject(caller: Caller, id: string, input: UpdateProjectRequest): Promise<ProjectResponse> {
    return this.projects.update(caller, id, parseInput(UpdateProjectRequest, input));
  }

  /** `DELETE /api/v1/projects/{id}`: the project and everything in it (documents, chunks, vectors). */
  deleteProject(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.projects.delete(caller, id);
  }

  /** `POST /api/chats`: a chat of one of the caller's projects. */
  async createChat(caller: Caller, input: CreateChatRequest): Promise<ChatResponse> {
    return this.chats.create(caller, parseInput(CreateChatRequest, input));
  }

  /** `GET /api/chats`: the caller's chats, newest first. (The route's failures also answer the spec's empty list.) */
  async listChats(caller: Caller, query: ListChatsQuery = {}): Promise<ListChatsResponse> {
    return this.chats.list(caller, parseInput(ListChatsQuery, query));
  }

  /** `GET /api/chats/{chatId}/messages`: every stored message, in order (tool calls and results included). */
  chatMessages(caller: Caller, chatId: string): Promise<ChatMessagesResponse> {
    return this.chats.messages(caller, chatId);
  }

  /** `PATCH /api/chats/{chatId}`: renames the chat. */
  async renameChat(caller: Caller, chatId: string, input: RenameChatRequest): Promise<ChatResponse> {
    return this.chats.rename(caller, chatId, parseInput(RenameChatRequest, input));
  }

  /** `DELETE /api/chats/{chatId}`: the chat and its messages. */
  deleteChat(caller: Caller, chatId: string): Promise<{ success: true; message: string }> {
    return this.chats.delete(caller, chatId);
  }

  /** `POST /api/v1/credentials`: the address checked against the outbound policy; the key sealed, never returned. */
  async createCredential(caller: Caller, input: CreateCredentialRequest): Promise<CredentialResponse> {
    return this.credentials.create(caller, parseInput(CreateCredentialRequest, input));
  }

  /** `GET /api/v1/credentials`: newest first, without secrets. */
  listCredentials(caller: Caller): Promise<ListCredentialsResponse> {
    return this.credentials.list(caller);
  }

  /** `GET /api/v1/credentials/{id}`. */
  getCredential(caller: Caller, id: string): Promise<CredentialResponse> {
    return this.credentials.get(caller, id);
  }

  /** `PATCH /api/v1/credentials/{id}`: changes only the members of `data` that are given. */
  async updateCredential(caller: Caller, id: string, input: UpdateCredentialRequest): Promise<{ success: true; message: string }> {
    return this.credentials.update(caller, id, parseInput(UpdateCredentialRequest, input));
  }

  /** `DELETE /api/v1/credentials/{id}`: refused (409) while projects use it. */
  deleteCredential(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.credentials.delete(caller, id);
  }

  /** `POST /api/v1/credentials/{id}/test`: one cheap real call with the credential; the outcome is recorded in `isValid`. */
  testCredential(caller: Caller, id: string, signal?: AbortSignal): Promise<CredentialTestResponse> {
    return this.credentials.test(caller, id, signal);
  }

  /**
   * The caller's credential for a provider call, decrypted: the one `credentialId` names (a
   * project's), else the caller's default of the provider. Undefined when there is none
   * (callers fall back to the environment).
   */
  providerCredential(caller: Caller, provider: string, credentialId?: string | null): Promise<UsableCredential | undefined> {
    return this.credentials.resolve(caller, provider, credentialId);
  }

  /** `GET /api/v1/credentials/{id}/models`: the models the credential's upstream offers. */
  listCredentialModels(caller: Caller, id: string, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    return this.credentials.models(caller, id, signal);
  }

  /** `GET /api/v1/credentials/default/models?provider=`: the models of the upstream a project naming no credential calls. */
  async listDefaultModels(caller: Caller, query: DefaultModelsQuery, signal?: AbortSignal): Promise<ProviderModelsResponse> {
    return this.credentials.defaultModels(caller, parseInput(DefaultModelsQuery, query), signal);
  }

  /** `POST /api/tools/create`. */
  async createTool(caller: Caller, input: CreateToolRequest): Promise<ToolResponse> {
    return this.tools.create(caller, parseInput(CreateToolRequest, input));
  }

  /** `GET /api/tools`: a project's tools, newest first. */
  async listTools(caller: Caller, query: ListToolsQuery): Promise<ListToolsResponse> {
    return this.tools.list(caller, parseInput(ListToolsQuery, query));
  }

  /** `GET /api/tools/{id}`. */
  getTool(caller: Caller, id: string): Promise<ToolResponse> {
    return this.tools.get(caller, id);
  }

  /** `PUT /api/tools/{id}`: `toolId` must equal the path id; changes the members of `tool` given. */
  async updateTool(caller: Caller, id: string, input: UpdateToolRequest): Promise<{ success: true; message: string }> {
    return this.tools.update(caller, id, parseInput(UpdateToolRequest, input));
  }

  /** `POST /api/tools/{id}/activate`: enables (`activeState: true`) or disables the tool. */
  async activateTool(caller: Caller, id: string, input: ActivateToolRequest): Promise<{ success: true; message: string }> {
    return this.tools.activate(caller, id, parseInput(ActivateToolRequest, input));
  }

  /** `DELETE /api/tools/{id}`. */
  deleteTool(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.tools.delete(caller, id);
  }

  /** `POST /api/tools/{id}/run`: runs the tool in its sandbox; a failing tool answers `success: false` with its error. */
  async runTool(caller: Caller, id: string, input: RunToolRequest, signal?: AbortSignal): Promise<RunToolResponse> {
    return this.tools.run(caller, id, parseInput(RunToolRequest, input), signal);
  }

  /**
   * `POST /api/mcp/add-server`: connects once (lists the tools) before saving, so a server that
   * cannot be reached, is not an MCP server, is refused by the outbound policy, or is a stdio
   * command the operator did not allow is never saved.
   */
  async addMcpServer(caller: Caller, input: AddMcpServerRequest, signal?: AbortSignal): Promise<AddMcpServerResponse> {
    return this.mcp.add(caller, parseInput(AddMcpServerRequest, input), signal);
  }

  /** `GET /api/mcp/servers?projectId=`: a project's servers, newest first. */
  async listMcpServers(caller: Caller, query: ListMcpServersQuery): Promise<ListMcpServersResponse> {
    return this.mcp.list(caller, parseInput(ListMcpServersQuery, query));
  }

  /** `GET /api/mcp/servers/{id}`. */
  getMcpServer(caller: Caller, id: string): Promise<McpServerResponse> {
    return this.mcp.get(caller, id);
  }

  /** `GET /api/mcp/servers/{id}/tools`: what the server offers now, over its shared connection. */
  listMcpTools(caller: Caller, id: string, signal?: AbortSignal): Promise<McpToolsResponse> {
    return this.mcp.tools(caller, id, signal);
  }

  /** `DELETE /api/mcp/servers/{id}`: disconnects and deletes the configuration. */
  deleteMcpServer(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.mcp.delete(caller, id);
  }

  /** `POST /api/mcp/detect-transport`: which transports answer at the URL. */
  async detectMcpTransport(caller: Caller, input: DetectTransportRequest, signal?: AbortSignal): Promise<DetectTransportResponse> {
    return this.mcp.detect(caller, parseInput(DetectTransportRequest, input), signal);
  }

  /** `GET /api/v1/localmodel/list-models`: the installed models; failures name the runtime's state in their message (`LocalModelsService`). */
  async listLocalModels(caller: Caller, query: ListLocalModelsQuery = {}): Promise<ListLocalModelsResponse> {
    return this.localModels.list(caller, parseInput(ListLocalModelsQuery, withoutEmptyBaseUrl(query ?? {})));
  }

  /** `DELETE /api/v1/localmodel/delete-model`. */
  async deleteLocalModel(caller: Caller, input: DeleteLocalModelRequest): Promise<DeleteLocalModelResponse> {
    return this.localModels.delete(caller, parseInput(DeleteLocalModelRequest, withoutEmptyBaseUrl(input ?? {})));
  }

  // ---- chat completions -----------------------------------------------------------------

  /**
   * `POST /api/v1/chat/completions` (`form: 'v1'`) and `POST /api/v1/ai/chat/completions`
   * (`form: 'ai'`). Answers the whole completion, or with `stream: true` the chunks to send.
   */
  async chatCompletion(caller: Caller, input: ChatCompletionRequest, options: { form: 'v1' | 'ai'; signal?: AbortSignal }): Promise<CompletionResult> {
    return this.completions.create(caller, parseInput(ChatCompletionRequest, input), options);
  }

  /**
   * `GET /api/v1/models` (no `id`): a page of the caller's projects as OpenAI model objects
   * (`limit`, `after`); with `id` (`GET /api/v1/models/{id}`) that one project, or `not_found`.
   */
  models(caller: Caller, query?: ListModelsQuery): Promise<ListModelsResponse>;
  models(caller: Caller, id: string): Promise<ModelObject>;
  async models(caller: Caller, idOrQuery?: string | ListModelsQuery): Promise<ListModelsResponse | ModelObject> {
    return typeof idOrQuery === 'string' ? this.completions.getModel(caller, idOrQuery) : this.completions.listModels(caller, parseInput(ListModelsQuery, idOrQuery ?? {}));
  }

  /** `POST /api/chats/{chatId}/streams`: a stream of the chat that completions can write to. */
  async createStream(caller: Caller, chatId: string, input: CreateStreamRequest): Promise<{ success: true; message: string; stream: { id: string; chatId: string; createdAt: string } }> {
    return this.completions.createStream(caller, chatId, parseInput(CreateStreamRequest, input));
  }

  /**
   * `GET /api/chats/{chatId}/streams/{streamId}`: the stream's records (chunks, or the failure
   * that ended it) after `lastEventId` (0: from the start), then live ones until it ends.
   */
  readStream(caller: Caller, chatId: string, streamId: string, lastEventId: string | undefined, signal?: AbortSignal): Promise<AsyncIterable<StreamEvent<StreamRecord>>> {
    return this.completions.readStream(caller, chatId, streamId, lastEventId, signal);
  }

  // ---- knowledge ------------------------------------------------------------------------

  /**
   * `POST /api/knowledge/documents`: stores the document and indexes it in the background;
   * answers `completed` (or `failed`) when that finished within the wait, else `processing`.
   */
  async createDocument(caller: Caller, input: CreateDocumentRequest): Promise<CreateDocumentResponse> {
    return this.knowledge.createDocument(caller, parseInput(CreateDocumentRequest, input));
  }

  /**
   * `POST /api/knowledge/documents/stream`: the indexing events of a new document, ending with
   * `complete` or `error`. Invalid input and unknown projects throw before the first event.
   */
  async createDocumentStream(caller: Caller, input: CreateDocumentRequest): Promise<AsyncIterable<IndexingEvent>> {
    return this.knowledge.createDocumentStream(caller, parseInput(CreateDocumentRequest, input));
  }

  /**
   * `POST /api/knowledge/upload`: stores each file and indexes it as a document. A file of an
   * unsupported type fails alone (no document); the others still index. Waits for indexing
   * like `createDocument`, for all files together, unless `wait` is false (the `?wait=false` of
   * the route): then it answers once the files are stored, and `documentEvents` follows each.
   */
  async uploadFiles(caller: Caller, input: UploadRequest, options: { wait?: boolean } = {}): Promise<UploadResponse> {
    return this.knowledge.upload(caller, parseInput(UploadRequest, input), options);
  }

  /** `GET /api/knowledge/documents`: a project's documents, newest first. */
  async listDocuments(caller: Caller, query: ListDocumentsQuery): Promise<ListDocumentsResponse> {
    return this.knowledge.listDocuments(caller, parseInput(ListDocumentsQuery, query));
  }

  /** `GET /api/knowledge/documents/{id}`. */
  getDocument(caller: Caller, id: string): Promise<DocumentResponse> {
    return this.knowledge.getDocument(caller, id);
  }

  /**
   * `GET /api/knowledge/documents/{id}/events`: a document's indexing from now on, as the stream
   * route reports it (progress 10 to 90, then `complete` or `error`); a document whose indexing
   * has ended answers its final event alone.
   */
  documentEvents(caller: Caller, id: string, signal?: AbortSignal): Promise<AsyncIterable<IndexingEvent>> {
    return this.knowledge.documentEvents(caller, id, signal);
  }

  /** `GET /api/knowledge/chunks/{id}`: one chunk of the caller's knowledge, with its text (what a citation points at). */
  getChunk(caller: Caller, id: string): Promise<ChunkResponse> {
    return this.knowledge.getChunk(caller, id);
  }

  /** `GET /api/knowledge/documents/{id}/chunks`: a page of one of the caller's documents' chunks in document order. */
  async listDocumentChunks(caller: Caller, id: string, query: ListChunksQuery = {}): Promise<ListChunksResponse> {
    return this.knowledge.listChunks(caller, id, parseInput(ListChunksQuery, query));
  }

  /** `DELETE /api/knowledge/documents/{id}`: the document, its chunks and vectors (also mid-indexing). */
  deleteDocument(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.knowledge.deleteDocument(caller, id);
  }

  /** `POST /api/knowledge/search`. */
  async searchKnowledge(caller: Caller, input: SearchRequest): Promise<SearchResponse> {
    return this.knowledge.search(caller, parseInput(SearchRequest, input));
  }

  /**
   * Searches a project's knowledge base: the same call as {@link searchKnowledge} (named after
   * its route), under the name library users look for first.
   */
  search(caller: Caller, input: SearchRequest): Promise<SearchResponse> {
    return this.searchKnowledge(caller, input);
  }

  /** Vectors stored for a project under its current embedding model (for checks and operators). */
  countVectors(caller: Caller, projectId: string): Promise<number> {
    return this.knowledge.countVectors(caller, projectId);
  }

  /**
   * `POST /api/knowledge/reindex`: indexes the project's documents (or those named) again from
   * their stored sources with the project's current settings, through the job queue.
   */
  async reindexKnowledge(caller: Caller, input: ReindexRequest): Promise<ReindexResponse> {
    return this.knowledge.reindex(caller, parseInput(ReindexRequest, input));
  }

  /** `GET /api/knowledge/settings?projectId=`: every RAG setting's value in effect, secrets redacted, and which are defaults. */
  async getKnowledgeSettings(caller: Caller, query: GetSettingsQuery): Promise<KnowledgeSettingsResponse> {
    return this.knowledge.getSettings(caller, parseInput(GetSettingsQuery, query));
  }

  /**
   * `PUT /api/knowledge/settings`: changes the members given (null takes one back to its
   * default); a new embedding model or vector store re-indexes the project.
   */
  async putKnowledgeSettings(caller: Caller, input: PutSettingsRequest): Promise<PutSettingsResponse> {
    return this.knowledge.updateSettings(caller, parseInput(PutSettingsRequest, input));
  }
}
