import type { Caller } from '../context.js';
import { publicMethods } from '../methods.js';
import {
  AddMcpServerRequest,
  type AddMcpServerResponse,
  DetectTransportRequest,
  type DetectTransportResponse,
  ListMcpServersQuery,
  type ListMcpServersResponse,
  type McpServerResponse,
  type McpToolsResponse,
  UpdateMcpServerRequest,
} from '../schemas/mcp.js';
import { parseInput } from '../validation.js';
import type { McpService } from './service.js';

/**
 * Projects' MCP servers: `AgentPlatform`'s public methods of the area (installed on its prototype,
 * src/methods.ts). Each parses what a library caller passes and hands the parsed value to
 * `McpService`; the server calls the service with the values its routes parsed.
 */
export const mcpMethods = publicMethods<{ mcp: McpService }>()({
  /**
   * `POST /api/mcp/add-server`: connects once (lists the tools) before saving, so a server that
   * cannot be reached, is not an MCP server, is refused by the outbound policy, or is a stdio
   * command the operator did not allow is never saved.
   */
  async addMcpServer(caller: Caller, input: AddMcpServerRequest, signal?: AbortSignal): Promise<AddMcpServerResponse> {
    return this.mcp.add(caller, parseInput(AddMcpServerRequest, input), signal);
  },

  /** `GET /api/mcp/servers?projectId=`: a project's servers, newest first. */
  async listMcpServers(caller: Caller, query: ListMcpServersQuery): Promise<ListMcpServersResponse> {
    return this.mcp.list(caller, parseInput(ListMcpServersQuery, query));
  },

  /** `GET /api/mcp/servers/{id}`. */
  getMcpServer(caller: Caller, id: string): Promise<McpServerResponse> {
    return this.mcp.get(caller, id);
  },

  /** `PATCH /api/mcp/servers/{id}`: which of its tools' calls wait for a person's approval. */
  async updateMcpServer(caller: Caller, id: string, input: UpdateMcpServerRequest): Promise<McpServerResponse> {
    return this.mcp.update(caller, id, parseInput(UpdateMcpServerRequest, input));
  },

  /** `GET /api/mcp/servers/{id}/tools`: what the server offers now, over its shared connection. */
  listMcpTools(caller: Caller, id: string, signal?: AbortSignal): Promise<McpToolsResponse> {
    return this.mcp.tools(caller, id, signal);
  },

  /** `DELETE /api/mcp/servers/{id}`: disconnects and deletes the configuration. */
  deleteMcpServer(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    return this.mcp.delete(caller, id);
  },

  /** `POST /api/mcp/detect-transport`: which transports answer at the URL. */
  async detectMcpTransport(caller: Caller, input: DetectTransportRequest, signal?: AbortSignal): Promise<DetectTransportResponse> {
    return this.mcp.detect(caller, parseInput(DetectTransportRequest, input), signal);
  },
});
