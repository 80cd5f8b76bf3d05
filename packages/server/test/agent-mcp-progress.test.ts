import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// A project tool's own progress reports, through the official SDK's client over streamable
// HTTP against a real server: relayed as progress notifications while the tool runs.

let s: TestServer;
let projectId: string;
const clients: Client[] = [];

/** Busy waiting: the sandbox has no timers. */
const WAIT = 'const wait = (ms) => { const end = Date.now() + ms; while (Date.now() < end) {} };';

const TOOLS = [
  // Reports, then computes until its time limit stops it: a report seen before the result came while it ran.
  { name: 'endless', code: 'function main() { progress(1, 3, "started"); while (true) {} }', language: 'javascript' },
  { name: 'endless_py', code: 'def main(args):\n    progress(1, 3, "started")\n    while True:\n        pass', language: 'python' },
  // 3 goes back: the protocol wants progress to increase, so it is not relayed.
  { name: 'steps', code: `function main() { ${WAIT} progress(5, 10, "five"); wait(120); progress(3, 10, "back"); wait(120); progress(10, 10, "done"); return "stepped"; }`, language: 'javascript' },
];

beforeAll(async () => {
  s = await startTestServer({ env: { AGENT_PLATFORM_TOOL_TIMEOUT_MS: '2000' } });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Progress', model: 'gpt-test', provider: 'openai' } })).body.project.id;
  for (const tool of TOOLS) {
    const created = await s.call('POST', '/api/tools/create', { body: { projectId, description: tool.name, exposeOverMcp: true, ...tool } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
});
afterAll(async () => {
  await s.stop();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'agent-mcp-progress-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/api/v1/projects/${projectId}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.keyA}` } } }));
  clients.push(client);
  return client;
}

describe("a project tool's progress over its project's MCP server", () => {
  it.each(['endless', 'endless_py'])('%s: relays a report while the tool still runs', async (name) => {
    const client = await connect();
    let settled = false;
    let seen!: (p: Progress) => void;
    const first = new Promise<Progress>((resolve) => {
      seen = resolve;
    });
    const call = client.callTool({ name, arguments: {} }, CallToolResultSchema, { onprogress: (p) => seen(p) }).finally(() => {
      settled = true;
    });
    expect(await first).toEqual({ progress: 1, total: 3, message: 'started' });
    // The tool never ends by itself: its time limit ends it, after the report.
    expect(settled).toBe(false);
    const result = await call;
    expect(result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('longer than 2000 ms') }] });
  });

  it('relays progress, total and message as reported, each notification higher than the last', async () => {
    const client = await connect();
    const seen: Progress[] = [];
    const result = await client.callTool({ name: 'steps', arguments: {} }, CallToolResultSchema, { onprogress: (p) => seen.push(p) });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'stepped' }] });
    expect(seen).toEqual([
      { progress: 5, total: 10, message: 'five' },
      { progress: 10, total: 10, message: 'done' },
    ]);
  });

  it('runs the tool alike for a client that asks for no progress', async () => {
    const client = await connect();
    expect(await client.callTool({ name: 'steps', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'stepped' }] });
  });
});
