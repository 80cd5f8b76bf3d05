import { hostname } from 'node:os';
import type { VectorStoreProvider } from '@agent-platform/core';
import { randomString, SHARED_VECTOR_STORE_IDS } from '@agent-platform/core/internal';
import { UsageError } from './cli-usage.js';

/** The providers a server-wide vector store may be (`--vector-store`): the stores of core's registry that are servers every instance reaches (`shared`). */
export const SHARED_VECTOR_STORES: readonly VectorStoreProvider[] = SHARED_VECTOR_STORE_IDS;

/** The vector store of projects that name none (`--vector-store`, `--vector-store-config`). */
export interface SharedVectorStore {
  readonly provider: VectorStoreProvider;
  /** The same keys as a project's `vectorStoreConfig` of that provider. */
  readonly config: Record<string, unknown>;
}

/** Where a server keeps what its instances share: the database and the default vector store. */
export interface Deployment {
  /** `postgres://...` (`--database`, AGENT_PLATFORM_DATABASE_URL); undefined: SQLite under the data folder. */
  readonly database?: string | undefined;
  /**
   * Most connections of this instance's storage pool to `database` (`--database-pool`,
   * AGENT_PLATFORM_DATABASE_POOL; default 10, pg's). The notifier holds two more of its own.
   */
  readonly databasePool?: number | undefined;
  readonly vectorStore?: SharedVectorStore | undefined;
}

/** The storage pool size when none is given: pg's own default. */
export const DEFAULT_DATABASE_POOL = 10;

/**
 * The vector store named by `--vector-store` and `--vector-store-config` (or their env
 * variables), or undefined when no provider is named. A config without a provider, an unknown
 * provider or a config that is not a JSON object is a `UsageError` naming it; the config's keys
 * are checked by the provider's own parser when the store is made.
 */
export function parseSharedVectorStore(provider: string | undefined, config: string | undefined): SharedVectorStore | undefined {
  if (!provider) {
    if (config) throw new UsageError('--vector-store-config needs --vector-store (AGENT_PLATFORM_VECTOR_STORE) naming the provider');
    return undefined;
  }
  const found = SHARED_VECTOR_STORES.find((p) => p === provider);
  if (!found) throw new UsageError(`--vector-store must be one of ${SHARED_VECTOR_STORES.join(', ')}, got "${provider}"`);
  let parsed: unknown = {};
  try {
    if (config) parsed = JSON.parse(config);
  } catch (error) {
    throw new UsageError(`--vector-store-config must be a JSON object: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--vector-store-config must be a JSON object');
  return { provider: found, config: parsed as Record<string, unknown> };
}

/**
 * The deployment from explicit options, else the environment (AGENT_PLATFORM_DATABASE_URL,
 * AGENT_PLATFORM_DATABASE_POOL, AGENT_PLATFORM_VECTOR_STORE, AGENT_PLATFORM_VECTOR_STORE_CONFIG).
 * A database URL must be a `postgres://` or `postgresql://` URL; a pool size an integer from 1
 * to 1000 (a `UsageError` naming the flag otherwise).
 */
export function resolveDeployment(options: Deployment, env: NodeJS.ProcessEnv): Deployment {
  const database = options.database ?? (env.AGENT_PLATFORM_DATABASE_URL || undefined);
  if (database !== undefined && !/^postgres(ql)?:\/\//.test(database)) {
    throw new UsageError('--database must be a PostgreSQL URL, postgres://USER:PASSWORD@HOST:PORT/DATABASE');
  }
  const pool = options.databasePool ?? (env.AGENT_PLATFORM_DATABASE_POOL || undefined);
  if (pool !== undefined && !(/^\d+$/.test(String(pool)) && Number(pool) >= 1 && Number(pool) <= 1000)) {
    throw new UsageError(`--database-pool (AGENT_PLATFORM_DATABASE_POOL) must be an integer from 1 to 1000, got "${pool}"`);
  }
  const vectorStore = options.vectorStore ?? parseSharedVectorStore(env.AGENT_PLATFORM_VECTOR_STORE || undefined, env.AGENT_PLATFORM_VECTOR_STORE_CONFIG || undefined);
  return { database, databasePool: pool === undefined ? undefined : Number(pool), vectorStore };
}

/**
 * Refuses a PostgreSQL deployment that would keep shared state on one machine: the master key
 * must come from AGENT_PLATFORM_SECRET (a key file per host would make each instance unable to
 * open the others' secrets), and with `serving` (a server, not a `keys` command) projects need a
 * vector store every instance reaches (the built-in store is a file on one machine).
 */
export function checkDeployment(deployment: Deployment, env: NodeJS.ProcessEnv, serving: boolean): void {
  if (!deployment.database) return;
  if (!env.AGENT_PLATFORM_SECRET) {
    throw new UsageError(
      'With --database (PostgreSQL) every instance must share one master key: set AGENT_PLATFORM_SECRET (e.g. the output of "openssl rand -hex 32") to the same value on every instance',
    );
  }
  if (serving && !deployment.vectorStore) {
    throw new UsageError(
      `With --database (PostgreSQL) projects need a vector store every instance reaches; the built-in one is a file on one machine. Choose one with --vector-store ${SHARED_VECTOR_STORES.join('|')} and --vector-store-config JSON (env AGENT_PLATFORM_VECTOR_STORE, AGENT_PLATFORM_VECTOR_STORE_CONFIG)`,
    );
  }
}

/**
 * The job queue's owner id of this instance. On SQLite, one per data folder (one server per
 * folder): a restart takes back its killed predecessor's jobs at once. On PostgreSQL many
 * processes share the database, on one host too, so each process gets its own
 * (`host:pid:random`): two live processes never share one, and a dead one's jobs pass to others
 * when their leases run out.
 */
export function instanceIdOf(deployment: Deployment, dataDir: string): string {
  return deployment.database ? `${hostname()}:${process.pid}:${randomString(8)}` : `${hostname()}:${dataDir}`;
}

/** The http(s) URLs among a vector store config's values (endpoints, hosts): the operator's own, allowed for the server's requests. */
export function configUrls(config: Record<string, unknown>): string[] {
  return Object.values(config).filter((v): v is string => typeof v === 'string' && /^https?:\/\//i.test(v));
}
