import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';
import { projectMcpClients } from './project-mcp-clients.js';

// A tool run whose caller goes away is stopped in its sandbox, not only taken out of the queue:
// its place serves the next run long before the tool's time limit (60 s here) would have ended
// it. Over HTTP against a real server: an MCP client (the official SDK) cancelling a call of an
// exposed tool, and a completions client (the official `openai` client) that leaves while the
// agent's tool runs (its model a loopback fake of OpenAI).

/** Places of the server's JavaScript sandbox (its default workers): runs beyond them wait. */
const PLACES = 2;
const TIME_LIMIT_MS = 60_000;

let upstream: FakeUpstream;
let s: TestServer;
let projectId: string;
let shoutId: string;
const mcp = projectMcpClients('tool-abort-test');

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_TOOL_TIMEOUT_MS: String(TIME_LIMIT_MS) } });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Abort', model: 'gpt-test', provider: 'openai' } })).body.project.id;
  const create = async (name: string, code: string) => {
    const created = await s.call('POST', '/api/tools/create', { body: { projectId, name, description: name, language: 'javascript', code, exposeOverMcp: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body.tool.id as string;
  };
  // Reports once it runs, then never ends by itself.
  await create('spin', 'function main() { progress(1, undefined, "spinning"); for (;;) {} }');
  shoutId = await create('shout', 'function main(args) { return String(args.word).toUpperCase() + "!"; }');
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
afterEach(async () => {
  await mcp.closeAll();
});

const connect = (): Promise<Client> => mcp.connect(s.url, projectId, s.keyA);

/** A call of `spin` over MCP, settled once its code runs (its first progress notification). */
async function spinning(client: Client): Promise<{ controller: AbortController; call: Promise<unknown> }> {
  const controller = new AbortController();
  let runs!: () => void;
  const running = new Promise<void>((resolve) => {
    runs = resolve;
  });
  const call = client.callTool({ name: 'spin', arguments: {} }, CallToolResultSchema, { signal: controller.signal, onprogress: () => runs(), timeout: TIME_LIMIT_MS * 2 });
  call.catch(() => {});
  await running;
  return { controller, call };
}

/** `shout` run through the REST route, and whether it has answered yet. */
function shout(word: string): { answer: Promise<{ status: number; body: { result?: unknown } }>; settled: () => boolean } {
  let done = false;
  const answer = s.call('POST', `/api/tools/${shoutId}/run`, { body: { args: { word } } }).finally(() => {
    done = true;
  });
  return { answer, settled: () => done };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a tool run whose caller goes away', () => {
  it('cancelled by an MCP client: stopped in the sandbox, its place free for the next run at once', async () => {
    const client = await connect();
    const spins = [];
    for (let i = 0; i < PLACES; i++) spins.push(await spinning(client));
    // Every place runs code that never ends: another run waits.
    const waiting = shout('next');
    await sleep(500);
    expect(waiting.settled()).toBe(false);

    const cancelled = performance.now();
    spins[0]?.controller.abort('changed my mind');
    await expect(spins[0]?.call).rejects.toThrow();
    // The SDK client sent notifications/cancelled: the run stops and the waiting run gets its place.
    expect(await waiting.answer).toMatchObject({ status: 200, body: { success: true, result: 'NEXT!' } });
    expect(performance.now() - cancelled).toBeLessThan(TIME_LIMIT_MS / 3);

    spins[1]?.controller.abort();
    await expect(spins[1]?.call).rejects.toThrow();
    // Both places serve again: as many runs as places and one more, all answered.
    const after = await Promise.all(Array.from({ length: PLACES + 1 }, (_, i) => shout(`w${i}`).answer));
    expect(after.map((r) => r.body.result)).toEqual(after.map((_, i) => `W${i}!`));
    expect(await client.callTool({ name: 'shout', arguments: { word: 'still' } })).toEqual({ content: [{ type: 'text', text: 'STILL!' }] });
  });

  it("left by a completions client while the agent's tool runs: stopped in the sandbox too", async () => {
    const client = await connect();
    // One place taken over MCP, the other by the agent's call of spin.
    const held = await spinning(client);
    upstream.script({ toolCalls: [{ name: 'spin', arguments: '{}' }] }, { text: 'never reached' });
    const openai = new OpenAI({ baseURL: `${s.url}/api/v1`, apiKey: s.keyA });
    const leaving = new AbortController();
    const stream = await openai.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'spin' }], stream: true }, { signal: leaving.signal });
    let toolRuns = false;
    const reading = (async () => {
      for await (const chunk of stream) {
        if ((chunk as { toolProgress?: unknown }).toolProgress) {
          toolRuns = true;
          leaving.abort();
        }
      }
    })();
    // The client's stream ends quietly when it aborts (the `openai` client's way).
    await reading;
    expect(toolRuns).toBe(true);

    // The agent's run stopped when its client left: its place serves this run.
    const left = performance.now();
    expect(await shout('freed').answer).toMatchObject({ status: 200, body: { success: true, result: 'FREED!' } });
    expect(performance.now() - left).toBeLessThan(TIME_LIMIT_MS / 3);
    held.controller.abort();
    await expect(held.call).rejects.toThrow();
    // The model was asked once: a stopped turn asks for nothing after its tool.
    expect(upstream.requests).toHaveLength(1);
  });
});
