import { type ByteLimit, type ElicitationAnswer, type ElicitationRequest, type McpServerConfig, PlatformError } from '@agent-platform/core';
import { boundedFetch, isEventStream } from '@agent-platform/core/internal';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, type ElicitResult, McpError, ErrorCode as RpcCode, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseServerUrl, serverLabel, withUrlCredentials } from './config.js';
import { type ConnectionEvidence, mapError } from './errors.js';
import { type FetchFunction, watchedFetch } from './fetch.js';
import { answerSampling, type Sampler } from './sampling.js';
import { createSseTransport, isSseError } from './sse-transport.js';
import { checkStdio, type ResolvedStdioPermission } from './stdio-permission.js';

export interface OpenOptions {
  readonly fetch: FetchFunction;
  readonly allowStdio: ResolvedStdioPermission;
  readonly connectTimeoutMs: number;
  /** Most bytes of one JSON-RPC message of an HTTP or SSE server (see `McpConnectorOptions.messageLimit`). */
  readonly messageLimit: ByteLimit;
  readonly clientInfo: { readonly name: string; readonly version: string };
  readonly signal?: AbortSignal | undefined;
  /** Receives closes left running after a failed attempt (a stdio process may take seconds to stop). */
  readonly background?: ((closing: Promise<void>) => void) | undefined;
}

/** One initialised MCP session. */
export interface Connection {
  readonly client: Client;
  readonly label: string;
  readonly evidence: ConnectionEvidence;
  /** Set by the owner: called once when the connection fails by itself (process exit, stream lost). */
  onBroken: ((error: PlatformError) => void) | undefined;
  /** Set by the owner: called on each `notifications/tools/list_changed` the server sends. */
  onToolsChanged: (() => void) | undefined;
  /**
   * The samplers of the tool calls in flight (with `allowSampling`), oldest first: a server's
   * `sampling/createMessage` is answered by the oldest (all are the same project's model).
   */
  readonly samplers: Set<Sampler>;
  /** Set by the owner: answers the server's `elicitation/create` (form mode); unset, the client declines. */
  onElicit: ((request: ElicitationRequest) => Promise<ElicitationAnswer>) | undefined;
  /** Ends the session (HTTP: DELETE, politely and briefly) and closes the transport. Never rejects. */
  close(): Promise<void>;
}

const STDERR_TAIL_CHARS = 2048;
const TERMINATE_SESSION_MS = 1000;

/** Keeps the last `max` characters written to a stream. */
function tail(max: number): { push(chunk: Buffer | string): void; text(): string } {
  let text = '';
  return {
    push(chunk) {
      text = (text + chunk.toString()).slice(-max);
    },
    text: () => text,
  };
}

/** Rejects with `signal.reason` once it fires; the promise's own rejection is then ignored. */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function createTransport(
  config: McpServerConfig,
  options: OpenOptions,
  evidence: ConnectionEvidence,
  onStreamLost: (error: unknown) => void,
  onTooLarge: (error: PlatformError) => void,
): Promise<Transport> {
  if (config.transport === 'stdio') {
    const command = checkStdio(config, options.allowStdio);
    const transport = new StdioClientTransport({
      command,
      args: [...(config.args ?? [])],
      // Only the SDK's short list (HOME, PATH, SHELL, TERM, USER, LOGNAME), never the service's secrets.
      env: { ...getDefaultEnvironment(), ...config.env },
      stderr: 'pipe',
    });
    const stderr = tail(STDERR_TAIL_CHARS);
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    evidence.stderr = stderr.text;
    return transport;
  }
  if (config.transport !== 'http' && config.transport !== 'sse') {
    throw PlatformError.invalid(`Unknown MCP transport ${JSON.stringify(config.transport)}: use stdio, http or sse`);
  }
  const { url, headers } = withUrlCredentials(parseServerUrl(config.url, config.transport), config.headers);
  // Every answer is read under the message limit: an event stream event by event, any other body
  // whole. Passing it is recorded (the SDK reports a broken event stream only as such) and ends
  // the connection.
  const limit = options.messageLimit;
  const label = serverLabel(config);
  const bounded = boundedFetch(options.fetch, (_request, response) => ({
    maxBytes: isEventStream(response) ? undefined : limit.bytes,
    maxEventBytes: limit.bytes,
    subject: label,
    setting: limit.setting,
    onExceeded: (error) => {
      evidence.tooLarge ??= error;
      onTooLarge(error);
    },
  }));
  const fetch = watchedFetch(bounded, evidence, onStreamLost);
  const requestInit: RequestInit | undefined = headers ? { headers } : undefined;
  if (config.transport === 'http') return new StreamableHTTPClientTransport(url, { fetch, requestInit });
  return createSseTransport(url, { fetch, eventSourceInit: { fetch }, requestInit });
}

/**
 * Starts a transport and initialises an MCP session within `connectTimeoutMs`. Rejects with a
 * `PlatformError` (see `mapError`); on failure everything started is closed again.
 */
export async function openConnection(config: McpServerConfig, options: OpenOptions): Promise<Connection> {
  const label = serverLabel(config);
  if (options.signal?.aborted) throw new PlatformError('aborted', `Connecting to ${label} was aborted`, { cause: options.signal.reason });
  const evidence: ConnectionEvidence = {};
  let connected = false;
  let closing: Promise<void> | undefined;
  let connection: Connection | undefined;

  const broken = (error: PlatformError) => {
    if (!connected || closing || !connection) return;
    const notify = connection.onBroken;
    connection.onBroken = undefined;
    notify?.(error);
  };
  // Created before the transport: an answer past the message limit while connecting fails the attempt at once.
  const attempt = new AbortController();
  const transport = await createTransport(
    config,
    options,
    evidence,
    (error) => broken(mapError(error, { label, operation: 'a call', timeoutMs: 0, seen: evidence }, true).error),
    (error) => {
      if (!connected) return attempt.abort(error);
      // The SDK would wait for the request's timeout: closing fails every request in flight now
      // (each reports this error, recorded in `evidence.tooLarge`).
      broken(error);
      void connection?.close();
    },
  );
  // Sampling is declared only where the server's configuration allows it: servers offer it to clients that declare it.
  // Elicitation in form mode: a tool's questions become pending questions a person answers (URL mode is declined).
  const client = new Client({ name: options.clientInfo.name, version: options.clientInfo.version }, { capabilities: { elicitation: { form: {} }, ...(config.allowSampling ? { sampling: {} } : {}) } });
  const samplers = new Set<Sampler>();
  if (config.allowSampling) {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => {
      const sampler = samplers.values().next().value;
      if (!sampler) throw new McpError(RpcCode.InvalidRequest, 'Sampling is answered only during a tool call of this server');
      return answerSampling(request.params, sampler, extra.signal);
    });
  }
  client.setRequestHandler(ElicitRequestSchema, async (request): Promise<ElicitResult> => {
    const params = request.params as { mode?: string; message: string; requestedSchema?: Record<string, unknown> };
    const answer = connection?.onElicit;
    if (params.mode === 'url' || !params.requestedSchema || !answer) return { action: 'decline' };
    const result = await answer({ message: params.message, schema: params.requestedSchema });
    return result.action === 'accept' ? { action: 'accept', content: (result.content ?? {}) as ElicitResult['content'] } : { action: result.action };
  });
  client.onerror = (error) => {
    if (!connected) {
      if (error instanceof SyntaxError || error.name === 'ZodError') evidence.protocolError ??= error;
      return;
    }
    // The legacy event stream dropped: the EventSource would reconnect into a new, uninitialised session.
    if (isSseError(error)) broken(mapError(error, { label, operation: 'the event stream', timeoutMs: 0, seen: evidence }, true).error);
  };
  // Registered before connecting, so a notification sent right after `initialize` is not missed.
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    connection?.onToolsChanged?.();
  });
  client.onclose = () => {
    const suffix = evidence.stderr?.().trim() ? ` Its stderr ended with: ${evidence.stderr().trim()}` : '';
    broken(new PlatformError('unavailable', `${label} closed the connection.${suffix}`, { retryable: true }));
  };

  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) {
        const timer = new Promise<void>((resolve) => setTimeout(resolve, TERMINATE_SESSION_MS).unref());
        await Promise.race([transport.terminateSession().catch(() => undefined), timer]);
      }
      await client.close().catch(() => undefined);
    })();
    return closing;
  };

  const timer = setTimeout(() => {
    const stderr = evidence.stderr?.().trim();
    attempt.abort(
      new PlatformError('timeout', `${label} did not answer within ${options.connectTimeoutMs} ms.${stderr ? ` Its stderr ended with: ${stderr}` : ''}`.replace(/\.$/, ''), {
        retryable: true,
      }),
    );
  }, options.connectTimeoutMs);
  const onAbort = () => attempt.abort(new PlatformError('aborted', `Connecting to ${label} was aborted`));
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // The SDK's own initialize timeout is longer: ours also covers starting the transport (SSE handshake, spawn).
    await raceSignal(client.connect(transport, { timeout: options.connectTimeoutMs + 1000 }), attempt.signal);
    connected = true;
  } catch (error) {
    // Not awaited: a stdio process gets seconds to stop (stdin closed, then SIGTERM, then SIGKILL).
    closing = client.close().catch(() => undefined);
    options.background?.(closing);
    await Promise.resolve(transport.close()).catch(() => undefined);
    if (attempt.signal.aborted && attempt.signal.reason === error) {
      if ((error as PlatformError).code === 'timeout' && evidence.protocolError) {
        throw mapError(evidence.protocolError, { label, operation: 'connect', timeoutMs: options.connectTimeoutMs, seen: evidence }, false).error;
      }
      throw error;
    }
    throw mapError(error, { label, operation: 'connect', timeoutMs: options.connectTimeoutMs, seen: evidence }, false).error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  connection = { client, label, evidence, onBroken: undefined, onToolsChanged: undefined, onElicit: undefined, samplers, close };
  return connection;
}
