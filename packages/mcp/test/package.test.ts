import { describe, expect, it } from 'vitest';

/**
 * The public surface of @agent-platform/mcp: the names each entry exports. A change here is a change of
 * the package's API: review it, then update the snapshot (`vitest run -u`).
 */
describe('@agent-platform/mcp exports', () => {
  it('.', async () => {
    expect(Object.keys(await import('@agent-platform/mcp')).sort()).toMatchInlineSnapshot(`
      [
        "createAgentMcpServer",
        "createMcpConnector",
        "formatCommandLine",
        "handleAgentMcpRequest",
        "parseStdioEntry",
        "splitCommandLine",
      ]
    `);
  });
});
