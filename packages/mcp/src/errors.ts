import { type ErrorCode, isPlatformError, PlatformError } from '@agent-platform/core';
import { answerTooLargeIn, isUnresolvedHost, unreachableAs } from '@agent-platform/core/internal';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ErrorCode as RpcCode } from '@modelcontextprotocol/sdk/types.js';
import type { ConnectionEvidence } from './evidence.js';
import { isSseError } from './sse-transport.js';

export type { ConnectionEvidence } from './evidence.js';

/** What a failure tells about the connection it happened on. */
export interface MappedError {
  readonly error: PlatformError;
  /** The connection cannot carry more requests (closed, unreachable, session gone): re-open it. */
  readonly breaks: boolean;
}

/** Where and what, for messages: the server's label and the operation that failed. */
export interface FailureContext {
  /** `MCP server at http://host/mcp` or `MCP server command "npx"`. */
  readonly label: string;
  /** `connect`, `tools/list`, `tool echo`. */
  readonly operation: string;
  /** The bound that applied, for timeout messages. */
  readonly timeoutMs: number;
  /** The caller's signal: when it fired, the failure is an abort whatever the SDK says. */
  readonly signal?: AbortSignal | undefined;
  /** What the connection saw before the failure (stdio stderr, network errors of its fetch). */
  readonly seen?: ConnectionEvidence | undefined;
}

/**
 * Readable reasons by error code. Maps, not objects: the code is read from whatever an error
 * carries, and an object would also answer `constructor` or `toString` from its prototype.
 */
const NETWORK_REASONS: ReadonlyMap<string, string> = new Map([
  ['ECONNREFUSED', 'connection refused'],
  ['ECONNRESET', 'connection reset'],
  ['ENOTFOUND', 'host not found'],
  ['EAI_AGAIN', 'DNS lookup failed'],
  ['EHOSTUNREACH', 'host unreachable'],
  ['ENETUNREACH', 'network unreachable'],
  ['ETIMEDOUT', 'connection timed out'],
  ['EPIPE', 'connection closed'],
  ['UND_ERR_CONNECT_TIMEOUT', 'connection timed out'],
  ['UND_ERR_SOCKET', 'connection closed'],
  ['UND_ERR_CLOSED', 'connection closed'],
  ['ERR_SSL_WRONG_VERSION_NUMBER', 'TLS handshake failed'],
  ['CERT_HAS_EXPIRED', 'TLS certificate expired'],
  ['DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed TLS certificate'],
  ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'untrusted TLS certificate'],
]);

const SPAWN_REASONS: ReadonlyMap<string, string> = new Map([
  ['ENOENT', 'command not found'],
  ['EACCES', 'permission denied'],
  ['ENOEXEC', 'not an executable'],
  ['EISDIR', 'is a directory'],
]);

/** The first `code` string down an error's `cause` chain (and through AggregateError's `errors`). */
export function errorCode(error: unknown, depth = 0): string | undefined {
  if (typeof error !== 'object' || error === null || depth > 6) return undefined;
  const own = (error as { code?: unknown }).code;
  if (typeof own === 'string') return own;
  const nested = (error as { errors?: unknown }).errors;
  if (Array.isArray(nested)) {
    for (const inner of nested) {
      const code = errorCode(inner, depth + 1);
      if (code) return code;
    }
  }
  return errorCode((error as { cause?: unknown }).cause, depth + 1);
}

/** fetch's way of failing to connect: `TypeError('fetch failed')` with a cause, or a socket error. */
export function isNetworkError(error: unknown): boolean {
  const code = errorCode(error);
  if (code && NETWORK_REASONS.has(code)) return true;
  return error instanceof TypeError && /fetch failed|terminated|network/i.test(error.message);
}

function networkReason(error: unknown): string {
  const code = errorCode(error);
  const reason = code && NETWORK_REASONS.get(code);
  if (reason) return reason;
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : error instanceof Error ? error.message : String(error);
}

function isProtocolGarbage(error: unknown): boolean {
  return error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError');
}

function stderrSuffix(seen: ConnectionEvidence | undefined): string {
  const tail = seen?.stderr?.().trim();
  return tail ? ` Its stderr ended with: ${tail}` : '';
}

/** `MCP tool "x" on server at <url>` for tool calls, `MCP server at <url> (tools/list)` otherwise. */
export function operationSubject(label: string, operation: string): string {
  return operation.startsWith('tool ') ? `MCP ${operation} on ${label.replace(/^MCP /, '')}` : `${label} (${operation})`;
}

const subject = (ctx: FailureContext) => operationSubject(ctx.label, ctx.operation);

function platform(code: ErrorCode, message: string, cause: unknown, extra: { retryable?: boolean; details?: Record<string, unknown> } = {}): PlatformError {
  return new PlatformError(code, message, {
    cause,
    retryable: extra.retryable ?? (code === 'unavailable' || code === 'timeout'),
    ...(extra.details ? { details: extra.details } : {}),
  });
}

function httpStatusError(status: number, ctx: FailureContext, cause: unknown, connected: boolean): MappedError {
  if (connected && (status === 404 || status === 400)) {
    // The spec's answer to a session the server no longer knows (server-everything says 400).
    return { error: platform('unavailable', `${ctx.label} no longer knows the session (HTTP ${status} to ${ctx.operation}); a new one is opened after the backoff`, cause), breaks: true };
  }
  const hint = status === 401 || status === 403 ? ': check the headers (e.g. Authorization)' : status === 404 || status === 405 ? ': is this the MCP endpoint?' : '';
  return {
    error: platform('upstream_error', `${ctx.label} answered HTTP ${status} to ${ctx.operation}${hint}`, cause, {
      retryable: status >= 500,
      details: { status },
    }),
    breaks: true,
  };
}

/**
 * Turns whatever the SDK, a transport or fetch threw into a `PlatformError`, and says whether
 * the connection is still usable. `connected` is false while connecting (nothing to break yet
 * but the messages differ: "could not be reached" vs "closed the connection").
 */
export function mapError(error: unknown, ctx: FailureContext, connected: boolean): MappedError {
  const seen = ctx.seen;
  if (ctx.signal?.aborted) {
    return { error: platform('aborted', `${subject(ctx)} was aborted`, error), breaks: false };
  }
  // An answer past the message limit was cut off: whatever the SDK made of that (a closed
  // connection, a broken stream), it is that limit.
  const tooLarge = answerTooLargeIn(error) ?? seen?.tooLarge;
  if (tooLarge) return { error: tooLarge, breaks: true };
  // A policy refusal (or another PlatformError of ours) goes through unchanged, also when the
  // transport only reported it vaguely (the SSE EventSource flattens errors into text).
  // A host name that does not resolve is said so, naming the server (the guarded fetch's error).
  const unresolved = [error, seen?.fetchError].find(isUnresolvedHost);
  if (unresolved) return { error: unreachableAs(connected ? `${ctx.label} could not be reached during ${ctx.operation}` : `${ctx.label} could not be reached`, unresolved), breaks: true };
  if (isPlatformError(error)) return { error, breaks: connected && error.code !== 'timeout' && error.code !== 'aborted' };
  if (isPlatformError(seen?.fetchError) && !connected) return { error: seen.fetchError, breaks: false };

  if (error instanceof McpError) {
    if (error.code === RpcCode.RequestTimeout) {
      // A hung call leaves the connection usable: other calls on it have their own timeouts.
      return { error: platform('timeout', `${subject(ctx)} did not answer within ${ctx.timeoutMs} ms`, error, { details: { timeoutMs: ctx.timeoutMs } }), breaks: false };
    }
    if (error.code === RpcCode.ConnectionClosed) {
      if (!connected && seen?.protocolError) return garbage(seen.protocolError, ctx);
      const what = connected ? `closed the connection during ${ctx.operation}` : 'closed the connection before it was initialised';
      return { error: platform('unavailable', `${ctx.label} ${what}.${stderrSuffix(seen)}`, error), breaks: true };
    }
    const rpc = shortened(error.message.replace(/^(MCP error -?\d+: )+/, '')); // the SDK prefixes on both sides
    return {
      error: platform('upstream_error', `${ctx.label} answered ${ctx.operation} with an error: ${rpc}`, error, { details: { rpcCode: error.code } }),
      breaks: false,
    };
  }
  if (error instanceof StreamableHTTPError) {
    if (typeof error.code === 'number' && error.code >= 100) return httpStatusError(error.code, ctx, error, connected);
    const detail = shortened(error.message.replace(/^Streamable HTTP error: /, ''));
    return { error: platform('upstream_error', `${ctx.label} is not an MCP server (${detail})`, error), breaks: true };
  }
  if (isSseError(error)) {
    if (typeof error.code === 'number' && error.code >= 100 && error.code !== 200) return httpStatusError(error.code, ctx, error, connected);
    if (seen?.fetchError !== undefined && isNetworkError(seen.fetchError)) return unreachable(seen.fetchError, ctx, connected);
    const detail = (error.event.message ?? error.message).replace(/^SSE error: /, '');
    if (error.code === 200) return { error: platform('upstream_error', `${ctx.label} is not an MCP server (${detail})`, error), breaks: true };
    return { error: platform('unavailable', `${ctx.label} event stream failed: ${detail}`, error), breaks: true };
  }
  if (isNetworkError(error)) return unreachable(error, ctx, connected);
  const spawnCode = errorCode(error);
  const spawnReason = spawnCode && SPAWN_REASONS.get(spawnCode);
  if (spawnReason && (error as { syscall?: string }).syscall?.startsWith('spawn')) {
    return { error: platform('unavailable', `${ctx.label} could not be started: ${spawnReason}`, error), breaks: true };
  }
  if (isProtocolGarbage(error)) return garbage(error, ctx);
  if (error instanceof Error && error.message === 'Not connected') {
    return { error: platform('unavailable', `${ctx.label} is not connected (the connection closed)`, error), breaks: true };
  }
  const message = error instanceof Error ? error.message : String(error);
  // The legacy SSE transport's failed POST carries the answer's body in its message: the status only.
  const posted = /^Error POSTing to endpoint \(HTTP (\d{3})\)/.exec(message);
  if (posted) return httpStatusError(Number(posted[1]), ctx, error, connected);
  if (/protocol version is not supported/i.test(message)) {
    return { error: platform('upstream_error', `${ctx.label} speaks an MCP version this client does not: ${message}`, error), breaks: true };
  }
  return { error: platform('upstream_error', `${ctx.label} failed during ${ctx.operation}: ${shortened(message)}`, error), breaks: !connected };
}

/** A server's own words (a JSON-RPC error's message), as messages quote them: one line, at most 200 characters. */
function shortened(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is taken out.
  const line = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

function unreachable(error: unknown, ctx: FailureContext, connected: boolean): MappedError {
  const reason = networkReason(error);
  const message = connected ? `${ctx.label} could not be reached during ${ctx.operation}: ${reason}` : `${ctx.label} could not be reached: ${reason}`;
  return { error: platform('unavailable', message, error, { details: { reason: errorCode(error) ?? reason } }), breaks: true };
}

function garbage(error: unknown, ctx: FailureContext): MappedError {
  // JSON.parse's and zod's messages quote what they could not read: what it was, not what it said.
  const detail = error instanceof SyntaxError ? 'a message that is not JSON' : 'a message that is not a JSON-RPC message of MCP';
  return {
    error: platform('upstream_error', `${ctx.label} did not answer with MCP (JSON-RPC): ${detail}.${stderrSuffix(ctx.seen)}`.replace(/\.\.$/, '.'), error),
    breaks: true,
  };
}
