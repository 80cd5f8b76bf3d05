export { type McpConnectorOptions, createMcpConnector } from './connector.js';
export type { StdioPermission } from './config.js';
export type { FetchFunction } from './fetch.js';
