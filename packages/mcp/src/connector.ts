import type { ByteLimit, McpConnector, McpDetection, McpServerConfig, McpTool, McpToolResult } from '@agent-platform/core';
import { DEFAULT_UPSTREAM_LIMITS, PlatformError } from '@agent-platform/core';
import { answerTooLarge, utf8Bytes } from '@agent-platform/core/internal';
import { configKey, serverLabel } from './config.js';
import { type Connection, type OpenOptions, openConnection, raceSignal } from './connection.js';
import { detectTransport } from './detect.js';
import { mapError, operationSubject } from './errors.js';
import type { FetchFunction } from './fetch.js';
import { type Asker, callAsking } from './questions.js';
import { toMcpTool, toToolResult } from './results.js';
import { whileSampling } from './sampling.js';
import { resolveStdioPermission, type StdioPermission } from './stdio-permission.js';

export interface McpConnectorOptions {
  /**
   * The fetch every HTTP and SSE connection and every detection request uses. The server passes
   * core's `createGuardedFetch(policy)`, whose refusals (`invalid_request`) pass through
   * unchanged. Default: the global fetch.
   */
  readonly fetch?: FetchFunction;
  /**
   * Which stdio servers may start: `false` (default) none; `true` any command with any arguments
   * and env (anything can run on the host); or a list of command lines (`'npx -y pkg'`, or
   * `{ command, args, env }`): a configuration's command and args must equal one entry's
   * exactly (no PATH lookup, no basename match) and it may set only the env keys that entry
   * names. Entries are checked here: a bad one throws `invalid_request`.
   */
  readonly allowStdio?: StdioPermission;
  /** Bound on starting a transport and the `initialize` exchange. Default 10 000 ms. */
  readonly connectTimeoutMs?: number;
  /** Default bound on one call (`tools/call`, each `tools/list` page). Default 30 000 ms. */
  readonly callTimeoutMs?: number;
  /** Bound on `detectTransport` as a whole. Default 5 000 ms. */
  readonly detectTimeoutMs?: number;
  /**
   * Most bytes of one JSON-RPC message of an HTTP or SSE server (an answer's body, one event of
   * an event stream), enforced while reading, and of one server's whole tool list (all its
   * pages, as JSON). Past it the server is cut off, the call fails with `upstream_error` naming
   * `setting`, and the connection is opened again for the next call. Default 4 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.mcpMessageBytes`).
   */
  readonly messageLimit?: ByteLimit;
  /**
   * Most bytes of one tool call's result (its text, as `callTool` answers it); past it the call
   * fails with `upstream_error` naming `setting` (the connection stays). Default 1 MiB
   * (`DEFAULT_UPSTREAM_LIMITS.mcpToolResultBytes`), as a project tool's result.
   */
  readonly toolResultLimit?: ByteLimit;
  /** What the client says it is in `initialize`. Default `{ name: 'agent-platform', version: '0.1.0' }`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
}

/** First delay after a failure, doubled per further failure up to the maximum. */
const BACKOFF_INITIAL_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const MAX_TOOL_PAGES = 1000;

/** The shared connection of one saved server. */
interface Slot {
  readonly key: string;
  connection: Connection | undefined;
  connecting: Promise<Connection> | undefined;
  /** Consecutive failures (reset by a successful request); drives the backoff. */
  failures: number;
  /** No new connection attempt before this time (ms since epoch). */
  retryAt: number;
  lastError: PlatformError | undefined;
  retired: boolean;
  /**
   * The server's tools as listed on `connection` (the listing itself while it runs, shared by
   * every caller), kept until the server sends `notifications/tools/list_changed`. A new
   * connection (after a failure, or because the configuration changed) lists again.
   */
  tools: { readonly connection: Connection; readonly list: Promise<McpTool[]> } | undefined;
  /** The running calls that can answer the server's questions, oldest first. */
  askers: Set<Asker>;
}

export function backoffMs(failures: number): number {
  return Math.min(BACKOFF_INITIAL_MS * 2 ** Math.max(0, failures - 1), BACKOFF_MAX_MS);
}

async function listAllTools(connection: Connection, timeoutMs: number, signal: AbortSignal | undefined, limit: ByteLimit): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  // Each page is one message (bounded as it is read); the pages together are bounded here, as the
  // list goes to the model with every request.
  let bytes = 0;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await connection.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs, ...(signal ? { signal } : {}) });
    for (const tool of result.tools) {
      const listed = toMcpTool(tool);
      bytes += utf8Bytes(JSON.stringify(listed));
      if (bytes > limit.bytes) throw answerTooLarge(connection.label, 'a tool list', limit.bytes, limit.setting);
      tools.push(listed);
    }
    cursor = result.nextCursor;
    if (!cursor || seen.has(cursor)) break; // a server repeating a cursor would loop forever
    seen.add(cursor);
  }
  return tools;
}

/**
 * An `McpConnector` over the official MCP SDK: stdio, streamable HTTP and legacy SSE servers,
 * one shared connection per saved server (opened on first use, re-opened with backoff after a
 * failure), one-off probes and transport detection. See the package README.
 *
 * @example
 * const mcp = createMcpConnector({ fetch: createGuardedFetch(policy), allowStdio: ['npx -y @modelcontextprotocol/server-everything'] });
 * const { tools } = await mcp.probe({ transport: 'http', url: 'https://mcp.example.com/mcp' });
 * const result = await mcp.callTool('mcp_1', config, { name: 'echo', args: { message: 'hi' } });
 * await mcp.close();
 */
export function createMcpConnector(options: McpConnectorOptions = {}): McpConnector {
  const fetch: FetchFunction = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const callTimeoutMs = options.callTimeoutMs ?? 30_000;
  const detectTimeoutMs = options.detectTimeoutMs ?? 5_000;
  const messageLimit = options.messageLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.mcpMessageBytes, setting: 'the messageLimit option of the MCP connector' };
  const toolResultLimit = options.toolResultLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.mcpToolResultBytes, setting: 'the toolResultLimit option of the MCP connector' };
  const base: Omit<OpenOptions, 'signal'> = {
    background: (closing) => track(closing),
    fetch,
    messageLimit,
    allowStdio: resolveStdioPermission(options.allowStdio ?? false),
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    clientInfo: options.clientInfo ?? { name: 'agent-platform', version: '0.1.0' },
  };
  const slots = new Map<string, Slot>();
  /** Probe connections open now and closes still running, so `close()` can wait for them. */
  const pending = new Set<Promise<void>>();
  const probes = new Set<Connection>();
  let closed: Promise<void> | undefined;

  const closedError = () => new PlatformError('unavailable', 'The MCP connector is closed');

  function track(promise: Promise<void>): void {
    pending.add(promise);
    void promise.finally(() => pending.delete(promise));
  }

  function retire(slot: Slot): void {
    slot.retired = true;
    const connection = slot.connection;
    slot.connection = undefined;
    if (connection) track(connection.close());
  }

  function fail(slot: Slot, error: PlatformError): void {
    slot.failures++;
    slot.retryAt = Date.now() + backoffMs(slot.failures);
    slot.lastError = error;
  }

  /** The connection broke (by itself or a failed request): close it; the next use reconnects after the backoff. */
  function markBroken(slot: Slot, connection: Connection, error: PlatformError): void {
    if (slot.connection !== connection) return;
    slot.connection = undefined;
    fail(slot, error);
    track(connection.close());
  }

  function connect(slot: Slot, config: McpServerConfig): Promise<Connection> {
    const attempt = openConnection(config, base).then(
      (connection) => {
        if (slot.retired || closed) {
          track(connection.close());
          throw slot.retired ? new PlatformError('unavailable', `${connection.label} was disconnected while connecting`) : closedError();
        }
        slot.connection = connection;
        connection.onBroken = (error) => markBroken(slot, connection, error);
        connection.onToolsChanged = () => {
          if (slot.tools?.connection === connection) slot.tools = undefined;
        };
        connection.onElicit = (question) => [...slot.askers][0]?.(question) ?? Promise.resolve({ action: 'decline' });
        return connection;
      },
      (error: PlatformError) => {
        // A refused configuration is refused again at once; everything else waits for the backoff.
        if (error.code !== 'invalid_request') fail(slot, error);
        throw error;
      },
    );
    slot.connecting = attempt;
    void attempt.then(
      () => {
        if (slot.connecting === attempt) slot.connecting = undefined;
      },
      () => {
        if (slot.connecting === attempt) slot.connecting = undefined;
      },
    );
    return attempt;
  }

  /**
   * The slot and its open connection for `serverId` (one connect in flight, shared by all
   * callers). A caller waits for a connect at most `timeoutMs` (its own bound) and until its
   * signal fires; the connect itself goes on for the others.
   */
  async function acquire(serverId: string, config: McpServerConfig, operation: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<{ slot: Slot; connection: Connection }> {
    if (closed) throw closedError();
    if (signal?.aborted) throw new PlatformError('aborted', `${operation} was aborted`, { cause: signal.reason });
    const key = configKey(config);
    let slot = slots.get(serverId);
    if (slot && slot.key !== key) {
      retire(slot);
      slot = undefined;
    }
    if (!slot) {
      slot = { key, connection: undefined, connecting: undefined, failures: 0, retryAt: 0, lastError: undefined, retired: false, tools: undefined, askers: new Set() };
      slots.set(serverId, slot);
    }
    if (slot.connection) return { slot, connection: slot.connection };
    let attempt = slot.connecting;
    if (!attempt) {
      const wait = slot.retryAt - Date.now();
      if (wait > 0) {
        const last = slot.lastError?.message ?? 'the last attempt failed';
        throw new PlatformError('unavailable', `${last.replace(/\.?$/, '.')} Retrying in ${(wait / 1000).toFixed(1)} s.`, {
          retryable: true,
          cause: slot.lastError,
          details: { retryInMs: wait },
        });
      }
      attempt = connect(slot, config);
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return { slot, connection: await raceSignal(attempt, signal ? AbortSignal.any([signal, timeout]) : timeout) };
    } catch (error) {
      if (signal?.aborted) throw new PlatformError('aborted', `${operation} was aborted while connecting`, { cause: error });
      if (timeout.aborted) {
        throw new PlatformError('timeout', `${operation} did not answer within ${timeoutMs} ms (still connecting)`, { retryable: true, details: { timeoutMs } });
      }
      throw error;
    }
  }

  /** Runs one request on the shared connection, mapping failures and breaking the connection when they say so. */
  async function request<T>(
    serverId: string,
    config: McpServerConfig,
    operation: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    run: (connection: Connection, timeoutMs: number, slot: Slot) => Promise<T>,
  ): Promise<T> {
    const started = Date.now();
    const { slot, connection } = await acquire(serverId, config, operationSubject(serverLabel(config), operation), timeoutMs, signal);
    // What is left of the caller's bound after waiting for a connect.
    const remaining = Math.max(1, timeoutMs - (Date.now() - started));
    try {
      const result = await run(connection, remaining, slot);
      slot.failures = 0;
      return result;
    } catch (error) {
      const mapped = mapError(error, { label: connection.label, operation, timeoutMs, signal, seen: connection.evidence }, true);
      if (mapped.breaks) markBroken(slot, connection, mapped.error);
      throw mapped.error;
    }
  }

  return {
    async probe(config, probeOptions = {}) {
      if (closed) throw closedError();
      const signal = probeOptions.signal;
      const connection = await openConnection(config, { ...base, signal });
      probes.add(connection);
      try {
        const tools = await listAllTools(connection, callTimeoutMs, signal, messageLimit);
        const info = connection.client.getServerVersion();
        return { serverInfo: { name: info?.name ?? '', version: info?.version ?? '' }, tools };
      } catch (error) {
        throw mapError(error, { label: connection.label, operation: 'tools/list', timeoutMs: callTimeoutMs, signal, seen: connection.evidence }, true).error;
      } finally {
        probes.delete(connection);
        track(connection.close());
      }
    },

    async listTools(serverId, config, listOptions = {}) {
      const signal = listOptions.signal;
      return request(serverId, config, 'tools/list', callTimeoutMs, signal, (connection, remaining, slot) => {
        let cached = slot.tools;
        if (cached?.connection !== connection) {
          // Shared by the callers that come while it runs, so no one caller's signal stops it;
          // each caller still stops waiting at its own signal. A failed listing is not kept.
          const list = listAllTools(connection, remaining, undefined, messageLimit);
          cached = { connection, list };
          slot.tools = cached;
          const entry = cached;
          list.catch(() => {
            if (slot.tools === entry) slot.tools = undefined;
          });
        }
        return raceSignal(cached.list, signal);
      });
    },

    async callTool(serverId, config, call): Promise<McpToolResult> {
      const args = call.args ?? {};
      if (typeof args !== 'object' || Array.isArray(args)) {
        throw PlatformError.invalid(`The arguments of MCP tool "${call.name}" must be an object`);
      }
      const timeoutMs = call.timeoutMs ?? callTimeoutMs;
      const signal = call.signal;
      const result = await request(serverId, config, `tool "${call.name}"`, timeoutMs, signal, async (connection, remaining, slot) => {
        const asking = call.elicit && { askers: slot.askers, elicit: call.elicit, subject: `${serverLabel(config)} tool "${call.name}"`, timeoutMs };
        const answer = await whileSampling(connection.samplers, config.allowSampling ? call.sample : undefined, () =>
          callAsking(connection.client, { name: call.name, arguments: args as Record<string, unknown> }, remaining, signal, asking),
        );
        return toToolResult(answer as { content?: unknown; structuredContent?: unknown; isError?: unknown });
      });
      // Checked outside the request: a large result is the tool's failure, not the connection's.
      if (utf8Bytes(result.text) > toolResultLimit.bytes) {
        throw answerTooLarge(`MCP tool "${call.name}" on ${serverLabel(config).replace(/^MCP /, '')}`, 'a result', toolResultLimit.bytes, toolResultLimit.setting);
      }
      return result;
    },

    async disconnect(serverId) {
      const slot = slots.get(serverId);
      if (!slot) return;
      slots.delete(serverId);
      const connection = slot.connection;
      retire(slot);
      if (connection) await connection.close();
    },

    detectTransport(url, detectOptions = {}): Promise<McpDetection> {
      if (closed) return Promise.reject(closedError());
      return detectTransport(url, { fetch, timeoutMs: detectTimeoutMs, signal: detectOptions.signal });
    },

    close() {
      closed ??= (async () => {
        for (const slot of slots.values()) retire(slot);
        slots.clear();
        for (const connection of probes) track(connection.close());
        probes.clear();
        while (pending.size > 0) await Promise.all([...pending]);
      })();
      return closed;
    },
  };
}
