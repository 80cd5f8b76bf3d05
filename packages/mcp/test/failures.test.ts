import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpConnector, McpServerConfig } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpConnector } from '../src/index.js';
import { freePort, rejection, type ServerProcess, spawned, startServer, TEST_SERVER } from './helpers.js';

/**
 * Servers that hang, crash, fail and throw: fixtures/test-server.mjs, written with the SDK's
 * McpServer (stdio and streamable HTTP on 127.0.0.1) and its low-level Server.
 */

let dir: string;
const connectors: McpConnector[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-failures-'));
});

afterAll(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  rmSync(dir, { recursive: true, force: true });
});

function connector(options: Parameters<typeof createMcpConnector>[0] = {}): McpConnector {
  const created = createMcpConnector({ allowStdio: true, ...options });
  connectors.push(created);
  return created;
}

let logs = 0;
function stdio(mode = 'stdio', env: Record<string, string> = {}): { config: McpServerConfig; log: string } {
  const log = join(dir, `spawns-${logs++}.log`);
  return { config: { transport: 'stdio', command: process.execPath, args: [TEST_SERVER, mode], env: { SPAWN_LOG: log, ...env } }, log };
}

const elapsed = async <T>(work: Promise<T>): Promise<{ ms: number; outcome: PromiseSettledResult<T> }> => {
  const started = Date.now();
  const [outcome] = await Promise.allSettled([work]);
  return { ms: Date.now() - started, outcome: outcome as PromiseSettledResult<T> };
};

describe('stdio test server (McpServer)', () => {
  it('a hung tool times out at its timeoutMs while a concurrent call on the same connection answers', async () => {
    const mcp = connector();
    const { config, log } = stdio();
    const pid = (await mcp.callTool('t', config, { name: 'pid', args: {} })).text;
    const hung = elapsed(mcp.callTool('t', config, { name: 'hang', args: {}, timeoutMs: 400 }));
    const during = await mcp.callTool('t', config, { name: 'pid', args: {} });
    expect(during).toEqual({ text: pid, isError: false });
    const { ms, outcome } = await hung;
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(1500);
    await rejection(Promise.reject((outcome as PromiseRejectedResult).reason), 'timeout', /^MCP tool "hang" on server command ".*node.*" did not answer within 400 ms$/);
    // The connection stays: same process, no new spawn.
    expect((await mcp.callTool('t', config, { name: 'pid', args: {} })).text).toBe(pid);
    expect(spawned(log)).toEqual([pid]);
  });

  it('a crash mid-call is unavailable (with the stderr tail), fails fast during the backoff, then a new process answers', async () => {
    const mcp = connector();
    const { config, log } = stdio();
    const first = (await mcp.callTool('c', config, { name: 'pid', args: {} })).text;
    const { ms, outcome } = await elapsed(mcp.callTool('c', config, { name: 'crash', args: {}, timeoutMs: 10_000 }));
    expect(ms).toBeLessThan(2000); // noticed when the process exits, not at the timeout
    const crash = await rejection(
      Promise.reject((outcome as PromiseRejectedResult).reason),
      'unavailable',
      /^MCP server command ".*" closed the connection during tool "crash"\. Its stderr ended with: crashing on purpose$/,
    );
    expect(crash.retryable).toBe(true);
    const fast = await rejection(mcp.callTool('c', config, { name: 'pid', args: {} }), 'unavailable', /Retrying in 0\.\d s\.$/);
    expect(fast.details?.retryInMs).toBeLessThanOrEqual(500);
    await new Promise((resolve) => setTimeout(resolve, 550));
    const second = (await mcp.callTool('c', config, { name: 'pid', args: {} })).text;
    expect(second).not.toBe(first);
    expect(spawned(log)).toEqual([first, second]);
  });

  it('isError from the tool resolves with isError: true; a throwing tool is turned into isError by the SDK', async () => {
    const mcp = connector();
    const { config } = stdio();
    expect(await mcp.callTool('e', config, { name: 'fail', args: {} })).toEqual({ text: 'this tool failed on purpose', isError: true });
    expect(await mcp.callTool('e', config, { name: 'throw', args: {} })).toEqual({ text: 'boom', isError: true });
    // An unknown tool: McpServer answers isError too (not a JSON-RPC error).
    expect(await mcp.callTool('e', config, { name: 'nope', args: {} })).toEqual({ text: 'MCP error -32602: Tool nope not found', isError: true });
  });

  it('the server gets the SDK default environment plus config.env, never the service environment', async () => {
    process.env.AP_TEST_SECRET = 'do-not-leak';
    try {
      const { config } = stdio('stdio', { GREETING: 'hello' });
      const env = JSON.parse((await connector().callTool('v', config, { name: 'env', args: {} })).text) as Record<string, string>;
      expect(env.GREETING).toBe('hello');
      expect(env.AP_TEST_SECRET).toBeUndefined();
      const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'GREETING', 'SPAWN_LOG']);
      expect(Object.keys(env).filter((name) => !allowed.has(name))).toEqual([]);
    } finally {
      delete process.env.AP_TEST_SECRET;
    }
  });

  it('a process that exits before speaking: unavailable with its stderr', async () => {
    await rejection(
      connector().probe(stdio('exit').config),
      'unavailable',
      /^MCP server command ".*" closed the connection before it was initialised\. Its stderr ended with: exiting on purpose before speaking$/,
    );
  });

  it('a process that prints something that is not JSON-RPC: upstream_error', async () => {
    // The connect waits out its timeout (a server may print a banner before it answers), then names
    // the garbage it saw. The timeout leaves a slow process start on a loaded machine time to print.
    const { ms, outcome } = await elapsed(connector({ connectTimeoutMs: 4000 }).probe(stdio('garbage').config));
    expect(ms).toBeLessThan(8000);
    await rejection(Promise.reject((outcome as PromiseRejectedResult).reason), 'upstream_error', /^MCP server command ".*" did not answer with MCP \(JSON-RPC\): /);
  });

  it('a command that does not exist: unavailable, could not be started', async () => {
    await rejection(
      connector().probe({ transport: 'stdio', command: 'agent-platform-no-such-command' }),
      'unavailable',
      'MCP server command "agent-platform-no-such-command" could not be started: command not found',
    );
  });
});

describe('stdio low-level server', () => {
  it('listTools follows nextCursor; a title stands in for a missing description', async () => {
    const tools = await connector().listTools('l', stdio('lowlevel').config);
    expect(tools.map((t) => [t.name, t.description])).toEqual([
      ['tool-0', 'Tool 0'],
      ['tool-1', 'Tool 1'],
      ['tool-2', 'Tool 2'],
    ]);
    expect(tools[0]?.inputSchema).toEqual({ type: 'object', properties: { n: { type: 'number' } } });
  });

  it('every content type as text; structuredContent as JSON when no part is text', async () => {
    const mcp = connector();
    const { config } = stdio('lowlevel');
    expect(await mcp.callTool('r', config, { name: 'rich', args: {} })).toEqual({
      text: [
        'first',
        '[image: image/png, 8 bytes]',
        '[audio: audio/wav, 3 bytes]',
        '[resource: file:///notes.txt]',
        'resource text',
        '[resource: file:///b.bin, application/octet-stream, 4 bytes]',
        'last',
      ].join('\n'),
      isError: false,
    });
    expect(await mcp.callTool('r', config, { name: 'structured', args: {} })).toEqual({ text: '{"temperature":21,"unit":"C"}', isError: false });
  });

  it('a JSON-RPC error answer is upstream_error with the server message; the connection stays', async () => {
    const mcp = connector();
    const { config, log } = stdio('lowlevel');
    const error = await rejection(
      mcp.callTool('x', config, { name: 'missing', args: {} }),
      'upstream_error',
      /^MCP server command ".*" answered tool "missing" with an error: no tool called missing$/,
    );
    expect(error.details).toEqual({ rpcCode: -32602 });
    await mcp.callTool('x', config, { name: 'rich', args: {} });
    expect(spawned(log)).toHaveLength(1);
  });
});

describe('streamable HTTP test server', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    const port = await freePort();
    server = await startServer([TEST_SERVER, 'http', String(port)], port);
  });
  afterAll(() => server?.stop());

  it('a hung tool times out while a concurrent call answers', async () => {
    const mcp = connector();
    const config: McpServerConfig = { transport: 'http', url: `http://127.0.0.1:${server.port}/mcp` };
    const hung = elapsed(mcp.callTool('h', config, { name: 'hang', args: {}, timeoutMs: 400 }));
    expect((await mcp.callTool('h', config, { name: 'pid', args: {} })).text).toBe(String(server.child.pid));
    const { ms, outcome } = await hung;
    expect(ms).toBeLessThan(1500);
    await rejection(Promise.reject((outcome as PromiseRejectedResult).reason), 'timeout', `MCP tool "hang" on server at http://127.0.0.1:${server.port}/mcp did not answer within 400 ms`);
    expect(server.count(/^session /)).toBe(1);
  });

  it('a server restarted while idle no longer knows the session: unavailable, then a new session', async () => {
    const mcp = connector();
    const config: McpServerConfig = { transport: 'http', url: `http://127.0.0.1:${server.port}/mcp` };
    await mcp.callTool('r', config, { name: 'pid', args: {} });
    await server.stop();
    server = await startServer([TEST_SERVER, 'http', String(server.port)], server.port);
    await rejection(
      mcp.callTool('r', config, { name: 'pid', args: {} }),
      'unavailable',
      `MCP server at http://127.0.0.1:${server.port}/mcp no longer knows the session (HTTP 404 to tool "pid"); a new one is opened after the backoff`,
    );
    await new Promise((resolve) => setTimeout(resolve, 550));
    expect((await mcp.callTool('r', config, { name: 'pid', args: {} })).text).toBe(String(server.child.pid));
  });

  it('the server dying mid-call is unavailable at once; after a restart and the backoff a new session answers', async () => {
    const mcp = connector();
    const config: McpServerConfig = { transport: 'http', url: `http://127.0.0.1:${server.port}/mcp` };
    await mcp.callTool('d', config, { name: 'pid', args: {} });
    const { ms, outcome } = await elapsed(mcp.callTool('d', config, { name: 'crash', args: {}, timeoutMs: 10_000 }));
    expect(ms).toBeLessThan(2000);
    await rejection(Promise.reject((outcome as PromiseRejectedResult).reason), 'unavailable', `MCP server at http://127.0.0.1:${server.port}/mcp closed the connection during tool "crash".`);
    await rejection(mcp.callTool('d', config, { name: 'pid', args: {} }), 'unavailable', /Retrying in/);
    server = await startServer([TEST_SERVER, 'http', String(server.port)], server.port);
    await new Promise((resolve) => setTimeout(resolve, 550));
    expect((await mcp.callTool('d', config, { name: 'pid', args: {} })).text).toBe(String(server.child.pid));
  });
});

describe('legacy SSE test server', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    const port = await freePort();
    server = await startServer([TEST_SERVER, 'sse', String(port)], port);
  });
  afterAll(() => server?.stop());

  it('a hung tool times out while a concurrent call answers; the server dying mid-call is unavailable at once', async () => {
    const mcp = connector();
    const config: McpServerConfig = { transport: 'sse', url: `http://127.0.0.1:${server.port}/sse` };
    const hung = elapsed(mcp.callTool('s', config, { name: 'hang', args: {}, timeoutMs: 400 }));
    expect((await mcp.callTool('s', config, { name: 'pid', args: {} })).text).toBe(String(server.child.pid));
    expect((await hung).outcome.status).toBe('rejected');
    await rejection(Promise.reject(((await hung).outcome as PromiseRejectedResult).reason), 'timeout');
    const { ms, outcome } = await elapsed(mcp.callTool('s', config, { name: 'crash', args: {}, timeoutMs: 10_000 }));
    expect(ms).toBeLessThan(2000);
    await rejection(Promise.reject((outcome as PromiseRejectedResult).reason), 'unavailable', /^MCP server at http:\/\/127\.0\.0\.1:\d+\/sse closed the connection during tool "crash"\.$/);
    server = await startServer([TEST_SERVER, 'sse', String(server.port)], server.port);
    await new Promise((resolve) => setTimeout(resolve, 550));
    expect((await mcp.callTool('s', config, { name: 'pid', args: {} })).text).toBe(String(server.child.pid));
    expect(server.count(/^session /)).toBe(1);
  });
});
