import type { ApprovalOptions } from './approvals/service.js';
import type { AuditOptions } from './audit/service.js';
import type { Clock } from './clock.js';
import type { AgentOptions } from './completions/options.js';
import type { StreamHubOptions } from './completions/streams/hub.js';
import type { StreamStore } from './completions/streams/stream-store.js';
import type { IdGenerator } from './ids.js';
import type { KnowledgeAdapters } from './knowledge/options.js';
import type { LocalModelRuntime } from './local-models/runtime.js';
import type { McpOptions } from './mcp/types.js';
import type { GuardedFetch } from './net/guarded-fetch.js';
import type { OutboundPolicyOptions } from './net/policy.js';
import type { ByteLimit } from './net/upstream-limits.js';
import type { Notifier } from './notify/notifier.js';
import type { SecretBox } from './security/secrets.js';
import type { StorageAdapter } from './storage/types.js';
import type { ToolsOptions } from './tools/project-tools.js';
import type { UserCapName, UserCaps } from './user-caps.js';

/** What `new AgentPlatform(options)` is built from: storage, and the adapters of each area it should serve. */
export interface AgentPlatformOptions {
  readonly storage: StorageAdapter;
  /** The knowledge base's vector store and embedder. Without them, knowledge calls answer `unsupported`. */
  readonly knowledge?: KnowledgeAdapters;
  /** Tool sandboxes by language. Without them, tool calls answer `unsupported`. */
  readonly tools?: ToolsOptions;
  /** Chat models and agent settings. Without them, chat completions answer `unsupported`. */
  readonly agent?: AgentOptions;
  /**
   * Tool calls a person approves and MCP servers' questions: how long an approval waits before
   * it counts as denied (`ttlMs`, default 24 h) and a question before it is declined
   * (`questionTimeoutMs`, default 10 min); how long a dead continuation's claim of a paused turn
   * holds (`resumeLeaseMs`, default 60 s).
   */
  readonly approvals?: ApprovalOptions;
  /**
   * The audit log's retention: events older than `retentionDays` (default 365; 0 keeps them
   * forever) are deleted every `purgeIntervalMs` (default 1 hour) by each instance, from `start()`.
   */
  readonly audit?: AuditOptions;
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
