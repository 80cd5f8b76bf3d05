import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OutboundPolicyOptions } from '@agent-platform/core';
import { hostPortEntry } from '@agent-platform/core/internal';
import { postgresDatabase } from '@agent-platform/core/testing';
import pino from 'pino';
import { inject } from 'vitest';
import { type RunningServer, type ServerOptions, startServer } from '../src/server.js';
import { type TestStorage, testStorage } from './storage-mode.js';
import { postgresStored, type StoredData, sqliteStored } from './stored.js';

export { onPostgres, type TestStorage, testStorage } from './storage-mode.js';

export interface TestServer extends RunningServer {
  /** Keys of two separate users. */
  readonly keyA: string;
  readonly keyB: string;
  readonly dataDir: string;
  /** Where this server keeps its data: SQLite in `dataDir`, or a fresh PostgreSQL database (see `startTestServer`). */
  readonly storage: TestStorage;
  /** What the server has stored, read beside it (database contents, blobs) in either mode. */
  readonly stored: StoredData;
  /**
   * Knowledge settings that give a project a vector store of its own, for tests that change the
   * embedding model's dimension: none on SQLite (the built-in store keeps each model's vectors
   * apart, of any dimension), a new collection of the run's Chroma server on PostgreSQL (the
   * server-wide default collection has the one dimension of its first vectors).
   */
  ownVectorStore(): Record<string, unknown>;
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  /**
   * The document once its indexing has ended (`completed` or `failed`), polled over HTTP. The
   * first document of a server waits for a reader process to start (seconds on a busy
   * machine), longer than the route's own wait may last.
   */
  indexed(documentId: string, key?: string): Promise<any>;
  /**
   * Another instance on this server's data, as a second machine runs it: on PostgreSQL a server
   * of the same options on the same database (its own data folder); undefined on SQLite, whose
   * data one process holds. The caller stops it.
   */
  peer(): Promise<(RunningServer & { stop(): Promise<void> }) | undefined>;
  stop(): Promise<void>;
}

/**
 * The outbound policy of test servers whose users point URLs (a credential's `baseUrl`, MCP
 * servers, vector store endpoints, local model addresses) at the tests' loopback fakes: every
 * port of 127.0.0.1 allowed, as an operator's `--allow-host 127.0.0.1` does (loopback is refused
 * otherwise). Suites about the refusal itself start servers without it.
 */
export const ALLOW_LOOPBACK: OutboundPolicyOptions = { allowedHosts: ['127.0.0.1'] };

/** The master key of test servers in PostgreSQL mode (the mode requires one from the environment). */
const TEST_SECRET = 'the-test-servers-shared-secret';

/**
 * The server options of PostgreSQL mode as an operator runs it: a fresh database of the run's
 * private cluster (`--database`), the master key from AGENT_PLATFORM_SECRET, and a shared vector
 * store, here the run's real Chroma server (started by `chroma-global-setup.ts`) with a
 * collection of its own per server (a collection has one dimension; servers must not share
 * one). Nothing is mocked: the server opens the same PostgreSQL storage, blob store, job queue,
 * notifier and stream store that `agent-platform serve --database` does.
 */
async function postgresMode(options: Pick<ServerOptions, 'env' | 'outbound'>): Promise<Pick<ServerOptions, 'database' | 'vectorStore' | 'env' | 'outbound'>> {
  const chromaUrl = inject('chromaUrl');
  if (!chromaUrl) {
    throw new Error(
      'AGENT_PLATFORM_TEST_STORAGE=postgres needs the run\'s Chroma server: the vitest project must list packages/server/test/chroma-global-setup.ts in globalSetup (the "postgres" project does)',
    );
  }
  // `ownVectorStore()` gives projects collections of that Chroma server: a URL users supply, so
  // its host and port are allowed as an operator allows them (`--allow-host 127.0.0.1:PORT`).
  const outbound = options.outbound ?? {};
  return {
    database: await postgresDatabase(),
    vectorStore: { provider: 'chroma', config: { endpoint: chromaUrl, indexName: `t-${randomBytes(8).toString('hex')}` } },
    env: { ...(options.env ?? process.env), AGENT_PLATFORM_SECRET: TEST_SECRET },
    outbound: { ...outbound, allowedHosts: [...(outbound.allowedHosts ?? []), hostPortEntry(chromaUrl) as string] },
  };
}

/**
 * A real server on an ephemeral loopback port. Its storage follows AGENT_PLATFORM_TEST_STORAGE
 * (`testStorage`): a SQLite file in a temp folder (the default), or `postgres`, the server's
 * PostgreSQL mode on a fresh database (see `postgresMode`). The temp folder is there in both
 * modes (tool caches, model folders, the SQLite file).
 */
export async function startTestServer(options: Omit<ServerOptions, 'port' | 'host' | 'dataDir'> = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'ap-http-'));
  const mode = testStorage === 'postgres' ? await postgresMode(options) : {};
  const server = await startServer({ port: 0, host: '127.0.0.1', dataDir, logger: pino({ level: 'silent' }), ...options, ...mode });
  const stored = mode.database ? postgresStored(mode.database) : sqliteStored(dataDir);
  const keyA = (await server.platform.createUserWithKey({ name: 'a' })).key;
  const keyB = (await server.platform.createUserWithKey({ name: 'b' })).key;
  return {
    ...server,
    keyA,
    keyB,
    dataDir,
    storage: testStorage,
    stored,
    ownVectorStore() {
      const shared = mode.vectorStore;
      if (!shared) return {};
      return { vectorstoreProvider: shared.provider, vectorStoreConfig: { ...shared.config, indexName: `t-${randomBytes(8).toString('hex')}` } };
    },
    async call(method, path, { key = keyA, body, raw, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (key) (init.headers as Record<string, string>).authorization = `Bearer ${key}`;
      if (raw !== undefined || body !== undefined) {
        (init.headers as Record<string, string>)['content-type'] = 'application/json';
        init.body = raw ?? JSON.stringify(body);
      }
      const res = await fetch(server.url + path, init);
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async indexed(documentId, key = keyA) {
      for (let i = 0; i < 1200; i++) {
        const res = await fetch(`${server.url}/api/knowledge/documents/${documentId}`, { headers: { authorization: `Bearer ${key}` } });
        const { document } = (await res.json()) as { document?: { status: string } };
        if (document && document.status !== 'pending' && document.status !== 'processing') return document;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`document ${documentId} is still being indexed after a minute`);
    },
    async peer() {
      if (!mode.database) return undefined;
      const peerDir = await mkdtemp(join(tmpdir(), 'ap-peer-'));
      const peer = await startServer({ port: 0, host: '127.0.0.1', dataDir: peerDir, logger: pino({ level: 'silent' }), ...options, ...mode });
      return {
        ...peer,
        async stop() {
          await peer.close();
          await rm(peerDir, { recursive: true, force: true });
        },
      };
    },
    async stop() {
      await server.close();
      await stored.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A hashed bag-of-words vector of `text` (unit length): texts that share words are similar. The
 * embedding of the test embedders, which need no model.
 */
export function bagOfWords(text: string, dimensions: number): Float32Array {
  const v = new Float32Array(dimensions);
  for (const w of text.toLowerCase().match(/\w+/g) ?? ['_']) {
    const slot = [...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7) % dimensions;
    v[slot] = (v[slot] as number) + 1;
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** The JSON events of an SSE body (a live completion, or a stream's replay with its ids), `[DONE]` and comments left out. */
export function sseEvents<T = any>(sse: string): T[] {
  return sse
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .find((line) => line.startsWith('data: {'))
        ?.slice(6),
    )
    .filter((data): data is string => data !== undefined)
    .map((data) => JSON.parse(data) as T);
}
