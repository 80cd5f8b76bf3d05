import { fileURLToPath } from 'node:url';
import type { McpConnector, McpServerConfig } from '@agent-platform/core';
import { MAX_NESTING_DEPTH } from '@agent-platform/core/internal';
import { afterAll, describe, expect, it } from 'vitest';
import { createMcpConnector } from '../src/index.js';
import { rejection } from './helpers.js';

/**
 * An MCP server is chosen by the user who adds it, so what it answers is client input too:
 * fixtures/deep-server.mjs answers a tool schema and results nested as deep as asked.
 */

const DEEP_SERVER = fileURLToPath(new URL('./fixtures/deep-server.mjs', import.meta.url));
const LIMIT = `nested deeper than ${MAX_NESTING_DEPTH} levels`;

const connectors: McpConnector[] = [];
afterAll(() => Promise.all(connectors.map((c) => c.close())));

function deepServer(depth: number): { mcp: McpConnector; config: McpServerConfig } {
  const mcp = createMcpConnector({ allowStdio: true });
  connectors.push(mcp);
  return { mcp, config: { transport: 'stdio', command: process.execPath, args: [DEEP_SERVER], env: { DEPTH: String(depth) } } };
}

describe('values nested deep from an MCP server', () => {
  it('a tool schema deeper than the limit is an upstream error naming it, never a stack overflow later', async () => {
    // The schema is the deep value plus two levels (type object, properties.x).
    for (const depth of [100_000, MAX_NESTING_DEPTH - 1]) {
      const { mcp, config } = deepServer(depth);
      await rejection(mcp.listTools(`list-${depth}`, config), 'upstream_error', `MCP tool "deep": inputSchema ${LIMIT}`);
      await rejection(mcp.probe(config), 'upstream_error', LIMIT);
    }
  });

  it('a schema exactly at the limit is listed whole', async () => {
    const { mcp, config } = deepServer(MAX_NESTING_DEPTH - 2);
    const [tool] = await mcp.listTools('at-limit', config);
    expect(JSON.stringify(tool?.inputSchema).match(/\{/g)).toHaveLength(MAX_NESTING_DEPTH);
  });

  it('structuredContent deeper than the limit is a tool error naming it; at the limit it is the text', async () => {
    const deep = deepServer(100_000);
    expect(await deep.mcp.callTool('call-deep', deep.config, { name: 'deep', args: {} })).toEqual({
      text: `The MCP server answered structuredContent ${LIMIT}`,
      isError: true,
    });
    const atLimit = deepServer(MAX_NESTING_DEPTH);
    const result = await atLimit.mcp.callTool('call-at-limit', atLimit.config, { name: 'deep', args: {} });
    expect(result.isError).toBe(false);
    expect(result.text.match(/\{/g)).toHaveLength(MAX_NESTING_DEPTH);
  });
});
