import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createGuardedFetch, createOutboundPolicy, type McpConnector, type McpServerConfig } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpConnector } from '../src/index.js';
import { EVERYTHING, eventually, type ServerProcess, SPAWN_LOG, spawned, startEverything } from './helpers.js';

/**
 * The connector against the real reference server, @modelcontextprotocol/server-everything, in
 * its three modes: stdio (a process per connection), streamable HTTP (`/mcp`) and legacy SSE
 * (`/sse`), the HTTP ones bound to 127.0.0.1 by a preload and started once for the file.
 */

let http: ServerProcess;
let sse: ServerProcess;
let dir: string;
const connectors: McpConnector[] = [];

beforeAll(async () => {
  [http, sse] = await Promise.all([startEverything('streamableHttp'), startEverything('sse')]);
  dir = mkdtempSync(join(tmpdir(), 'mcp-everything-'));
});

afterAll(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  await Promise.all([http?.stop(), sse?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

function connector(options: Parameters<typeof createMcpConnector>[0] = {}): McpConnector {
  const created = createMcpConnector({ allowStdio: true, ...options });
  connectors.push(created);
  return created;
}

let logs = 0;
/** stdio server-everything, each process it starts logged to a fresh file (returned). */
function stdioConfig(): { config: McpServerConfig; log: string } {
  const log = join(dir, `spawns-${logs++}.log`);
  return { config: { transport: 'stdio', command: process.execPath, args: ['-r', SPAWN_LOG, EVERYTHING, 'stdio'], env: { SPAWN_LOG: log } }, log };
}
const httpConfig = (): McpServerConfig => ({ transport: 'http', url: `http://127.0.0.1:${http.port}/mcp` });
const sseConfig = (): McpServerConfig => ({ transport: 'sse', url: `http://127.0.0.1:${sse.port}/sse` });
const httpSessions = () => http.count(/Session initialized with ID/);
const sseSessions = () => sse.count(/Client Connected:/);

const modes = [
  { name: 'stdio', config: () => stdioConfig().config },
  { name: 'streamable HTTP', config: httpConfig },
  { name: 'SSE', config: sseConfig },
] as const;

describe.each(modes)('server-everything over $name', ({ config }) => {
  it('probe: says what the server is and lists its tools', async () => {
    const probe = await connector().probe(config());
    expect(probe.serverInfo).toEqual({ name: 'mcp-servers/everything', version: '2.0.0' });
    const names = probe.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-structured-content', 'get-resource-reference']));
    const echo = probe.tools.find((t) => t.name === 'echo');
    expect(echo?.description).toBe('Echoes back the input string');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] });
  });

  it('callTool: text of echo and get-sum, image summarised, resources by their text, structured content', async () => {
    const mcp = connector();
    const cfg = config();
    const call = (name: string, args: unknown) => mcp.callTool('s1', cfg, { name, args });
    expect(await call('echo', { message: 'hello there' })).toEqual({ text: 'Echo: hello there', isError: false });
    expect(await call('get-sum', { a: 2, b: 3 })).toEqual({ text: 'The sum of 2 and 3 is 5.', isError: false });
    const { MCP_TINY_IMAGE } = (await import(pathToFileURL(join(EVERYTHING, '../tools/get-tiny-image.js')).href)) as { MCP_TINY_IMAGE: string };
    expect(await call('get-tiny-image', {})).toEqual({
      text: `Here's the image you requested:\n[image: image/png, ${Buffer.from(MCP_TINY_IMAGE, 'base64').length} bytes]\nThe image above is the MCP logo.`,
      isError: false,
    });
    const reference = await call('get-resource-reference', { resourceType: 'Text', resourceId: 1 });
    expect(reference.text.split('\n')[0]).toBe('Returning resource reference for Resource 1:');
    expect(reference.text).toMatch(/^Resource 1: This is a plaintext resource created at .+$/m); // the embedded resource's text
    expect(reference.text.split('\n').at(-1)).toBe('You can access this resource using the URI: demo://resource/dynamic/text/1');
    // The tool's content holds the JSON as text; structuredContent is only used when no part is text.
    expect(await call('get-structured-content', { location: 'Chicago' })).toEqual({
      text: JSON.stringify({ temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 }),
      isError: false,
    });
    // Arguments the tool's schema refuses: the SDK's McpServer answers isError, not a JSON-RPC error.
    const invalid = await call('get-sum', { a: 'two' });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toMatch(/Input validation error/);
  });
});

describe('one shared connection per server', () => {
  it('stdio: concurrent listTools and callTool start one process; disconnect and call again starts another', async () => {
    const mcp = connector();
    const { config, log } = stdioConfig();
    const results = await Promise.all([
      mcp.listTools('a', config),
      ...Array.from({ length: 5 }, (_, i) => mcp.callTool('a', config, { name: 'echo', args: { message: `m${i}` } })),
      mcp.listTools('a', config),
    ]);
    expect(results.slice(1, 6).map((r) => (r as { text: string }).text)).toEqual(['Echo: m0', 'Echo: m1', 'Echo: m2', 'Echo: m3', 'Echo: m4']);
    expect(spawned(log)).toHaveLength(1);
    await mcp.disconnect('a');
    await mcp.disconnect('a'); // twice is fine
    expect(await mcp.callTool('a', config, { name: 'echo', args: { message: 'again' } })).toEqual({ text: 'Echo: again', isError: false });
    expect(spawned(log)).toHaveLength(2);
  });

  it('streamable HTTP: one session for concurrent callers, a new one after disconnect, the old one ended', async () => {
    const mcp = connector();
    const before = httpSessions();
    const config = httpConfig();
    await Promise.all([mcp.listTools('h', config), ...Array.from({ length: 5 }, () => mcp.callTool('h', config, { name: 'get-sum', args: { a: 1, b: 1 } }))]);
    await mcp.listTools('h', config);
    expect(httpSessions() - before).toBe(1);
    const terminated = http.count(/Received session termination request/);
    await mcp.disconnect('h');
    expect(http.count(/Received session termination request/)).toBe(terminated + 1); // DELETE sent before disconnect resolves
    expect((await mcp.callTool('h', config, { name: 'echo', args: { message: 'back' } })).text).toBe('Echo: back');
    expect(httpSessions() - before).toBe(2);
  });

  it('SSE: one event stream for concurrent callers, a new one after disconnect', async () => {
    const mcp = connector();
    const before = sseSessions();
    const config = sseConfig();
    await Promise.all([mcp.listTools('s', config), ...Array.from({ length: 5 }, () => mcp.callTool('s', config, { name: 'echo', args: { message: 'x' } }))]);
    expect(sseSessions() - before).toBe(1);
    await mcp.disconnect('s');
    await eventually(() => sse.count(/Client Disconnected/) >= 1);
    expect((await mcp.callTool('s', config, { name: 'echo', args: { message: 'y' } })).text).toBe('Echo: y');
    expect(sseSessions() - before).toBe(2);
  });

  it('a changed configuration for the same id reconnects; separate ids get separate connections', async () => {
    const mcp = connector();
    const before = httpSessions();
    await mcp.listTools('c', httpConfig());
    await mcp.listTools('c', { ...httpConfig() }); // same content: reused
    expect(httpSessions() - before).toBe(1);
    await mcp.listTools('c', { ...httpConfig(), headers: { 'x-test': '1' } });
    expect(httpSessions() - before).toBe(2);
    await mcp.listTools('other', httpConfig());
    expect(httpSessions() - before).toBe(3);
  });

  it('a probe opens its own session and ends it', async () => {
    const before = http.count(/Received session termination request/);
    await connector().probe(httpConfig());
    await eventually(() => http.count(/Received session termination request/) === before + 1);
  });
});

describe('detectTransport', () => {
  it('the /mcp endpoint answers streamable HTTP only, and the detection session is ended', async () => {
    const sessions = httpSessions();
    const ended = http.count(/Received session termination request/);
    expect(await connector().detectTransport(`http://127.0.0.1:${http.port}/mcp`)).toEqual({ supportedTypes: ['http'], recommended: 'http' });
    expect(httpSessions()).toBe(sessions + 1);
    expect(http.count(/Received session termination request/)).toBe(ended + 1);
  });

  it('the /sse endpoint answers the legacy SSE handshake', async () => {
    const found = await connector().detectTransport(`http://127.0.0.1:${sse.port}/sse`);
    expect(found.supportedTypes).toContain('sse');
    expect(found).toEqual({ supportedTypes: ['sse'], recommended: 'sse' });
  });
});

describe('through core guarded fetch (the two servers allowed by host and port, as --allow-host 127.0.0.1:PORT does)', () => {
  it('probe, call and detect over streamable HTTP and SSE', async () => {
    const fetch = createGuardedFetch(createOutboundPolicy({ allowedHosts: [`127.0.0.1:${http.port}`, `127.0.0.1:${sse.port}`] }));
    const mcp = connector({ fetch });
    try {
      expect((await mcp.probe(httpConfig())).serverInfo.name).toBe('mcp-servers/everything');
      expect((await mcp.probe(sseConfig())).serverInfo.name).toBe('mcp-servers/everything');
      expect((await mcp.callTool('g1', httpConfig(), { name: 'echo', args: { message: 'guarded' } })).text).toBe('Echo: guarded');
      expect((await mcp.callTool('g2', sseConfig(), { name: 'echo', args: { message: 'guarded' } })).text).toBe('Echo: guarded');
      expect((await mcp.detectTransport(`http://127.0.0.1:${http.port}/mcp`)).recommended).toBe('http');
      expect((await mcp.detectTransport(`http://127.0.0.1:${sse.port}/sse`)).recommended).toBe('sse');
    } finally {
      await mcp.close(); // before the pools: an open event stream would keep fetch.close() waiting
      await fetch.close();
    }
  });
});
