export { type McpConnectorOptions, createMcpConnector } from './connector.js';
export { formatCommandLine, parseStdioEntry, type StdioEntry, type StdioPermission, splitCommandLine } from './stdio-permission.js';
export type { FetchFunction } from './fetch.js';
