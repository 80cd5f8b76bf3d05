export { type AgentMcpRequest, handleAgentMcpRequest } from './agent-server/http.js';
export { type AgentMcpServerOptions, createAgentMcpServer } from './agent-server/server.js';
export { createMcpConnector, type McpConnectorOptions } from './connector.js';
export type { FetchFunction } from './fetch.js';
export { formatCommandLine, parseStdioEntry, type StdioEntry, type StdioPermission, splitCommandLine } from './stdio-permission.js';
