import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuardedFetch, createOutboundPolicy, type McpConnector, type McpServerConfig, PlatformError } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as exported from '../src/index.js';
import { createMcpConnector } from '../src/index.js';
import { freePort, rejection, TEST_SERVER } from './helpers.js';

/**
 * What the connector refuses or reports without a working MCP server: the outbound policy,
 * closed ports, HTTP servers that are not MCP, backoff, closing (the stdio permission is in
 * stdio-permission.test.ts). Only 127.0.0.1 is contacted; `plain` counts every connection made
 * to it.
 */

let plain: Server;
let base: string;
let connections = 0;
const authorizations: (string | undefined)[] = [];
let closedPort: number;
const connectors: McpConnector[] = [];

beforeAll(async () => {
  plain = createServer((req, res) => {
    const path = req.url ?? '/';
    authorizations.push(req.headers.authorization);
    if (path.startsWith('/html')) res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Hello</body></html>');
    else if (path.startsWith('/json')) res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
    else if (path.startsWith('/badjson')) res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc": ');
    else if (path.startsWith('/hang'))
      return; // accepts, never answers
    else res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
  });
  plain.on('connection', () => connections++);
  await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  closedPort = await freePort();
});

afterAll(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  plain.closeAllConnections();
  await new Promise<void>((resolve) => plain.close(() => resolve()));
});

function connector(options: Parameters<typeof createMcpConnector>[0] = {}): McpConnector {
  const created = createMcpConnector(options);
  connectors.push(created);
  return created;
}

const stdioConfig: McpServerConfig = { transport: 'stdio', command: process.execPath, args: [TEST_SERVER, 'stdio'] };

describe('configurations', () => {
  it('a configuration without a command or url is invalid', async () => {
    const mcp = connector({ allowStdio: true });
    await rejection(mcp.probe({ transport: 'stdio' }), 'invalid_request', 'An MCP server with transport stdio needs a command');
    await rejection(mcp.probe({ transport: 'http' }), 'invalid_request', 'An MCP server with transport http needs a url');
    await rejection(mcp.probe({ transport: 'sse', url: 'ftp://127.0.0.1/x' }), 'invalid_request', /only http and https URLs/);
    await rejection(mcp.detectTransport('not a url'), 'invalid_request', 'Invalid MCP server URL: not a url');
  });
});

describe('outbound policy', () => {
  it('a refusal by the fetch passes through unchanged, and nothing reaches the server', async () => {
    const policyRefusal = new PlatformError('invalid_request', 'Refused to connect to 127.0.0.1: test policy');
    const mcp = connector({ fetch: () => Promise.reject(policyRefusal) });
    const before = connections;
    const http: McpServerConfig = { transport: 'http', url: `${base}/mcp` };
    const sse: McpServerConfig = { transport: 'sse', url: `${base}/sse` };
    await expect(mcp.probe(http)).rejects.toBe(policyRefusal);
    await expect(mcp.probe(sse)).rejects.toBe(policyRefusal);
    await expect(mcp.listTools('p', http)).rejects.toBe(policyRefusal);
    await expect(mcp.callTool('p2', sse, { name: 'x', args: {} })).rejects.toBe(policyRefusal);
    await expect(mcp.detectTransport(`${base}/mcp`)).rejects.toBe(policyRefusal);
    expect(connections).toBe(before);
  });

  it.each([
    ['by default', {}],
    ['with an allow-list only', { allowlistOnly: true }],
    ['when another port of it is allowed', { allowedHosts: ['127.0.0.1:1'] }],
  ])("core's guarded fetch refuses loopback %s, naming the --allow-host entry, before connecting", async (_, options) => {
    const fetch = createGuardedFetch(createOutboundPolicy(options));
    const mcp = connector({ fetch });
    const before = connections;
    const port = new URL(base).port;
    const refused = new RegExp(`^Refused to connect to 127\\.0\\.0\\.1: .*allow it with --allow-host 127\\.0\\.0\\.1:${port}$`);
    await rejection(mcp.probe({ transport: 'http', url: `${base}/mcp` }), 'invalid_request', refused);
    await rejection(mcp.probe({ transport: 'sse', url: `${base}/sse` }), 'invalid_request', refused);
    await rejection(mcp.listTools('g', { transport: 'http', url: `${base}/mcp` }), 'invalid_request', refused);
    await rejection(mcp.detectTransport(`${base}/mcp`), 'invalid_request', refused);
    expect(connections).toBe(before);
    await fetch.close();
  });
});

describe('nothing there, or not MCP', () => {
  it('a closed port is unavailable, naming the URL without credentials', async () => {
    const mcp = connector();
    const url = `http://127.0.0.1:${closedPort}/mcp`;
    await rejection(mcp.probe({ transport: 'http', url }), 'unavailable', `MCP server at ${url} could not be reached: connection refused`);
    await rejection(
      mcp.probe({ transport: 'sse', url: `http://127.0.0.1:${closedPort}/sse` }),
      'unavailable',
      `MCP server at http://127.0.0.1:${closedPort}/sse could not be reached: connection refused`,
    );
    const secret = await rejection(mcp.probe({ transport: 'http', url: `http://user:s3cret@127.0.0.1:${closedPort}/mcp?token=abc` }), 'unavailable');
    expect(secret.message).toBe(`MCP server at ${url} could not be reached: connection refused`);
  });

  it('credentials in the URL are sent as Basic authorization (fetch refuses them in URLs), unless a header says otherwise', async () => {
    const mcp = connector();
    authorizations.length = 0;
    await rejection(mcp.probe({ transport: 'http', url: `http://us%40er:p%3Ass@${base.slice(7)}/json` }), 'upstream_error');
    expect(authorizations).toEqual([`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`]);
    authorizations.length = 0;
    await rejection(mcp.probe({ transport: 'sse', url: `http://u:p@${base.slice(7)}/json`, headers: { Authorization: 'Bearer t' } }), 'upstream_error');
    expect(authorizations).toEqual(['Bearer t']);
    authorizations.length = 0;
    await mcp.detectTransport(`http://u:p@${base.slice(7)}/json`);
    expect(authorizations).toEqual([`Basic ${Buffer.from('u:p').toString('base64')}`, `Basic ${Buffer.from('u:p').toString('base64')}`]);
  });

  it('the shared connection backs off: fail fast, then 0.5 s, then 1 s between attempts', async () => {
    const mcp = connector();
    const config: McpServerConfig = { transport: 'http', url: `http://127.0.0.1:${closedPort}/mcp` };
    await rejection(mcp.listTools('b', config), 'unavailable', /could not be reached: connection refused$/);
    const fast = await rejection(mcp.callTool('b', config, { name: 'x', args: {} }), 'unavailable', /could not be reached: connection refused\. Retrying in 0\.\d s\.$/);
    expect(fast.details?.retryInMs).toBeGreaterThan(0);
    expect(fast.details?.retryInMs).toBeLessThanOrEqual(500);
    await new Promise((resolve) => setTimeout(resolve, 550));
    await rejection(mcp.listTools('b', config), 'unavailable', /could not be reached: connection refused$/); // a real attempt
    const slower = await rejection(mcp.listTools('b', config), 'unavailable', /Retrying in (1\.0|0\.\d) s\.$/);
    expect(slower.details?.retryInMs).toBeGreaterThan(500); // doubled: the first wait was at most 500 ms
    // Disconnecting forgets the backoff.
    await mcp.disconnect('b');
    await rejection(mcp.listTools('b', config), 'unavailable', /could not be reached: connection refused$/);
  });

  it('HTTP 404, HTML, JSON that is not JSON-RPC, broken JSON: upstream_error', async () => {
    const mcp = connector();
    await rejection(mcp.probe({ transport: 'http', url: `${base}/missing` }), 'upstream_error', `MCP server at ${base}/missing answered HTTP 404 to connect: is this the MCP endpoint?`);
    await rejection(mcp.probe({ transport: 'sse', url: `${base}/missing` }), 'upstream_error', `MCP server at ${base}/missing answered HTTP 404 to connect: is this the MCP endpoint?`);
    await rejection(mcp.probe({ transport: 'http', url: `${base}/html` }), 'upstream_error', `MCP server at ${base}/html is not an MCP server (Unexpected content type: text/html)`);
    await rejection(mcp.probe({ transport: 'sse', url: `${base}/html` }), 'upstream_error', `MCP server at ${base}/html is not an MCP server (Invalid content type, expected "text/event-stream")`);
    await rejection(mcp.probe({ transport: 'http', url: `${base}/json` }), 'upstream_error', new RegExp(`^MCP server at ${base}/json did not answer with MCP \\(JSON-RPC\\)`));
    await rejection(mcp.probe({ transport: 'http', url: `${base}/badjson` }), 'upstream_error', new RegExp(`^MCP server at ${base}/badjson did not answer with MCP \\(JSON-RPC\\)`));
  });

  it('a server that accepts and never answers: timeout at connectTimeoutMs', async () => {
    const mcp = connector({ connectTimeoutMs: 300 });
    for (const transport of ['http', 'sse'] as const) {
      const started = Date.now();
      await rejection(mcp.probe({ transport, url: `${base}/hang` }), 'timeout', `MCP server at ${base}/hang did not answer within 300 ms`);
      expect(Date.now() - started).toBeLessThan(1500);
    }
  });

  it('detectTransport: nothing on a closed port, a 404 or HTML server, or a silent one (within detectTimeoutMs)', async () => {
    const mcp = connector({ detectTimeoutMs: 5_000 });
    const none = { supportedTypes: [], recommended: undefined };
    // Refused at once, not at the deadline: as soon as a server's 404 (the baseline, measured
    // here too), the best of three each.
    const fastest = async (url: string) => {
      let best = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        const began = Date.now();
        expect(await mcp.detectTransport(url)).toEqual(none);
        best = Math.min(best, Date.now() - began);
      }
      return best;
    };
    const refused = await fastest(`http://127.0.0.1:${closedPort}/mcp`);
    const answered = await fastest(`${base}/missing`);
    expect(refused / Math.max(answered, 50)).toBeLessThan(10);
    expect(await mcp.detectTransport(`${base}/html`)).toEqual(none);
    expect(await mcp.detectTransport(`${base}/json`)).toEqual(none);
    const started = Date.now();
    expect(await connector({ detectTimeoutMs: 400 }).detectTransport(`${base}/hang`)).toEqual(none);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe('the connector itself', () => {
  it('tool arguments must be an object', async () => {
    const mcp = connector({ allowStdio: true });
    await rejection(mcp.callTool('a', stdioConfig, { name: 'pid', args: [1, 2] }), 'invalid_request', 'The arguments of MCP tool "pid" must be an object');
    await rejection(mcp.callTool('a', stdioConfig, { name: 'pid', args: 'x' }), 'invalid_request', 'The arguments of MCP tool "pid" must be an object');
  });

  it('an aborted call rejects with aborted', async () => {
    const mcp = connector({ allowStdio: true });
    const controller = new AbortController();
    const call = mcp.callTool('a', stdioConfig, { name: 'hang', args: {}, signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    await rejection(call, 'aborted', `MCP tool "hang" on server command "${process.execPath}" was aborted`);
    expect((await mcp.callTool('a', stdioConfig, { name: 'fail', args: {} })).isError).toBe(true); // the connection stays
  });

  it('a call waits for a slow connect only up to its own timeoutMs; the connect goes on for others', async () => {
    const mcp = connector({ connectTimeoutMs: 2000 });
    const config: McpServerConfig = { transport: 'http', url: `${base}/hang` };
    const started = Date.now();
    const other = mcp.listTools('w', config);
    await rejection(mcp.callTool('w', config, { name: 'echo', args: {}, timeoutMs: 200 }), 'timeout', `MCP tool "echo" on server at ${base}/hang did not answer within 200 ms (still connecting)`);
    const call = Date.now() - started;
    await rejection(other, 'timeout', `MCP server at ${base}/hang did not answer within 2000 ms`);
    const connect = Date.now() - started;
    // The call gave up at its own 200 ms, a tenth of the connect's 2000: waiting for the connect
    // would take as long as it (late timers make both later alike).
    expect(call).toBeLessThan(connect / 2);
  });

  it('an already aborted signal rejects with aborted', async () => {
    const mcp = connector({ allowStdio: true });
    const signal = AbortSignal.abort();
    await rejection(mcp.callTool('a', stdioConfig, { name: 'pid', args: {}, signal }), 'aborted');
    await rejection(mcp.listTools('a', stdioConfig, { signal }), 'aborted');
    await rejection(mcp.probe(stdioConfig, { signal }), 'aborted');
    await rejection(mcp.detectTransport(`${base}/mcp`, { signal }), 'aborted');
  });

  it('close() closes everything, twice is fine, and later calls are refused', async () => {
    const mcp = createMcpConnector({ allowStdio: true });
    await mcp.listTools('a', stdioConfig);
    await mcp.close();
    await mcp.close();
    await rejection(mcp.listTools('a', stdioConfig), 'unavailable', 'The MCP connector is closed');
    await rejection(mcp.detectTransport(`${base}/mcp`), 'unavailable', 'The MCP connector is closed');
    await mcp.disconnect('a'); // never rejects
  });

  it('exports', () => {
    expect(Object.keys(exported).sort()).toEqual(['createAgentMcpServer', 'createMcpConnector', 'formatCommandLine', 'handleAgentMcpRequest', 'parseStdioEntry', 'splitCommandLine']);
  });
});
