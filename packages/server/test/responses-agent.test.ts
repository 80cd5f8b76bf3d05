import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { type ServerProcess, startEverything } from '../../mcp/test/helpers.js';
import { ALLOW_LOOPBACK, startTestServer, type TestServer } from './helpers.js';
import { DOCUMENT, SUM_TOOL } from './provider-matrix-setup.js';
import { parseResponseEvents, responseEvents } from './responses-helpers.js';

// The responses route with a whole agent (a document, a JavaScript project tool, the
// server-everything MCP server) and the run's lifecycle: client functions beside server-run
// tools, knowledge citations as file_citation annotations, images, reasoning, an answer cut
// short, upstream failures, a cancel mid-stream and of a background response.

let fake: FakeChatServer;
let everything: ServerProcess;
let s: TestServer;
let client: OpenAI;
let projectId: string;
let documentId: string;

const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

beforeAll(async () => {
  [fake, everything] = await Promise.all([startFakeChatServer(), startEverything('streamableHttp')]);
  s = await startTestServer({ outbound: ALLOW_LOOPBACK, env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '10000' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  const post = async (path: string, body: Record<string, unknown>) => (await s.call('POST', path, { body })).body;
  projectId = (await post('/api/projects/create', { name: 'Refunds', model: 'gpt-4o-mini', provider: 'openai' })).project.id;
  documentId = (await post('/api/knowledge/documents', { projectId, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: DOCUMENT })).documentId;
  await s.indexed(documentId);
  await post('/api/tools/create', { projectId, ...SUM_TOOL });
  await post('/api/mcp/add-server', { projectId, name: 'everything', transport: 'http', url: `http://127.0.0.1:${everything.port}/mcp` });
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([fake?.close(), everything?.stop()]);
});
beforeEach(() => fake.reset());

const weather: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: null };

describe('an agent on the responses route', () => {
  it('runs a project tool and an MCP tool as output items beside a client function, then cites its knowledge as file_citation annotations', async () => {
    fake.script({
      toolCalls: [
        { id: 'call_sum', name: 'sum', arguments: { a: 2, b: 3 } },
        { id: 'call_echo', name: 'mcp__everything__echo', arguments: { message: 'hello over MCP' } },
        { id: 'call_w', name: 'get_weather', arguments: { city: 'Oslo' } },
      ],
    });
    const stream = client.responses.stream({ model: projectId, input: 'How long do refunds take? Also 2+3, an echo and the weather.', tools: [weather] });
    const added: string[] = [];
    stream.on('response.output_item.added', (e) => added.push(e.item.type));
    const first = await stream.finalResponse();
    expect(added).toEqual(['agent_platform:tool_call', 'mcp_call', 'function_call']);
    expect(first.output).toEqual([
      expect.objectContaining({ type: 'agent_platform:tool_call', name: 'sum', call_id: 'call_sum', output: '"sum=5"', error: null, status: 'completed' }),
      expect.objectContaining({ type: 'mcp_call', server_label: 'everything', name: 'echo', arguments: '{"message":"hello over MCP"}', status: 'completed', error: null }),
      expect.objectContaining({ type: 'function_call', name: 'get_weather', call_id: 'call_w', arguments: '{"city":"Oslo"}', status: 'completed' }),
    ]);
    expect((first.output[1] as { output: string }).output).toContain('hello over MCP');
    const sources = (first as unknown as { sources: { index: number; documentId: string; fileName: string }[] }).sources;
    expect(sources[0]).toMatchObject({ index: 1, documentId, fileName: 'refunds.md' });

    fake.script({ text: 'Within 30 days [1].' });
    const next = await client.responses.create({ model: projectId, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: 'call_w', output: 'Sunny' }], tools: [weather] });
    const part = (next.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText;
    expect(part.text).toBe('Within 30 days [1].');
    expect(part.annotations).toEqual([{ type: 'file_citation', file_id: documentId, filename: 'refunds.md', index: 'Within 30 days [1]'.length, chunk_id: expect.any(String), source_index: 1 }]);
    // The continuation was given the calls and every result, the client's last.
    const messages = ((fake.requests[1]?.body ?? {}) as { messages: { role: string; tool_call_id?: string }[] }).messages;
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_sum', 'call_echo', 'call_w']);
  });

  it('streams the annotation before output_text.done, and reasoning as a reasoning item before the message', async () => {
    fake.script({ reasoning: 'Look it up.', text: 'Thirty days [1].' });
    const events = await responseEvents(s, { model: projectId, input: 'Refunds?', stream: true });
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.annotation.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const done = events.at(-1)?.response;
    expect(done.output.map((i: { type: string }) => i.type)).toEqual(['reasoning', 'message']);
    expect(done.output[0].content).toEqual([{ type: 'reasoning_text', text: 'Look it up.' }]);
  });

  it('takes an image as an input_image part', async () => {
    fake.script({ text: 'A pixel.' });
    const r = await client.responses.create({
      model: projectId,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: PIXEL, detail: 'auto' },
          ],
        },
      ],
    });
    expect(r.output_text).toBe('A pixel.');
    const user = ((fake.requests[0]?.body ?? {}) as { messages: { role: string; content: unknown }[] }).messages.find((m) => m.role === 'user');
    expect(user?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: PIXEL } },
    ]);
    const items = await client.responses.inputItems.list(r.id);
    expect((items.data[0] as unknown as { content: unknown[] }).content).toEqual([
      { type: 'input_text', text: 'What is this?' },
      { type: 'input_image', image_url: null, detail: 'auto' },
    ]);
  });

  it('ends incomplete when the model runs out of max_output_tokens', async () => {
    fake.script({ text: 'Thirty', finishReason: 'length' });
    const r = await client.responses.create({ model: projectId, input: 'Refunds?', max_output_tokens: 16 });
    expect(r).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ type: 'message', status: 'incomplete' }] });
  });

  it('maps an upstream failure as the completions route does: the status when not streamed, an error event then response.failed when streamed', async () => {
    // The server retries once after the wait the upstream asked for; both refused.
    const limited = { status: 429, errorMessage: 'Slow down', errorHeaders: { 'retry-after': '1' } };
    fake.script(limited, limited);
    const res = await s.call('POST', '/api/v1/responses', { body: { model: projectId, input: 'x' } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null });

    // Streamed, a refusal before the run's first event is answered with its status too (the
    // stream's headers wait for it), and the response is kept failed.
    fake.script(limited, limited);
    const streamed = await fetch(`${s.url}/api/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: projectId, input: 'x', stream: true }),
    });
    expect(streamed.status).toBe(429);
    expect(streamed.headers.get('retry-after')).toBe('1');
    expect((await streamed.json()).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    fake.script(limited, limited);
    await expect(client.responses.stream({ model: projectId, input: 'x' }).finalResponse()).rejects.toBeInstanceOf(OpenAI.RateLimitError);

    // A failure after the first event: an error event, then response.failed.
    fake.script({ text: 'Half an ans', streamError: 'the upstream broke' });
    const events = await responseEvents(s, { model: projectId, input: 'x', stream: true });
    expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(events.at(-2)?.error).toMatchObject({ type: 'api_error', code: 'upstream_error' });
    const failed = events.at(-1)?.response;
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });
    expect(await client.responses.retrieve(failed.id)).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } });
    // The official stream helper rejects with the error event's error.
    fake.script({ text: 'Half an ans', streamError: 'the upstream broke' });
    await expect(client.responses.stream({ model: projectId, input: 'x' }).finalResponse()).rejects.toBeInstanceOf(OpenAI.APIError);
  });

  it('cancels a streamed response mid-stream: the run stops, the stream ends cancelled, nothing of the turn is kept in the chat', async () => {
    fake.script({ text: 'one two three four five six seven eight nine ten', chunkDelayMs: 300 });
    const res = await fetch(`${s.url}/api/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: projectId, input: 'Count slowly', stream: true }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('response.output_text.delta')) text += new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"(resp_[a-z0-9]+)"/.exec(text)?.[1] as string;
    const cancelled = await client.responses.cancel(id);
    expect(cancelled).toMatchObject({ id, status: 'cancelled' });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const events = parseResponseEvents(text);
    expect(events.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(events.at(-1)?.response).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
    expect(await fake.requests[0]?.ended).toBe('client_closed');
    const stored = await client.responses.retrieve(id);
    expect(stored.status).toBe('cancelled');
    expect(stored.output_text.length).toBeGreaterThan(0);
    // The new chat is made with the turn's messages when it completes: a cancelled first turn leaves none.
    const chatId = (stored as unknown as { chatId: string }).chatId;
    expect((await s.call('GET', `/api/chats/${chatId}/messages`)).status).toBe(404);
    // Continuing it makes the chat, with the cancelled response's input and output first.
    fake.script({ text: 'Go on.' });
    const next = await client.responses.create({ model: projectId, previous_response_id: id, input: 'Continue' });
    expect((next as unknown as { chatId: string }).chatId).toBe(chatId);
    const sentMessages = ((fake.requests.at(-1)?.body ?? {}) as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role !== 'system');
    expect(sentMessages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(sentMessages[0]?.content).toBe('Count slowly');
    expect(((await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as unknown[]).length).toBe(4);
    // Cancelling again answers it again; a finished response cannot be cancelled.
    expect(await client.responses.cancel(id)).toMatchObject({ status: 'cancelled' });
    const done = await client.responses.create({ model: projectId, input: 'x' });
    await expect(client.responses.cancel(done.id)).rejects.toMatchObject({ status: 400 });
  });

  it('runs a background response, answered queued at once, read while it runs and cancelled', async () => {
    fake.script({ hang: true });
    const queued = await client.responses.create({ model: projectId, input: 'Take your time', background: true });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    await expect.poll(() => fake.requests.length).toBe(1);
    expect(await client.responses.retrieve(queued.id)).toMatchObject({ status: 'in_progress' });
    expect(await client.responses.cancel(queued.id)).toMatchObject({ status: 'cancelled' });
    expect(await fake.requests[0]?.ended).toBe('client_closed');
    expect(await client.responses.retrieve(queued.id)).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });

    fake.script({ text: 'Done in the background.' });
    const second = await client.responses.create({ model: projectId, input: 'Go', background: true });
    await expect.poll(async () => (await client.responses.retrieve(second.id)).status).toBe('completed');
    expect((await client.responses.retrieve(second.id)).output_text).toBe('Done in the background.');
  });
});
