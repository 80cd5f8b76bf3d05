import { isPlatformError, type McpDetection, type McpTransport, PlatformError } from '@agent-platform/core';
import { displayUrl, isUnresolvedHost, limitBody, unreachableAs } from '@agent-platform/core/internal';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { parseServerUrl, withUrlCredentials } from './config.js';
import type { FetchFunction } from './fetch.js';

export interface DetectOptions {
  readonly fetch: FetchFunction;
  /** Bound on the whole detection (both checks run side by side). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
}

interface SseEvent {
  readonly event: string;
  readonly data: string;
}

/** Reading a stream stops after this much without a usable event. */
const MAX_SCAN_BYTES = 64 * 1024;
const DELETE_TIMEOUT_MS = 1000;

/**
 * Reads server-sent events from `body` until `decide` says yes (true) or no (false) to one;
 * `undefined` skips it, and events without data (priming ids, keep-alives) are always skipped.
 * False at the end of the stream or after MAX_SCAN_BYTES.
 */
async function scanEvents(body: ReadableStream<Uint8Array>, decide: (event: SseEvent) => boolean | undefined): Promise<boolean> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let scanned = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value) {
        scanned += value.byteLength;
        buffer += decoder.decode(value, { stream: true });
      }
      const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
      buffer = done ? '' : (blocks.pop() ?? '');
      for (const block of blocks) {
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split(/\r\n|\n|\r/)) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const raw = colon === -1 ? '' : line.slice(colon + 1);
          const text = raw.startsWith(' ') ? raw.slice(1) : raw;
          if (field === 'event') event = text;
          else if (field === 'data') data.push(text);
        }
        const text = data.join('\n');
        if (text === '') continue;
        const verdict = decide({ event, data: text });
        if (verdict !== undefined) return verdict;
      }
      if (done || scanned > MAX_SCAN_BYTES) return false;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** `response` for a JSON-RPC response, `other` for a request or notification, else undefined. */
function jsonRpcKind(value: unknown): 'response' | 'other' | undefined {
  const message = Array.isArray(value) ? value[0] : value;
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return undefined;
  if ('id' in m && ('result' in m || 'error' in m)) return 'response';
  return typeof m.method === 'string' ? 'other' : undefined;
}

/** A stream's answer to `initialize`: its first JSON-RPC response (requests and notifications before it are skipped). */
function initializeAnswer(event: SseEvent): boolean | undefined {
  if (event.event !== 'message') return undefined;
  const kind = jsonRpcKind(parseJson(event.data));
  return kind === 'other' ? undefined : kind === 'response';
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Streamable HTTP: an `initialize` POST answered with JSON-RPC (a JSON body or an event stream). */
async function checkStreamableHttp(url: URL, extra: Record<string, string> | undefined, fetch: FetchFunction, signal: AbortSignal): Promise<boolean> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...extra, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'agent-platform-detect', version: '0.1.0' } },
    }),
    signal,
  });
  const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  let ok = false;
  if (response.ok && response.body) {
    if (type === 'application/json') {
      // An answer to `initialize` is small: one past the scan bound is not one (and is not read on).
      const text = await limitBody(response, { maxBytes: MAX_SCAN_BYTES, setting: 'the detection bound' }, url.href)
        .text()
        .catch(() => '');
      ok = jsonRpcKind(parseJson(text)) === 'response';
    } else if (type === 'text/event-stream') ok = await scanEvents(response.body, initializeAnswer);
  }
  await response.body?.cancel().catch(() => undefined);
  const session = response.headers.get('mcp-session-id');
  if (ok && session) {
    // End the session the probe opened; a failure here changes nothing about the answer.
    const ending = AbortSignal.any([signal, AbortSignal.timeout(DELETE_TIMEOUT_MS)]);
    await fetch(url, { method: 'DELETE', headers: { ...extra, 'mcp-session-id': session, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, signal: ending })
      .then((r) => r.body?.cancel())
      .catch(() => undefined);
  }
  return ok;
}

/** Legacy SSE: a GET whose event stream starts with an `endpoint` event. */
async function checkLegacySse(url: URL, extra: Record<string, string> | undefined, fetch: FetchFunction, signal: AbortSignal): Promise<boolean> {
  const response = await fetch(url, { method: 'GET', headers: { ...extra, accept: 'text/event-stream' }, signal });
  const type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (!response.ok || type !== 'text/event-stream' || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    return false;
  }
  return scanEvents(response.body, (e) => e.event === 'endpoint');
}

/**
 * Failures that answer the detection as they are, rather than "not this transport": a policy
 * refusal (nothing was sent) and a host name that does not resolve (nothing can answer).
 */
const isRefusal = (error: unknown): error is PlatformError => (isPlatformError(error) && error.code === 'invalid_request') || isUnresolvedHost(error);

/**
 * Which transports answer at `url`, both checks side by side within `timeoutMs`, through the
 * given fetch. A policy refusal (a `PlatformError` from the fetch) rejects, and so does a host
 * name that does not resolve (`unavailable`, "MCP server at <url> could not be reached: host
 * name 'x' does not resolve"); an abort by the caller rejects with `aborted`; any other failure
 * means "not this transport".
 */
export async function detectTransport(url: string, options: DetectOptions): Promise<McpDetection> {
  const { url: target, headers } = withUrlCredentials(parseServerUrl(url, 'http'), undefined);
  if (options.signal?.aborted) throw new PlatformError('aborted', 'MCP transport detection was aborted', { cause: options.signal.reason });
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new Error('detection timed out')), options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline.signal, options.signal]) : deadline.signal;
  const settle = (check: Promise<boolean>) =>
    check.then(
      (ok) => ({ ok, refusal: undefined }),
      (error: unknown) => ({ ok: false, refusal: isRefusal(error) ? error : undefined }),
    );
  try {
    const [http, sse] = await Promise.all([settle(checkStreamableHttp(target, headers, options.fetch, signal)), settle(checkLegacySse(target, headers, options.fetch, signal))]);
    const refusal = http.refusal ?? sse.refusal;
    if (isUnresolvedHost(refusal)) throw unreachableAs(`MCP server at ${displayUrl(target.href)} could not be reached`, refusal);
    if (refusal) throw refusal;
    if (options.signal?.aborted) throw new PlatformError('aborted', 'MCP transport detection was aborted');
    const supportedTypes: McpTransport[] = [];
    if (http.ok) supportedTypes.push('http');
    if (sse.ok) supportedTypes.push('sse');
    return { supportedTypes, recommended: http.ok ? 'http' : sse.ok ? 'sse' : undefined };
  } finally {
    clearTimeout(timer);
    deadline.abort(new Error('detection finished')); // ends any stream still open
  }
}
