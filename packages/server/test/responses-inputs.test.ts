import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { addToolSource } from './add-tool.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';

// What a responses request may give beyond text: tool_choice allowed_tools over the client's
// functions, the agent's tools and its MCP tools; input_file parts (file_data, file_url) read
// by the knowledge base's document readers; the output of an earlier response sent back as
// input; and an MCP server's question during a tool call as an output item, answered with an
// input item. Against the built server, the loopback OpenAI fake and the real server-everything.

let fake: FakeChatServer;
let everything: ServerProcess;
let files: Server;
let filesUrl: string;
let s: TestServer;
let client: OpenAI;
let projectId: string;
const { source: agentTools } = addToolSource();
const PDF = new URL('../../core/test/fixtures/sample.pdf', import.meta.url);
const ELICIT = 'mcp__everything__trigger-elicitation-request';

beforeAll(async () => {
  [fake, everything] = await Promise.all([startFakeChatServer(), startEverything('streamableHttp')]);
  const pdf = await readFile(PDF);
  files = createServer((req, res) => {
    if (req.url === '/manual.pdf') res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  s = await startTestServer({
    outbound: ALLOW_LOOPBACK,
    toolSources: [agentTools],
    env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '10000' },
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Inputs', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
  const added = await s.call('POST', '/api/mcp/add-server', { body: { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` } });
  // The elicitation tool is offered to clients that declare the capability, after initialising.
  for (let i = 0; i < 100; i++) {
    const tools = (await s.call('GET', `/api/mcp/servers/${added.body.server.id}/tools`)).body.tools as { name: string }[];
    if (tools.some((t) => t.name === 'trigger-elicitation-request')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([fake?.close(), everything?.stop(), new Promise((r) => files?.close(r))]);
});
beforeEach(() => fake.reset());

type Sent = {
  messages: { role: string; content: unknown; tool_calls?: { id: string; function: { name: string } }[]; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
  tool_choice?: unknown;
};
const sent = (i = 0) => fake.requests[i]?.body as Sent;
const weather: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: null };
const clock: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_time', parameters: { type: 'object', properties: {} }, strict: null };
const post = (body: Record<string, unknown>) => s.call('POST', '/api/v1/responses', { body });

describe('tool_choice allowed_tools', () => {
  it("offers only the allowed tools of the client's, the agent's and the MCP servers', and required makes the model call one", async () => {
    fake.script({ text: 'ok' });
    await client.responses.create({
      model: projectId,
      input: 'Weather?',
      tools: [weather, clock],
      tool_choice: {
        type: 'allowed_tools',
        mode: 'required',
        tools: [
          { type: 'function', name: 'get_weather' },
          { type: 'function', name: 'add' },
        ],
      },
    });
    expect(
      sent()
        .tools?.map((t) => t.function.name)
        .sort(),
    ).toEqual(['add', 'get_weather']);
    expect(sent().tool_choice).toBe('required');

    // OpenAI's MCP form: every tool of the server, or one by name.
    fake.script({ text: 'ok' }, { text: 'ok' });
    const all = await post({ model: projectId, input: 'x', tools: [weather], tool_choice: { type: 'allowed_tools', tools: [{ type: 'mcp', server_label: 'everything' }] } });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    expect(all.body.tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'mcp', server_label: 'everything' }] });
    const names = sent(1).tools?.map((t) => t.function.name) ?? [];
    expect(names.length).toBeGreaterThan(1);
    expect(names.every((n) => n.startsWith('mcp__everything__'))).toBe(true);
    expect(sent(1).tool_choice).toBeUndefined();
    await post({ model: projectId, input: 'x', tool_choice: { type: 'allowed_tools', tools: [{ type: 'mcp', server_label: 'everything', name: 'echo' }] } });
    expect(sent(2).tools?.map((t) => t.function.name)).toEqual(['mcp__everything__echo']);
  });

  it('refuses an allowed tool that is no tool of the turn with a 400 naming it, calling no model', async () => {
    for (const [choice, param] of [
      [
        {
          type: 'allowed_tools',
          tools: [
            { type: 'function', name: 'get_weather' },
            { type: 'function', name: 'nope' },
          ],
        },
        'tool_choice.tools.1',
      ],
      [{ type: 'allowed_tools', tools: [{ type: 'mcp', server_label: 'elsewhere' }] }, 'tool_choice.tools.0'],
      [{ type: 'allowed_tools', tools: [] }, 'tool_choice.tools'],
      [{ type: 'allowed_tools', mode: 'sometimes', tools: [{ type: 'function', name: 'add' }] }, 'tool_choice'],
    ] as const) {
      const res = await post({ model: projectId, input: 'x', tools: [weather], tool_choice: choice });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.param).toBe(param);
    }
    expect(fake.requests).toHaveLength(0);
  });
});

describe('input_file', () => {
  it('reads a file given as a data: URL or bare base64 into the user message', async () => {
    fake.script({ text: 'Read.' }, { text: 'Read.' });
    const markdown = Buffer.from('# Pumps\n\nInstall the pump on a flat surface.').toString('base64');
    const first = await client.responses.create({
      model: projectId,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Summarise:' },
            { type: 'input_file', filename: 'notes.md', file_data: `data:text/markdown;base64,${markdown}` },
          ],
        },
      ],
    });
    const user = sent().messages.find((m) => m.role === 'user');
    expect(JSON.stringify(user?.content)).toContain('[file notes.md]');
    expect(JSON.stringify(user?.content)).toContain('Install the pump on a flat surface.');
    // The input items keep the file's name, not its data.
    const items = await client.responses.inputItems.list(first.id);
    expect((items.data[0] as { content: unknown[] }).content[1]).toEqual({ type: 'input_file', filename: 'notes.md', file_url: null, file_id: null });

    const pdf = (await readFile(PDF)).toString('base64');
    await post({ model: projectId, input: [{ role: 'user', content: [{ type: 'input_file', filename: 'manual.pdf', file_data: pdf }] }] });
    expect(JSON.stringify(sent(1).messages.find((m) => m.role === 'user')?.content)).toContain('install the pump on a flat surface');
  });

  it('fetches a file_url through the outbound policy', async () => {
    fake.script({ text: 'Read.' });
    const res = await post({ model: projectId, input: [{ role: 'user', content: [{ type: 'input_file', file_url: `${filesUrl}/manual.pdf` }] }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const text = JSON.stringify(sent().messages.find((m) => m.role === 'user')?.content);
    expect(text).toContain('[file manual.pdf]');
    expect(text).toContain('install the pump on a flat surface');
  });

  it('refuses a file it cannot read with a 4xx naming the part, calling no model', async () => {
    const exe = Buffer.from('MZ not a document').toString('base64');
    for (const [part, param, status] of [
      [{ type: 'input_file', filename: 'tool.exe', file_data: exe }, 'input.0.content.1', 400],
      [{ type: 'input_file', filename: 'a.txt', file_data: 'not base64 !!' }, 'input.0.content.1.file_data', 400],
      [{ type: 'input_file', file_data: exe }, 'input.0.content.1', 400],
      [{ type: 'input_file', file_id: 'file_123' }, 'input.0.content.1.file_id', 400],
      [{ type: 'input_file', filename: 'a.txt' }, 'input.0.content.1', 400],
      [{ type: 'input_file', file_url: `${filesUrl}/missing.pdf` }, 'input.0.content.1.file_url', 400],
      [{ type: 'input_file', filename: 'broken.pdf', file_data: Buffer.from('%PDF-1.4 broken').toString('base64') }, 'input.0.content.1', 400],
    ] as const) {
      const res = await post({ model: projectId, input: [{ role: 'user', content: [{ type: 'input_text', text: 'x' }, part] }] });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.param, JSON.stringify(res.body)).toBe(param);
    }
    expect(fake.requests).toHaveLength(0);
  });
});

describe('output items sent back as input', () => {
  it("takes a response's output as the next input (server-run calls as calls and results, requests left out)", async () => {
    fake.script({
      toolCalls: [
        { id: 'call_add', name: 'add', arguments: { a: 2, b: 3 } },
        { id: 'call_echo', name: 'mcp__everything__echo', arguments: { message: 'hi' } },
        { id: 'call_w', name: 'get_weather', arguments: {} },
      ],
    });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Add, echo, weather' }];
    const first = await client.responses.create({ model: projectId, input, tools: [weather], store: false });
    expect(first.output.map((item) => item.type)).toEqual(['agent_platform:tool_call', 'mcp_call', 'function_call']);

    fake.script({ text: 'Done.' });
    const approvalRequest = { type: 'mcp_approval_request', id: 'apv_old', server_label: 'agent_platform', name: 'add', arguments: '{}' };
    const next = await client.responses.create({
      model: projectId,
      tools: [weather],
      store: false,
      input: [
        ...input,
        ...(first.output as unknown as OpenAI.Responses.ResponseInputItem[]),
        approvalRequest as unknown as OpenAI.Responses.ResponseInputItem,
        { type: 'function_call_output', call_id: 'call_w', output: 'Sunny' },
      ],
    });
    expect(next.output_text).toBe('Done.');
    const messages = sent(1).messages.filter((m) => m.role !== 'system');
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool']);
    expect(messages[1]?.tool_calls?.map((c) => [c.id, c.function.name])).toEqual([
      ['call_add', 'add'],
      ['call_echo', 'mcp__everything__echo'],
      ['call_w', 'get_weather'],
    ]);
    expect(messages.slice(2).map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_add', '5'],
      ['call_echo', expect.stringContaining('hi')],
      ['call_w', 'Sunny'],
    ]);
  });
});

describe('MCP servers ask during a response', () => {
  /** Reads a streamed response until `until` is sent; answers the events so far and the reader. */
  async function streamUntil(body: Record<string, unknown>, until: string) {
    const res = await fetch(`${s.url}/api/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes(until)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before ${until}: ${text}`);
      text += new TextDecoder().decode(value);
    }
    return { text, reader };
  }

  it('streams the question as an agent_platform:elicitation_request item, answered with an agent_platform:elicitation_response and previous_response_id', async () => {
    fake.script({ toolCalls: [{ id: 'call_form', name: ELICIT, arguments: {} }] }, { text: 'Thanks, Ada.' });
    const { text, reader } = await streamUntil({ model: projectId, input: 'Fill in the form', stream: true }, '"agent_platform:elicitation_request"');
    await reader.cancel().catch(() => {});
    const id = /"id":"(resp_[a-z0-9]+)"/.exec(text)?.[1] as string;
    const item = JSON.parse(/event: response.output_item.added\ndata: (\{.*"agent_platform:elicitation_request".*\})/.exec(text)?.[1] ?? '{}').item;
    expect(item).toMatchObject({ type: 'agent_platform:elicitation_request', server_label: 'everything', name: 'trigger-elicitation-request', call_id: 'call_form' });
    expect(item.fields.map((f: { name: string }) => f.name)).toContain('name');
    expect(id).toMatch(/^resp_/);
  });

  it('answers the question of a background response: the response goes on with the answer (streamed to the one who answers)', async () => {
    fake.script({ toolCalls: [{ id: 'call_form', name: ELICIT, arguments: {} }] }, { text: 'Thanks, Ada.' });
    const running = await client.responses.create({ model: projectId, input: 'Fill in the form', background: true });
    let question: { id: string } | undefined;
    for await (const event of await client.responses.retrieve(running.id, { stream: true })) {
      if (event.type === 'response.output_item.added' && (event.item.type as string) === 'agent_platform:elicitation_request') {
        question = event.item as unknown as { id: string };
        break;
      }
    }
    expect(question?.id).toMatch(/^apv_/);
    // A wrong answer names the item's member and leaves the question open.
    const wrong = await post({
      model: projectId,
      previous_response_id: running.id,
      input: [{ type: 'agent_platform:elicitation_response', elicitation_request_id: question?.id, action: 'accept', content: { integer: 500 } }],
    });
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(400);
    expect(wrong.body.error.param).toMatch(/^input\.0\.content/);
    // Another user's request for it is a 404; a request that mixes it with a message is a 400.
    const foreign = await s.call('POST', '/api/v1/responses', {
      key: s.keyB,
      body: { previous_response_id: running.id, input: [{ type: 'agent_platform:elicitation_response', elicitation_request_id: question?.id, action: 'decline' }] },
    });
    expect(foreign.status).toBe(404);
    const mixed = await post({
      previous_response_id: running.id,
      input: [
        { type: 'agent_platform:elicitation_response', elicitation_request_id: question?.id, action: 'decline' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.error.param).toBe('input.1');

    const answer = { type: 'agent_platform:elicitation_response', elicitation_request_id: question?.id, action: 'accept', content: { name: 'Ada Lovelace' } };
    const events: { type: string; [key: string]: any }[] = [];
    const stream = await client.responses.create({ model: projectId, previous_response_id: running.id, input: [answer as unknown as OpenAI.Responses.ResponseInputItem], stream: true });
    for await (const event of stream) events.push(event);
    const done = events.find((e) => e.type === 'response.output_item.done' && e.item.type === 'mcp_call')?.item;
    expect(done?.output).toContain('Name: Ada Lovelace');
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { id: running.id, status: 'completed' } });
    expect((await client.responses.retrieve(running.id)).output_text).toBe('Thanks, Ada.');
    expect((await s.call('GET', `/api/v1/approvals/${question?.id}`)).body.approval).toMatchObject({ kind: 'elicitation', state: 'accepted' });
    // Answered once: again is a 409.
    const again = await post({ previous_response_id: running.id, input: [answer] });
    expect(again.status).toBe(409);
  }, 60_000);
});
