import { randomUUID } from 'node:crypto';
import type { AgentPlatform, Caller } from '@agent-platform/core';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createAgentMcpServer } from './server.js';

export interface AgentMcpRequest {
  readonly caller: Caller;
  readonly projectId: string;
  readonly request: Request;
  /** The JSON-RPC message(s) of a POST, already read and parsed (within the server's body limit). */
  readonly body?: unknown;
  /** Interval of the SSE keep-alive comment on a response stream, in ms. */
  readonly keepAliveMs?: number;
  /** The server's version, as `initialize` answers it. */
  readonly version?: string;
}

const isInitialize = (message: unknown) => (message as { method?: unknown } | null)?.method === 'initialize';

/** 405 for GET and DELETE: no stream of the server's own, no session to end (see the decision below). */
const methodNotAllowed = () =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server answers each POST on its own response' }, id: null }), {
    status: 405,
    headers: { 'content-type': 'application/json', allow: 'POST' },
  });

/**
 * Answers one HTTP request of a project's MCP server (the streamable HTTP transport of the
 * official SDK). Throws `not_found` for a project that is not the caller's.
 *
 * Each POST is served on its own, by a server and a transport made for it: nothing of a
 * client's is kept between requests, so a deployment of several instances serves any request
 * on any instance. `initialize` answers an `Mcp-Session-Id` (random) that the client sends
 * again; it only tells one client's runs from another's when a cancel arrives (on any instance,
 * see `RunCancellations`), and is never looked up. So GET (a stream for messages outside a
 * request: this server sends none) and DELETE (ending a session: there is nothing to end) are
 * answered 405, as the transport's specification allows; the progress and log notifications of
 * a call travel on its POST's response stream.
 */
export async function handleAgentMcpRequest(platform: AgentPlatform, options: AgentMcpRequest): Promise<Response> {
  const { caller, request } = options;
  const project = await platform.agentMcp.project(caller, options.projectId);
  if (request.method !== 'POST') return methodNotAllowed();
  const messages = Array.isArray(options.body) ? options.body : [options.body];
  const initialize = messages.some(isInitialize);
  const server = createAgentMcpServer(platform, {
    caller,
    project,
    sessionId: request.headers.get('mcp-session-id') ?? undefined,
    ...(options.version ? { version: options.version } : {}),
  });
  const transport = new WebStandardStreamableHTTPServerTransport({
    // Only `initialize` mints a session id; the other requests are served statelessly.
    ...(initialize ? { sessionIdGenerator: () => `mcps_${randomUUID().replaceAll('-', '')}` } : {}),
    ...(options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
  });
  await server.connect(transport);
  // The client went away: the server's close aborts the calls under way (the agent's run and its model call).
  const close = () => void server.close().catch(() => {});
  if (request.signal.aborted) close();
  else request.signal.addEventListener('abort', close, { once: true });
  return transport.handleRequest(request, { parsedBody: options.body });
}
