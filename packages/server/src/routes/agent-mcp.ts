import { IdParam } from '@agent-platform/core/schemas';
import { handleAgentMcpRequest } from '@agent-platform/mcp';
import { z } from 'zod';
import { type ApiRoute, route } from '../route.js';

/** One JSON-RPC message as the route reads it; the MCP SDK's transport checks the rest. */
const JsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().max(200).optional(),
});
/** A POST's body: one JSON-RPC message, or a batch of them (protocol version 2025-03-26). */
const JsonRpcBody = z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)]);

const PATH = '/api/v1/projects/{id}/mcp';
const SUMMARY = "The project's agent as an MCP server (streamable HTTP): tools ask, search_knowledge and the project's tools opted in; GET and DELETE answer 405";

/**
 * The POST: each is answered on its own (several instances serve any request), see
 * handleAgentMcpRequest. GET (a stream of the server's own) and DELETE (ending a session) are
 * refused with 405, as the transport's specification allows: there is no stream or session.
 */
const post = route({
  method: 'POST',
  path: PATH,
  summary: SUMMARY,
  tag: 'MCP server',
  params: IdParam,
  body: JsonRpcBody,
  kind: 'web',
  checkOrigin: true,
  refusedMethods: ['GET', 'DELETE'],
  response: z.looseObject({ jsonrpc: z.literal('2.0') }).describe('A JSON-RPC message: the response, or a notification before it (progress, log messages)'),
  protocolAnswers: {
    202: 'Accepted: the body had notifications or responses only',
    403: 'The request came from an Origin that is not allowed (--cors-origin)',
    406: 'The client does not accept both application/json and text/event-stream',
  },
  audit: { none: "The project's agent answering an MCP client is usage (as a completion is), not a change of a resource" },
  handler: (p, i) => handleAgentMcpRequest(p, { caller: i.caller, projectId: i.params.id, request: i.request, body: i.body }),
});

/** The project's agent as an MCP server: its route, in the order of the table (routes/index.ts). */
export const agentMcpRoutes: readonly ApiRoute[] = [post];
