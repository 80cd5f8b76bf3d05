import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';
import { projectMcpClients } from './project-mcp-clients.js';

// A project tool's own progress reports, through the official SDK's client over streamable
// HTTP against a real server: relayed as progress notifications while the tool runs, called
// directly or by the agent during `ask` (its model a loopback fake of OpenAI).

let upstream: FakeUpstream;
let s: TestServer;
let projectId: string;
const mcp = projectMcpClients('agent-mcp-progress-test');

/** Busy waiting: the sandbox has no timers. */
const WAIT = 'const wait = (ms) => { const end = Date.now() + ms; while (Date.now() < end) {} };';

const TOOLS = [
  // Reports, then computes until its time limit stops it: a report seen before the result came while it ran.
  { name: 'endless', code: 'function main() { progress(1, 3, "started"); while (true) {} }', language: 'javascript' },
  { name: 'endless_py', code: 'def main(args):\n    progress(1, 3, "started")\n    while True:\n        pass', language: 'python' },
  // 3 goes back: the protocol wants progress to increase, so it is not relayed.
  { name: 'steps', code: `function main() { ${WAIT} progress(5, 10, "five"); wait(200); progress(3, 10, "back"); wait(200); progress(10, 10, "done"); return "stepped"; }`, language: 'javascript' },
];

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_TOOL_TIMEOUT_MS: '2000' } });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Progress', model: 'gpt-test', provider: 'openai' } })).body.project.id;
  for (const tool of TOOLS) {
    const created = await s.call('POST', '/api/tools/create', { body: { projectId, description: tool.name, exposeOverMcp: true, ...tool } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
afterEach(async () => {
  await mcp.closeAll();
});

const connect = (): Promise<Client> => mcp.connect(s.url, projectId, s.keyA);

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

  it("ask relays the progress of a tool the agent runs, between the tool's call and its answer", async () => {
    upstream.script({ toolCalls: [{ name: 'steps', arguments: '{}' }] }, { text: 'It stepped.' });
    const client = await connect();
    const seen: Progress[] = [];
    const result = await client.callTool({ name: 'ask', arguments: { question: 'step' } }, CallToolResultSchema, { onprogress: (p) => seen.push(p) });
    expect(result.structuredContent).toMatchObject({ answer: 'It stepped.' });
    // Each report is a step of its own (`ask`'s progress counts steps, so "back" is one too);
    // on a loaded machine "back" may be coalesced away, the first and the last never are.
    const messages = seen.map((p) => p.message);
    expect(messages.slice(0, 3)).toEqual(['Thinking', 'Calling steps', 'steps 5/10: five']);
    expect(messages.slice(-3)).toEqual(['steps 10/10: done', 'steps answered', expect.stringMatching(/^Answering/)]);
    expect(messages.length).toBeLessThanOrEqual(7);
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i + 1));
  });

  it('a streamed completion carries the same reports as toolProgress chunks between toolCall and toolResult', async () => {
    upstream.script({ toolCalls: [{ name: 'steps', arguments: '{}' }] }, { text: 'It stepped.' });
    const res = await fetch(`${s.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: projectId, messages: [{ role: 'user', content: 'step' }], stream: true }),
    });
    const chunks = (await res.text())
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)) as { toolCall?: { id: string }; toolProgress?: { id: string }; toolResult?: { id: string } });
    const steps = chunks.filter((c) => c.toolCall || c.toolProgress || c.toolResult);
    const id = steps[0]?.toolCall?.id;
    expect(steps[0]?.toolCall).toMatchObject({ name: 'steps' });
    expect(steps[1]?.toolProgress).toEqual({ id, name: 'steps', progress: 5, total: 10, message: 'five' });
    expect(steps.at(-2)?.toolProgress).toEqual({ id, name: 'steps', progress: 10, total: 10, message: 'done' });
    expect(steps.at(-1)?.toolResult).toMatchObject({ id, name: 'steps', isError: false });
  });

  it('runs the tool alike for a client that asks for no progress', async () => {
    const client = await connect();
    expect(await client.callTool({ name: 'steps', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: 'stepped' }] });
  });
});
