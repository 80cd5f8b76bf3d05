// MCP tool calls: the latency the connector adds to one call of server-everything's `echo` tool,
// against the SDK's Client calling the same server directly in the same run, for streamable
// HTTP (one server process, a session each) and stdio (a process each). Warm connections, 20
// warm-up calls each way, then 300 calls each way, alternating. Needs the built package
// (`pnpm --filter @agent-platform/mcp build`).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMcpConnector } from '@agent-platform/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const require = createRequire(import.meta.url);
const EVERYTHING = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');
// server-everything listens on every interface; this preload keeps it on 127.0.0.1.
const LOOPBACK = fileURLToPath(new URL('../packages/mcp/test/fixtures/loopback.cjs', import.meta.url));
const WARM_UP = 20;
const CALLS = 300;

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const round = (ms) => Math.round(ms * 1000) / 1000;

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** server-everything over streamable HTTP on 127.0.0.1 (a child process): its `/mcp` URL and a stop(). */
export async function startHttpEverything() {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', LOOPBACK, EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  for (let i = 0; i < 300; i++) {
    const up = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => child.kill('SIGKILL') };
}

async function compare(direct, viaConnector) {
  const call = { name: 'echo', arguments: { message: 'bench' } };
  const directCall = async () => {
    const result = await direct.callTool(call);
    if (result.content[0]?.text !== 'Echo: bench') throw new Error(`direct: ${JSON.stringify(result)}`);
  };
  const connectorCall = async () => {
    const result = await viaConnector();
    if (result.text !== 'Echo: bench') throw new Error(`connector: ${JSON.stringify(result)}`);
  };
  for (let i = 0; i < WARM_UP; i++) {
    await directCall();
    await connectorCall();
  }
  const directMs = [];
  const connectorMs = [];
  for (let i = 0; i < CALLS; i++) {
    // Alternate which goes first, so neither always runs right after the other.
    const order = i % 2 === 0 ? [directCall, connectorCall] : [connectorCall, directCall];
    for (const fn of order) {
      const started = performance.now();
      await fn();
      (fn === directCall ? directMs : connectorMs).push(performance.now() - started);
    }
  }
  const directP50 = percentile(directMs, 50);
  const connectorP50 = percentile(connectorMs, 50);
  return {
    directP50: round(directP50),
    directP99: round(percentile(directMs, 99)),
    connectorP50: round(connectorP50),
    connectorP99: round(percentile(connectorMs, 99)),
    addedP50: round(connectorP50 - directP50),
    calls: CALLS,
  };
}

const clientInfo = { name: 'bench-direct', version: '0.0.0' };

async function streamableHttp() {
  const server = await startHttpEverything();
  const client = new Client(clientInfo, { capabilities: {} });
  const mcp = createMcpConnector();
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    const config = { transport: 'http', url: server.url };
    return await compare(client, () => mcp.callTool('bench-http', config, { name: 'echo', args: { message: 'bench' } }));
  } finally {
    await client.close();
    await mcp.close();
    server.stop();
  }
}

async function stdio() {
  const client = new Client(clientInfo, { capabilities: {} });
  const mcp = createMcpConnector({ allowStdio: true });
  try {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'pipe' }));
    const config = { transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'] };
    return await compare(client, () => mcp.callTool('bench-stdio', config, { name: 'echo', args: { message: 'bench' } }));
  } finally {
    await client.close();
    await mcp.close();
  }
}

export async function mcpCalls() {
  return {
    name: "MCP tool call (server-everything echo), ms: SDK Client direct vs through @agent-platform/mcp's connector, warm",
    streamableHttp: await streamableHttp(),
    stdio: await stdio(),
    target: 'addedP50 <= 2 ms',
  };
}
