import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/**
 * MCP SDK clients of projects' MCP servers (`/api/v1/projects/{id}/mcp`) on one server, each
 * kept until `closeAll` (call it after each test).
 */
export function projectMcpClients(clientName: string) {
  const clients: Client[] = [];
  return {
    endpoint: (baseUrl: string, projectId: string) => new URL(`${baseUrl}/api/v1/projects/${projectId}/mcp`),
    /** A connected client of the project's MCP server, with the key as bearer (none: no header). */
    async connect(baseUrl: string, projectId: string, key: string | null): Promise<Client> {
      const client = new Client({ name: clientName, version: '1.0.0' });
      const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
      await client.connect(new StreamableHTTPClientTransport(this.endpoint(baseUrl, projectId), { requestInit: { headers } }));
      clients.push(client);
      return client;
    },
    closeAll: () => Promise.all(clients.splice(0).map((c) => c.close())),
  };
}
