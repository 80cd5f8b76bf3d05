import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DatabaseStorage } from '@agent-platform/adapters-storage/postgres';
import { sqliteStorage } from '@agent-platform/adapters-storage/sqlite';
import {
  AgentPlatform,
  type ApprovalOptions,
  type AuditOptions,
  createSecretBox,
  DEFAULT_TOOL_QUEUE,
  type DocumentLimits,
  defaultLocalModelBaseUrl,
  type Notifier,
  type OutboundPolicyOptions,
  type StreamStore,
  storageStreamStore,
  type ToolSource,
  type UpstreamLimits,
  type UserCaps,
} from '@agent-platform/core';
import { createMcpConnector, type StdioPermission } from '@agent-platform/mcp';
import { javascriptSandbox, npmDependencies, type PythonIsolation, pythonSandbox } from '@agent-platform/sandbox';
import { serve } from 'h3';
import pino, { type Logger } from 'pino';
import { serverAgentOptions } from './agent-options.js';
import { createApp } from './app.js';
import { approvalsFrom } from './approval-flags.js';
import { auditFrom } from './audit-flags.js';
import { DEFAULT_BODY_LIMIT } from './body.js';
import { builtConsoleDir } from './console.js';
import { checkDeployment, configUrls, DEFAULT_DATABASE_POOL, instanceIdOf, resolveDeployment, type SharedVectorStore } from './deployment.js';
import { openKnowledge, type SharedKnowledge, vectorStoreFactory } from './knowledge.js';
import { heartbeatOf, type Leases } from './lease-flags.js';
import { stdioFromEnv } from './mcp-commands.js';
import { outboundFetches } from './outbound.js';
import { parsePythonIsolation } from './python-isolation.js';
import { loadSecretBox } from './secrets.js';
import { serverUpstreamLimits, upstreamLimitsFrom } from './upstream-limit-flags.js';
import { completionBodyLimit, type EnvKeyLimits, type ImageSizes, serverImageLimits, USER_CAP_HINTS, userCapsFrom } from './user-limits.js';

export interface ServerOptions {
  /** Port to listen on; 0 picks a free one. Default 3000. */
  readonly port?: number;
  /** Address to bind. Default 127.0.0.1 (this machine only). */
  readonly host?: string;
  /** Folder of the SQLite database and other state. Default ./data. */
  readonly dataDir?: string;
  readonly corsOrigins?: readonly string[];
  readonly bodyLimit?: number;
  readonly uploadLimit?: number;
  /** `provider:model` for completions that name no model. Default AGENT_PLATFORM_DEFAULT_MODEL or `openai:gpt-4o-mini`. */
  readonly defaultModel?: string;
  /** Model calls per agent turn at most. Default 8. */
  readonly maxSteps?: number;
  /** Environment for provider fallbacks and the master key. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Extra tool sources of agents (project tools and MCP servers plug in here). */
  readonly toolSources?: readonly ToolSource[];
  /** Hosts (and host:port) caller-supplied URLs may reach besides public addresses (`--allow-host`: loopback and private ones only so), or only them. */
  readonly outbound?: OutboundPolicyOptions;
  /**
   * Whether `hf:` embedding models not yet in the data folder's model cache may be downloaded
   * from the Hugging Face hub (`--allow-model-downloads`). Default AGENT_PLATFORM_ALLOW_MODEL_DOWNLOADS
   * (`true`/`1`/`yes`), else false.
   */
  readonly allowModelDownloads?: boolean;
  /** How tool code is sandboxed and where its dependencies come from. */
  readonly tools?: ToolsConfig;
  /** Which MCP stdio servers may be started. */
  readonly mcp?: McpConfig;
  /** Limits on parsing and chunking each document (`--document-timeout`, `--max-document-pages`, ...). Defaults: `DEFAULT_DOCUMENT_LIMITS`. */
  readonly documentLimits?: DocumentLimits;
  /**
   * Bounds on what model servers, MCP servers, the local runtime, vector stores and embedding
   * servers send back (`--max-model-answer`, `--max-message`, ...). Default: the flags' env
   * variables, else `DEFAULT_UPSTREAM_LIMITS`.
   */
  readonly upstreamLimits?: UpstreamLimits;
  /**
   * Documents one user may have waiting or being indexed (`--max-queued-documents-per-user`);
   * one more document, upload or re-index answers 429. Default
   * AGENT_PLATFORM_MAX_QUEUED_DOCUMENTS_PER_USER or 1,000.
   */
  readonly maxQueuedDocumentsPerUser?: number;
  /** Default: pino JSON lines on stdout at `info`. */
  readonly logger?: Logger;
  /**
   * `postgres://...`: storage, blobs and the job queue in this PostgreSQL database, shared by any
   * number of instances (`--database`). Default AGENT_PLATFORM_DATABASE_URL, else SQLite in the
   * data folder. Requires AGENT_PLATFORM_SECRET and `vectorStore`.
   */
  readonly database?: string;
  /** Most storage connections of this instance to `database` (default 10; env AGENT_PLATFORM_DATABASE_POOL). */
  readonly databasePool?: number;
  /**
   * The vector store of projects that name none, instead of the built-in one under the data
   * folder (`--vector-store`, `--vector-store-config`). Default from AGENT_PLATFORM_VECTOR_STORE
   * and AGENT_PLATFORM_VECTOR_STORE_CONFIG.
   */
  readonly vectorStore?: SharedVectorStore;
  /** Leases of indexing jobs and chat stream writers, and the job poll interval (`--job-lease-ms`, ...). Defaults: `Leases`. */
  readonly leases?: Leases;
  /**
   * The most keys, projects, credentials, chats, tools, MCP servers, documents and chat messages
   * of one user (`--max-projects-per-user`, ...). Missing ones: from AGENT_PLATFORM_MAX_*_PER_USER,
   * else `DEFAULT_USER_CAPS`.
   */
  readonly userCaps?: Partial<UserCaps>;
  /** How long tool calls wait for approval and MCP servers' questions for an answer (`--approval-ttl-ms`, `--elicitation-timeout-ms`). Default from their env variables, else core's defaults. */
  readonly approvals?: ApprovalOptions;
  /** How long the audit log keeps its events (`--audit-retention-days`; 0 keeps them forever). Default from AGENT_PLATFORM_AUDIT_RETENTION_DAYS, else 365 days, purged hourly by each instance. */
  readonly audit?: AuditOptions;
  /** Token budget of a model call's messages with a chat's history (`--history-tokens`). Default AGENT_PLATFORM_HISTORY_TOKENS or `DEFAULT_HISTORY_TOKENS`. */
  readonly historyTokens?: number;
  /**
   * What `openai` calls on the server's own key (no credential of the user's) may ask
   * (`--env-key-max-tokens`, `--env-key-model`). Default from AGENT_PLATFORM_ENV_KEY_MAX_TOKENS
   * (else 4096) and AGENT_PLATFORM_ENV_KEY_MODELS (else any model).
   */
  readonly envKey?: EnvKeyLimits;
  /** Bytes of one image and of one request's images (`--max-image-bytes`, ...). Default from their env variables, else `DEFAULT_IMAGE_LIMITS`. */
  readonly images?: ImageSizes;
  /**
   * Serve the web console at /console/ (and redirect `/` there): true by default; false
   * (`--no-console`, AGENT_PLATFORM_NO_CONSOLE) for an API-only server. Without a built console
   * (`pnpm run build` builds it) the server starts without it and logs a warning.
   */
  readonly console?: boolean;
  /** How long a streamed chat completion waits for the run's first event before sending its headers (`AppOptions.streamHoldMs`). Default 5000 ms. */
  readonly streamHoldMs?: number;
}

export interface RunningServer {
  /** e.g. `http://127.0.0.1:3000` */
  readonly url: string;
  readonly platform: AgentPlatform;
  /** Where the web console is (`<url>/console/`), or undefined when it is off or not built. */
  readonly consoleUrl: string | undefined;
  /** A key created because the data folder had none (print it once), else undefined. */
  readonly firstKey: string | undefined;
  /** The new user `firstKey` belongs to, when one was created. */
  readonly firstKeyUserId: string | undefined;
  /** Stops accepting connections, lets in-flight requests finish (up to `graceMs`), closes the database. */
  close(graceMs?: number): Promise<void>;
}

export interface ToolsConfig {
  /** Confinement of the Python sandbox (`--python-isolation`). Default AGENT_PLATFORM_PYTHON_ISOLATION or `auto`. */
  readonly pythonIsolation?: PythonIsolation;
  /** Folders of extra Python wheels tools may declare (`--python-packages`). Default AGENT_PLATFORM_PYTHON_PACKAGES (comma-separated). */
  readonly pythonPackageDirs?: readonly string[];
  /** Registry of JavaScript tools' npm dependencies (`--npm-registry`). Default AGENT_PLATFORM_NPM_REGISTRY or https://registry.npmjs.org/. */
  readonly npmRegistry?: string;
  /**
   * Tool runs waiting for a sandbox per user (`--tool-queue-per-user`) and in all (`--tool-queue`),
   * per language; one more answers 429. Default AGENT_PLATFORM_TOOL_QUEUE_PER_USER or 64, and
   * AGENT_PLATFORM_TOOL_QUEUE or 1024.
   */
  readonly queue?: { readonly maxPerOwner?: number; readonly maxTotal?: number };
}

/** A positive integer from the environment, or undefined when unset or not one. */
const envInteger = (value: string | undefined): number | undefined => (value && /^\d+$/.test(value) && Number(value) > 0 ? Number(value) : undefined);

export interface McpConfig {
  /**
   * stdio MCP servers start local programs: refused (false, the default), any program with any
   * arguments (`--allow-stdio-mcp`: anything can run on this machine), or only these command
   * lines (`--allow-mcp-command`, `--mcp-commands FILE`): a caller's command and args must equal
   * an entry's exactly, and it may set only the env keys the entry names. Default from
   * AGENT_PLATFORM_MCP_COMMANDS (a JSON array of entries), AGENT_PLATFORM_MCP_COMMANDS_FILE and
   * AGENT_PLATFORM_ALLOW_STDIO_MCP (`true`/`1`).
   */
  readonly allowStdio?: StdioPermission;
}

/** The items of a comma-separated env value, trimmed, empty ones left out. */
const commaList = (value: string | undefined): string[] =>
  value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean) ?? [];

/** The SQLite file inside a data folder. */
export const databasePath = (dataDir: string) => join(resolve(dataDir), 'agent-platform.db');

/**
 * Opens (creating when needed) the platform stored in `dataDir`: SQLite storage, and with
 * `knowledge` (everything a serving platform needs) the built-in vector store, embedder, file
 * store and the tool sandboxes. With `database` (or AGENT_PLATFORM_DATABASE_URL) storage and
 * blobs are in that PostgreSQL database instead, the master key is AGENT_PLATFORM_SECRET and
 * serving needs a shared `vectorStore` (refused otherwise, see `checkDeployment`). Call
 * `start()` to resume unfinished indexing.
 */
export async function openPlatform(
  dataDir: string,
  options: Omit<ServerOptions, 'port' | 'host' | 'dataDir' | 'corsOrigins' | 'bodyLimit' | 'uploadLimit' | 'console'> & { knowledge?: boolean } = {},
): Promise<AgentPlatform> {
  const env = options.env ?? process.env;
  // Checked before anything is opened or created: a refused start leaves nothing behind.
  const deployment = resolveDeployment({ database: options.database, databasePool: options.databasePool, vectorStore: options.vectorStore }, env);
  checkDeployment(deployment, env, options.knowledge === true);
  // The environment's values, under what the options give (the CLI's flags).
  const userCaps = { ...userCapsFrom({}, env), ...options.userCaps };
  await mkdir(resolve(dataDir), { recursive: true });
  const shared = deployment.database ? await openSharedStorage(deployment.database, deployment.databasePool) : undefined;
  const storage = shared ?? (await sqliteStorage({ path: databasePath(dataDir) }));
  // PostgreSQL mode: the key every instance was given (checkDeployment made sure there is one).
  const secrets = shared ? createSecretBox(env.AGENT_PLATFORM_SECRET as string) : await loadSecretBox(dataDir, env);
  const allowModelDownloads = options.allowModelDownloads ?? /^(1|true|yes)$/i.test(env.AGENT_PLATFORM_ALLOW_MODEL_DOWNLOADS ?? '');
  // Every connection goes through one guarded fetch: callers' URLs by the operator's policy
  // alone, the operator's own URLs (environment, the default local model runtime, the shared
  // vector store) by it with the operator's hosts allowed.
  const fetches = outboundFetches(options.outbound ?? {}, env, {
    modelDownloads: allowModelDownloads,
    operatorUrls: deployment.vectorStore ? configUrls(deployment.vectorStore.config) : [],
  });
  const guarded = fetches.callers;
  // What every upstream may send back, each bound naming its flag (its env variable, else its default).
  const limits = serverUpstreamLimits(options.upstreamLimits ?? upstreamLimitsFrom({}, env));
  const agent = serverAgentOptions(env, fetches, limits, options);
  const common = {
    storage,
    secrets,
    agent,
    fetch: guarded,
    operatorFetch: fetches.operator,
    localModelUrl: defaultLocalModelBaseUrl(env),
    localModelAnswerLimit: limits.runtimeAnswerBytes,
    userCaps,
    userCapHints: USER_CAP_HINTS,
    approvals: { ...approvalsFrom({}, env), ...options.approvals },
    audit: { ...auditFrom({}, env), ...options.audit },
  };
  if (!options.knowledge) return new AgentPlatform(common);
  // Tool state under the data folder: npm installs and bundles, the Python interpreter snapshot.
  const python = pythonSandbox({
    isolation: options.tools?.pythonIsolation ?? parsePythonIsolation(env.AGENT_PLATFORM_PYTHON_ISOLATION || 'auto'),
    packageDirs: options.tools?.pythonPackageDirs ?? commaList(env.AGENT_PLATFORM_PYTHON_PACKAGES),
    snapshotDir: join(resolve(dataDir), 'tools', 'python'),
  });
  const npm = npmDependencies({
    cacheDir: join(resolve(dataDir), 'tools', 'npm'),
    label: 'tools/npm',
    registry: options.tools?.npmRegistry ?? (env.AGENT_PLATFORM_NPM_REGISTRY || 'https://registry.npmjs.org/'),
  });
  const confinement = await python.isolation();
  if ('refused' in confinement) options.logger?.warn(`Python tools: ${confinement.refused}`);
  else options.logger?.info(`Python tools: Pyodide in processes confined by ${confinement.description}`);
  const mcpTimeout = Number(env.AGENT_PLATFORM_MCP_TIMEOUT_MS);
  const connector = createMcpConnector({
    fetch: guarded,
    allowStdio: options.mcp?.allowStdio ?? stdioFromEnv(env),
    messageLimit: limits.mcpMessageBytes,
    toolResultLimit: limits.mcpToolResultBytes,
    ...(mcpTimeout > 0 ? { callTimeoutMs: mcpTimeout } : {}),
  });
  const vectorStore = deployment.vectorStore;
  const knowledgeShared: SharedKnowledge = {
    // Made (and its config checked) now, so a wrong config stops the start naming the problem.
    ...(vectorStore ? { vectors: await vectorStoreFactory(limits.vectorAnswerBytes)(vectorStore.provider, vectorStore.config, { fetch: fetches.operator }) } : {}),
    ...(shared ? { blobs: shared.blobs, instanceId: instanceIdOf(deployment, resolve(dataDir)) } : {}),
  };
  // PostgreSQL mode: indexing events, cancels, MCP deletions and chat streams cross instances.
  const crossing = shared ? await openSharedMessaging(deployment.database as string, shared, options.leases?.streamLeaseMs) : {};
  const { jobLeaseMs, jobPollMs } = options.leases ?? {};
  const maxQueued = options.maxQueuedDocumentsPerUser ?? envInteger(env.AGENT_PLATFORM_MAX_QUEUED_DOCUMENTS_PER_USER);
  return new AgentPlatform({
    ...common,
    ...crossing,
    mcp: { connector },
    knowledge: {
      ...(await openKnowledge(dataDir, {
        env,
        fetch: fetches.operator,
        allowDownloads: allowModelDownloads,
        shared: knowledgeShared,
        upstreamLimits: limits,
        ...(options.documentLimits ? { limits: options.documentLimits } : {}),
      })),
      ...(jobLeaseMs ? { leaseMs: jobLeaseMs, heartbeatMs: heartbeatOf(jobLeaseMs) } : {}),
      ...(jobPollMs ? { pollMs: jobPollMs } : {}),
      ...(maxQueued ? { maxQueuedDocuments: maxQueued } : {}),
    },
    tools: {
      sandboxes: { javascript: javascriptSandbox({ dependencies: npm }), python },
      ...(envInteger(env.AGENT_PLATFORM_TOOL_TIMEOUT_MS) ? { timeoutMs: envInteger(env.AGENT_PLATFORM_TOOL_TIMEOUT_MS) as number } : {}),
      queue: {
        maxPerOwner: options.tools?.queue?.maxPerOwner ?? envInteger(env.AGENT_PLATFORM_TOOL_QUEUE_PER_USER) ?? DEFAULT_TOOL_QUEUE.maxPerOwner,
        maxTotal: options.tools?.queue?.maxTotal ?? envInteger(env.AGENT_PLATFORM_TOOL_QUEUE) ?? DEFAULT_TOOL_QUEUE.maxTotal,
      },
      ...(envInteger(env.AGENT_PLATFORM_TOOL_VALIDATION_TIMEOUT_MS) ? { validation: { timeoutMs: envInteger(env.AGENT_PLATFORM_TOOL_VALIDATION_TIMEOUT_MS) as number } } : {}),
    },
  });
}

/** Opens PostgreSQL storage, loading its adapter (and pg) only in this mode. */
async function openSharedStorage(connectionString: string, maxConnections = DEFAULT_DATABASE_POOL): Promise<DatabaseStorage> {
  const { postgresStorage } = await import('@agent-platform/adapters-storage/postgres');
  return postgresStorage({ connectionString, maxConnections });
}

/** The notifier (LISTEN/NOTIFY) and the database-backed stream store every instance shares. */
async function openSharedMessaging(connectionString: string, storage: DatabaseStorage, streamLeaseMs: number | undefined): Promise<{ notifier: Notifier; streamStore: StreamStore }> {
  const { postgresNotifier } = await import('@agent-platform/adapters-storage/postgres');
  if (!storage.streams) throw new Error('PostgreSQL storage without its stream repository');
  const notifier = await postgresNotifier({ connectionString });
  const lease = streamLeaseMs ? { writerLeaseMs: streamLeaseMs, heartbeatMs: heartbeatOf(streamLeaseMs) } : {};
  return { notifier, streamStore: storageStreamStore({ streams: storage.streams, notifier, ...lease }) };
}

/** Starts the headless server: the embedded defaults (SQLite under the data folder), or PostgreSQL with `database`. */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'info' });
  const platform = await openPlatform(options.dataDir ?? './data', {
    knowledge: true,
    ...(options.defaultModel ? { defaultModel: options.defaultModel } : {}),
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.env ? { env: options.env } : {}),
    ...(options.toolSources ? { toolSources: options.toolSources } : {}),
    ...(options.outbound ? { outbound: options.outbound } : {}),
    ...(options.allowModelDownloads !== undefined ? { allowModelDownloads: options.allowModelDownloads } : {}),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.documentLimits ? { documentLimits: options.documentLimits } : {}),
    ...(options.upstreamLimits ? { upstreamLimits: options.upstreamLimits } : {}),
    ...(options.maxQueuedDocumentsPerUser ? { maxQueuedDocumentsPerUser: options.maxQueuedDocumentsPerUser } : {}),
    ...(options.database ? { database: options.database } : {}),
    ...(options.databasePool ? { databasePool: options.databasePool } : {}),
    ...(options.vectorStore ? { vectorStore: options.vectorStore } : {}),
    ...(options.leases ? { leases: options.leases } : {}),
    ...(options.userCaps ? { userCaps: options.userCaps } : {}),
    ...(options.historyTokens !== undefined ? { historyTokens: options.historyTokens } : {}),
    ...(options.approvals ? { approvals: options.approvals } : {}),
    ...(options.audit ? { audit: options.audit } : {}),
    ...(options.envKey ? { envKey: options.envKey } : {}),
    ...(options.images ? { images: options.images } : {}),
    logger,
  });
  await platform.start();
  const consoleDir = options.console === false ? undefined : builtConsoleDir();
  if (options.console !== false && !consoleDir) logger.warn('The web console is not built (pnpm run build builds it): serving the API only');
  const app = createApp(platform, {
    logger,
    ...(consoleDir ? { consoleDir } : {}),
    ...(options.corsOrigins ? { corsOrigins: options.corsOrigins } : {}),
    ...(options.bodyLimit ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.uploadLimit ? { uploadLimit: options.uploadLimit } : {}),
    ...(options.streamHoldMs !== undefined ? { streamHoldMs: options.streamHoldMs } : {}),
    completionBodyLimit: completionBodyLimit(options.bodyLimit ?? DEFAULT_BODY_LIMIT, serverImageLimits(options.images, options.env ?? process.env)),
  });
  const server = serve(app, {
    port: options.port ?? 3000,
    hostname: options.host ?? '127.0.0.1',
    silent: true,
    gracefulShutdown: false,
  });
  try {
    await server.ready();
  } catch (error) {
    await platform.close();
    throw error;
  }
  // Made once the server listens: a start that fails (a busy port) must not make a key that
  // nobody is shown. Atomic across instances starting together on one database: one makes it.
  let first: Awaited<ReturnType<AgentPlatform['createFirstKey']>>;
  try {
    first = await platform.createFirstKey({ name: 'first key' });
  } catch (error) {
    await server.close(true);
    await platform.close();
    throw error;
  }
  const address = server.node?.server?.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 3000);
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    platform,
    consoleUrl: consoleDir ? `${url}/console/` : undefined,
    firstKey: first?.key,
    firstKeyUserId: first?.userId,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        const force = setTimeout(() => void server.close(true), graceMs);
        try {
          await server.close();
        } finally {
          clearTimeout(force);
          await platform.close();
        }
      })();
      return closing;
    },
  };
}
