import { IdParam } from '@agent-platform/core/schemas';
import { handleAgentMcpRequest } from '@agent-platform/mcp';
import { z } from 'zod';
import { type ApiRoute, type HttpMethod, route } from '../route.js';

/** One JSON-RPC message as the route reads it; the MCP SDK's transport checks the rest. */
const JsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().max(200).optional(),
});
/** A POST's body: one JSON-RPC message, or a batch of them (protocol version 2025-03-26). */
const JsonRpcBody = z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)]);

const PATH = '/api/v1/projects/{id}/mcp';
const SUMMARY = "The project's agent as an MCP server (streamable HTTP): tools ask, search_knowledge and the project's tools opted in";

/** Each POST is answered on its own (several instances serve any request): see handleAgentMcpRequest. */
const mcpRoute = (method: HttpMethod): ApiRoute =>
  route({
    method,
    path: PATH,
    summary: method === 'POST' ? SUMMARY : `${method}: 405, this server answers each POST on its own response (no stream or session to open or end)`,
    tag: 'MCP server',
    params: IdParam,
    ...(method === 'POST' ? { body: JsonRpcBody } : {}),
    kind: 'web',
    checkOrigin: true,
    response: z.looseObject({ jsonrpc: z.literal('2.0') }).describe('A JSON-RPC response, or Server-Sent Events of notifications (progress, log messages) and the response'),
    protocolAnswers:
      method === 'POST'
        ? { 202: 'Accepted: the body had notifications or responses only', 403: 'The request came from a foreign Origin', 406: 'The client does not accept application/json and text/event-stream' }
        : { 403: 'The request came from a foreign Origin', 405: 'Not allowed: POST only' },
    handler: (p, i) => handleAgentMcpRequest(p, { caller: i.caller, projectId: i.params.id, request: i.request, ...(method === 'POST' ? { body: i.body } : {}) }),
  });

/** The project's agent as an MCP server: its routes, in the order of the table (routes/index.ts). */
export const agentMcpRoutes: readonly ApiRoute[] = [mcpRoute('POST'), mcpRoute('GET'), mcpRoute('DELETE')];
