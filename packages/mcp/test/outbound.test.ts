import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGuardedFetch, createOutboundPolicy, type GuardedFetch, type HostResolver, type McpConnector } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRIVATE_TRAP, startTrap, type Trap, trapsAvailable } from '../../core/test/traps.js';
import { createMcpConnector } from '../src/index.js';
import { freePort, type ServerProcess, startServer, TEST_SERVER } from './helpers.js';

/**
 * Every request of the HTTP transports goes through the fetch the connector is given, the POST
 * endpoint an SSE server announces included. The servers are reached as `mcp.test`, a name only
 * the guarded fetch's own resolver knows: a request made around it could not reach them.
 */

let sse: ServerProcess;
let http: ServerProcess;
const fetches: GuardedFetch[] = [];
const connectors: McpConnector[] = [];

beforeAll(async () => {
  const [ssePort, httpPort] = [await freePort(), await freePort()];
  [sse, http] = await Promise.all([startServer([TEST_SERVER, 'sse', String(ssePort)], ssePort), startServer([TEST_SERVER, 'http', String(httpPort)], httpPort)]);
});
afterAll(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  await Promise.all(fetches.map((f) => f.close()));
  await Promise.all([sse?.stop(), http?.stop()]);
});

/** A connector over a guarded fetch resolving `mcp.test` with `answer`, recording `METHOD path` of every request. */
function setUp(answer: () => string) {
  const requests: string[] = [];
  const lookup: HostResolver = async (host) => {
    if (host !== 'mcp.test') throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return [{ address: answer(), family: 4 }];
  };
  // 127.0.0.1 (the test servers) allowed as `--allow-host 127.0.0.1` does; the trap on 10.0.0.1 stays refused.
  const guarded = createGuardedFetch(createOutboundPolicy({ allowedHosts: ['127.0.0.1'] }), { lookup });
  fetches.push(guarded);
  const mcp = createMcpConnector({
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      requests.push(`${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname}`);
      return guarded(input, init);
    },
  });
  connectors.push(mcp);
  return { mcp, requests };
}

describe('MCP requests go through the given fetch', () => {
  it('SSE: the stream and the POSTs to the endpoint the server announces', async () => {
    const { mcp, requests } = setUp(() => '127.0.0.1');
    const tools = await mcp.listTools('sse', { transport: 'sse', url: `http://mcp.test:${sse.port}/sse` });
    expect(tools.length).toBeGreaterThan(0);
    expect(requests).toEqual(expect.arrayContaining(['GET /sse', 'POST /message']));
  });

  it('streamable HTTP: every request', async () => {
    const { mcp, requests } = setUp(() => '127.0.0.1');
    const tools = await mcp.listTools('http', { transport: 'http', url: `http://mcp.test:${http.port}/mcp` });
    expect(tools.length).toBeGreaterThan(0);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    expect(requests.every((r) => r.endsWith(' /mcp'))).toBe(true);
  });
});

describe.skipIf(!trapsAvailable)('MCP: the announced endpoint is checked like any URL (trap on 10.0.0.1)', () => {
  let trap: Trap;
  let announcing: Server;
  let announcingPort: number;
  beforeAll(async () => {
    trap = await startTrap(PRIVATE_TRAP, sse.port);
    // An SSE server that announces its message endpoint at the trap's address.
    announcing = createServer((req, res) => {
      if (req.url?.startsWith('/sse')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(`event: endpoint\ndata: http://10.0.0.1:${trap.port}/message?sessionId=x\n\n`);
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => announcing.listen(0, '127.0.0.1', resolve));
    announcingPort = (announcing.address() as AddressInfo).port;
  });
  afterAll(async () => {
    announcing.closeAllConnections();
    await new Promise<void>((resolve) => announcing.close(() => resolve()));
    await trap.close();
  });

  it('a host that rebinds to 10.0.0.1 after the stream opened: the POST is refused, nothing reaches the trap', async () => {
    let lookups = 0;
    const { mcp, requests } = setUp(() => (lookups++ === 0 ? '127.0.0.1' : PRIVATE_TRAP));
    await expect(mcp.listTools('rebind', { transport: 'sse', url: `http://mcp.test:${sse.port}/sse` })).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/^Refused to connect to mcp\.test \(10\.0\.0\.1\): private address/),
    });
    expect(requests).toEqual(['GET /sse', 'POST /message']);
    expect(trap.connections).toBe(0);
  });

  it('an endpoint announced at another address is never contacted', async () => {
    const { mcp } = setUp(() => '127.0.0.1');
    await expect(mcp.listTools('elsewhere', { transport: 'sse', url: `http://127.0.0.1:${announcingPort}/sse` })).rejects.toThrow();
    expect(trap.connections).toBe(0);
  });
});
