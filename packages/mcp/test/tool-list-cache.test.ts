import type { McpConnector, McpServerConfig } from '@agent-platform/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpConnector } from '../src/index.js';
import { TEST_SERVER } from './helpers.js';

/**
 * The connector keeps a server's tool list per connection until the server says it changed
 * (`notifications/tools/list_changed`), against a real SDK server over stdio whose tools change
 * ("changing" mode of fixtures/test-server.mjs: `listed` counts the tools/list requests served).
 */

const connectors: McpConnector[] = [];
afterEach(async () => {
  await Promise.all(connectors.splice(0).map((c) => c.close()));
});

function connector(): McpConnector {
  const created = createMcpConnector({ allowStdio: true });
  connectors.push(created);
  return created;
}

const changing = (env: Record<string, string> = {}): McpServerConfig => ({ transport: 'stdio', command: process.execPath, args: [TEST_SERVER, 'changing'], env });
const names = async (mcp: McpConnector, id: string, config: McpServerConfig) => (await mcp.listTools(id, config)).map((t) => t.name);
const listed = async (mcp: McpConnector, id: string, config: McpServerConfig) => Number((await mcp.callTool(id, config, { name: 'listed', args: {} })).text);

describe('tool list cache', () => {
  it('lists once per connection, concurrent callers included', async () => {
    const mcp = connector();
    const config = changing();
    const lists = await Promise.all([mcp.listTools('s', config), mcp.listTools('s', config), mcp.listTools('s', config)]);
    for (const list of lists) expect(list.map((t) => t.name)).toEqual(['listed', 'grow']);
    expect(await names(mcp, 's', config)).toEqual(['listed', 'grow']);
    expect(await listed(mcp, 's', config)).toBe(1);
  });

  it('lists again after the server sends tools/list_changed, and not before', async () => {
    const mcp = connector();
    const config = changing();
    expect(await names(mcp, 's', config)).toEqual(['listed', 'grow']);
    // A change the server does not announce is not seen: the list is the cached one.
    await mcp.callTool('s', config, { name: 'grow', args: { silent: true } });
    expect(await names(mcp, 's', config)).toEqual(['listed', 'grow']);
    expect(await listed(mcp, 's', config)).toBe(1);
    // An announced change is.
    await mcp.callTool('s', config, { name: 'grow', args: {} });
    let latest: string[] = [];
    const poll = async () => {
      latest = await names(mcp, 's', config);
    };
    await poll();
    for (let i = 0; i < 100 && latest.length < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await poll();
    }
    expect(latest).toEqual(['listed', 'grow', 'extra-1', 'extra-2']);
    expect(await listed(mcp, 's', config)).toBe(2);
  });

  it('a changed configuration and a disconnect list on the new connection', async () => {
    const mcp = connector();
    const config = changing();
    expect(await names(mcp, 's', config)).toEqual(['listed', 'grow']);
    await mcp.callTool('s', config, { name: 'grow', args: { silent: true } });
    // Another env is another process: its own, fresh list.
    const changed = changing({ FLAVOUR: 'b' });
    expect(await names(mcp, 's', changed)).toEqual(['listed', 'grow']);
    expect(await listed(mcp, 's', changed)).toBe(1);
    await mcp.callTool('s', changed, { name: 'grow', args: { silent: true } });
    await mcp.disconnect('s');
    expect(await names(mcp, 's', changed)).toEqual(['listed', 'grow']);
    expect(await listed(mcp, 's', changed)).toBe(1);
  });

  it('a caller whose signal fires stops waiting; the shared listing goes on for the others', async () => {
    const mcp = connector();
    const config = changing();
    const stopped = new AbortController();
    const first = mcp.listTools('s', config, { signal: stopped.signal });
    const second = mcp.listTools('s', config);
    stopped.abort();
    await expect(first).rejects.toMatchObject({ code: 'aborted' });
    expect((await second).map((t) => t.name)).toEqual(['listed', 'grow']);
  });
});
