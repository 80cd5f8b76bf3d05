import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './helpers.js';

// The MCP project's own conformance suite (`conformance server --url`, 0.1.11: later versions
// need Node 22) against a project's MCP server. Its client sends no headers of ours, so a
// loopback proxy in front of the server adds the owner's key, as a configured MCP client does;
// Host and Origin pass through as the suite sends them.

const run = promisify(execFile);
const resolve = createRequire(import.meta.url).resolve;
const CLI = resolve('@modelcontextprotocol/conformance/dist/index.js');

let s: TestServer;
let proxy: Server;
let url: string;
let projectId: string;

/** Project tools with the names the suite's tool scenarios call, offered over MCP. */
const SUITE_TOOLS = [
  { name: 'test_simple_text', code: 'async function main() { return "This is a simple text response for testing."; }' },
  { name: 'test_error_handling', code: 'async function main() { throw new Error("This tool intentionally returns an error for testing"); }' },
  {
    name: 'test_tool_with_logging',
    code: 'async function main() { console.log("Tool execution started"); console.log("Tool processing data"); console.log("Tool execution completed"); return "done"; }',
  },
  {
    // 0, 50 and 100 of 100, as the scenario asks. Its ~50 ms between reports would be coalesced
    // (at most one report per 100 ms reaches the client): 250 ms, waited without timers (the
    // sandbox has none), leaving room for a loaded machine.
    name: 'test_tool_with_progress',
    code: `function main() {
  const wait = (ms) => { const end = Date.now() + ms; while (Date.now() < end) {} };
  progress(0, 100, "started");
  wait(250);
  progress(50, 100, "half way");
  wait(250);
  progress(100, 100, "done");
  return "Progress reported";
}`,
  },
];

beforeAll(async () => {
  // The proxy first: its origin is the one the server allows (the suite's "valid localhost" request).
  let target = '';
  let key = '';
  proxy = createServer((req, res) => {
    const upstream = new URL(target);
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${key}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    res.on('close', () => forwarded.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as AddressInfo).port;
  s = await startTestServer({ corsOrigins: [`http://localhost:${port}`] });
  target = s.url;
  key = s.keyA;
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Conformance', model: 'gpt-test', provider: 'openai' } })).body.project.id;
  for (const tool of SUITE_TOOLS) {
    const created = await s.call('POST', '/api/tools/create', { body: { projectId, language: 'javascript', description: tool.name, exposeOverMcp: true, ...tool } });
    expect(created.status).toBe(201);
  }
  url = `http://localhost:${port}/api/v1/projects/${projectId}/mcp`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await s.stop();
});

/** The suite's checks of one scenario: each check's id and status. */
async function scenario(name: string): Promise<{ id: string; status: string; errorMessage?: string }[]> {
  const { stdout } = await run(process.execPath, [CLI, 'server', '--url', url, '--scenario', name, '--verbose'], { timeout: 60_000 }).catch((error: { stdout?: string }) => ({
    stdout: error.stdout ?? '',
  }));
  const json = stdout.slice(stdout.indexOf('['), stdout.lastIndexOf(']') + 1);
  return (JSON.parse(json) as { id: string; status: string; errorMessage?: string }[]).map(({ id, status, errorMessage }) => ({ id, status, ...(errorMessage ? { errorMessage } : {}) }));
}

describe('the MCP conformance suite against a project MCP server', () => {
  it.each([
    ['server-initialize'],
    ['ping'],
    ['logging-set-level'],
    ['tools-list'],
    // The suite's tool scenarios call tools by name: here project tools of those names, opted in.
    ['tools-call-simple-text'],
    ['tools-call-error'],
    ['tools-call-with-logging'],
    // A project tool's progress(done, total, message) reaches the client as it runs.
    ['tools-call-with-progress'],
    ['dns-rebinding-protection'],
  ])('passes %s', async (name) => {
    const checks = await scenario(name);
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')).toEqual([]);
  });
});
