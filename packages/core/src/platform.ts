import { agentMcpMethods } from './agent-mcp/methods.js';
import { AgentMcpService } from './agent-mcp/service.js';
import { approvalsMethods } from './approvals/methods.js';
import { ApprovalsService } from './approvals/service.js';
import { auditMethods } from './audit/methods.js';
import { AuditService } from './audit/service.js';
import { authMethods } from './auth/methods.js';
import { AuthService } from './auth/service.js';
import { ChatImages } from './chats/images.js';
import { chatsMethods } from './chats/methods.js';
import { ChatsService } from './chats/service.js';
import { type Clock, systemClock } from './clock.js';
import { completionsMethods } from './completions/methods.js';
import { CompletionsService } from './completions/service.js';
import { memoryStreamStore, type StreamStore } from './completions/streams/stream-store.js';
import type { PlatformContext } from './context.js';
import type { DefaultBaseUrl } from './credentials/choose.js';
import { credentialsMethods } from './credentials/methods.js';
import { CredentialsService } from './credentials/service.js';
import { createIdGenerator, type IdGenerator } from './ids.js';
import { knowledgeMethods } from './knowledge/methods.js';
import { KnowledgeService } from './knowledge/service.js';
import { localModelsMethods } from './local-models/methods.js';
import { LocalModelsService } from './local-models/service.js';
import { mcpMethods } from './mcp/methods.js';
import { McpService } from './mcp/service.js';
import { MCP_TOOL_PREFIX, mcpToolSource } from './mcp/tool-source.js';
import type { McpOptions } from './mcp/types.js';
import { inMemoryBlobs } from './memory-blobs.js';
import { installMethods } from './methods.js';
import { createGuardedFetch, type GuardedFetch } from './net/guarded-fetch.js';
import { createOutboundPolicy } from './net/policy.js';
import { createMemoryNotifier, type Notifier } from './notify/notifier.js';
import type { AgentPlatformOptions } from './platform-options.js';
import { projectsMethods } from './projects/methods.js';
import { ProjectsService } from './projects/service.js';
import { responsesMethods } from './responses/methods.js';
import { ResponsesService } from './responses/service.js';
import type { SecretBox } from './security/secrets.js';
import type { StorageAdapter } from './storage/types.js';
import { toolsMethods } from './tools/methods.js';
import { ToolRunner } from './tools/project-tools.js';
import { SchemaValidator } from './tools/schema-validator.js';
import { ToolsService } from './tools/service.js';
import { UserCapGuard } from './user-caps.js';

type PublicMethods = typeof authMethods &
  typeof auditMethods &
  typeof approvalsMethods &
  typeof projectsMethods &
  typeof chatsMethods &
  typeof credentialsMethods &
  typeof toolsMethods &
  typeof mcpMethods &
  typeof localModelsMethods &
  typeof completionsMethods &
  typeof knowledgeMethods &
  typeof agentMcpMethods &
  typeof responsesMethods;

/** The areas' methods, which `installMethods` (below) puts on the class's prototype. */
export interface AgentPlatform extends PublicMethods {}

/**
 * The engine. One method per API endpoint; each takes the caller and the request as the
 * client sent it (validated here), and answers the response body of the endpoint. The work is
 * done by one service per area (`auth`, `projects`, `chats`, ...), which take parsed input; the
 * methods are declared by the areas (`<area>/methods.ts`) and installed below. Those that parse
 * are `async`, so refused input rejects the promise rather than throwing.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface above names the methods installMethods puts on the prototype
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
  /** Checks completions' answers against their `response_format` schema. */
  readonly #answers = new SchemaValidator();
  /** What every area service is built from. */
  readonly #ctx: PlatformContext;
  /** Chat completions, the models list and resumable chat streams. */
  readonly completions: CompletionsService;
  /** The Open Responses API, on the completions' agent runs. */
  readonly responses: ResponsesService;
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
  /** What each project's MCP server offers its owner's MCP clients (the agent, its knowledge, opted-in tools). */
  readonly agentMcp: AgentMcpService;
  /** Tool calls a person approves, and MCP servers' questions to the person. */
  readonly approvals: ApprovalsService;
  /** The audit log: who changed what, when and from where. */
  readonly audit: AuditService;

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
    this.audit = new AuditService(this.#ctx, options.audit);
    this.localModels = new LocalModelsService(this.#ctx, {
      ...(options.localModels ? { runtime: options.localModels } : {}),
      ...(options.localModelAnswerLimit ? { answerLimit: options.localModelAnswerLimit } : {}),
      ...(options.localModelUrl ? { defaultBaseUrl: options.localModelUrl } : {}),
      ...(options.operatorFetch ? { operatorFetch: options.operatorFetch } : {}),
    });
    // Chat images go where knowledge files go (the data folder's files, or the database's blobs).
    this.chats = new ChatsService(this.#ctx, { images: new ChatImages(options.knowledge?.blobs ?? inMemoryBlobs()) });
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
    // What deleting a project drops outside its rows: the knowledge's blobs and vectors, the connections to its MCP servers, its chats' images.
    this.projects = new ProjectsService(this.#ctx, { credentials: this.credentials, cleanups: [this.knowledge, this.mcp, this.chats] });
    this.approvals = new ApprovalsService(this.#ctx, {
      options: options.approvals,
      continueRun: (caller, approval, run) => this.completions.continueRun(caller, approval, run),
      waitingCalls: (caller, chatId) => this.completions.waitingCalls(caller, chatId),
    });
    this.completions = new CompletionsService(this.#ctx, {
      agent: options.agent,
      streams: this.#streams,
      chats: this.chats,
      credentials: this.credentials,
      knowledge: this.knowledge.retriever,
      tools: [...(this.#tools ? [this.#tools.source(this.storage)] : []), ...(this.#mcp ? [mcpToolSource(this.storage, this.#secrets, this.#mcp)] : []), ...(options.agent?.toolSources ?? [])],
      images: this.chats,
      answers: this.#answers,
      approvals: this.approvals,
    });
    this.agentMcp = new AgentMcpService(this.#ctx, { completions: this.completions, knowledge: this.knowledge, tools: this.tools });
    this.responses = new ResponsesService(this.#ctx, {
      planner: this.completions.planner,
      chats: this.chats,
      approvals: this.approvals,
      streams: this.#streams,
      files: this.knowledge.files,
    });
  }

  /** Resumes background work left by an earlier run (unfinished indexing jobs). Call once after constructing. */
  async start(): Promise<void> {
    await this.knowledge.start();
    this.audit.start();
  }

  /** `await using platform = new AgentPlatform(...)`: closes the platform when the scope ends (`close()`). */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Stops background work and closes the adapters (storage last). Idempotent. */
  async close(): Promise<void> {
    this.audit.close();
    await this.responses.close();
    this.agentMcp.close();
    await this.knowledge.close();
    await this.#tools?.close();
    await this.#answers.close();
    await this.mcp.close();
    await this.fetch.close();
    await this.#streams.close?.();
    await this.#notifier.close();
    await this.storage.close();
  }
}

installMethods(
  AgentPlatform,
  authMethods,
  auditMethods,
  approvalsMethods,
  projectsMethods,
  chatsMethods,
  credentialsMethods,
  toolsMethods,
  mcpMethods,
  localModelsMethods,
  completionsMethods,
  responsesMethods,
  knowledgeMethods,
  agentMcpMethods,
);
