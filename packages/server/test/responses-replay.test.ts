import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../adapters-models/test/openai-chat-server.js';
import { startTestServer, type TestServer } from './helpers.js';
import { parseResponseEvents, responseEvents, type SentEvent } from './responses-helpers.js';

// A response's events read again: GET /api/v1/responses/{id}?stream=true (the official
// client's responses.retrieve(id, { stream: true })), from the recorded stream of a streamed
// or background response (live while it runs), or made from the stored response; and
// background: true with stream: true, whose run outlives its client.

let fake: FakeChatServer;
let s: TestServer;
let client: OpenAI;
let projectId: string;

beforeAll(async () => {
  fake = await startFakeChatServer();
  s = await startTestServer({ env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '10000' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Replays', model: 'gpt-4o-mini', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s?.stop();
  await fake?.close();
});
beforeEach(() => fake.reset());

/** The events of GET ?stream=true over raw HTTP. */
async function replayed(id: string, query = '', key = s.keyA): Promise<SentEvent[]> {
  const res = await fetch(`${s.url}/api/v1/responses/${id}?stream=true${query}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  return parseResponseEvents(await res.text());
}

/** The events of the official client's retrieve(id, { stream: true }). */
async function retrieved(id: string, query: { starting_after?: number } = {}): Promise<{ type: string; sequence_number: number; [key: string]: any }[]> {
  const events: { type: string; sequence_number: number }[] = [];
  for await (const event of await client.responses.retrieve(id, { stream: true, ...query })) events.push(event);
  return events;
}

const shape = (events: readonly { type: string; sequence_number: number }[]) => events.map((e) => [e.sequence_number, e.type]);

describe('GET /api/v1/responses/{id}?stream=true', () => {
  it("replays a streamed response's recorded events as they were sent, after starting_after", async () => {
    fake.script({ text: 'One two three.' });
    const sent = await responseEvents(s, { model: projectId, input: 'Count', stream: true });
    const id = sent[0]?.response.id as string;
    const again = await retrieved(id);
    expect(again).toEqual(sent.map(({ event: _, ...e }) => e));
    // starting_after: the events after that sequence number, through the client and raw HTTP.
    const after = await retrieved(id, { starting_after: 3 });
    expect(after.map((e) => e.sequence_number)).toEqual(sent.slice(4).map((e) => e.sequence_number));
    expect(shape(await replayed(id, '&starting_after=3'))).toEqual(shape(after));
    expect(after.at(-1)).toMatchObject({ type: 'response.completed', response: { id, status: 'completed' } });
    // The client's stream helper resumes a response by its id.
    const resumed = client.responses.stream({ response_id: id, starting_after: 2 });
    expect((await resumed.finalResponse()).output_text).toBe('One two three.');
  });

  it('makes the events of a response that was not streamed from the stored response, its items and ids as stored', async () => {
    fake.script({ reasoning: 'Think.', text: 'Plain [1] answer.', toolCalls: [{ id: 'call_w', name: 'weather', arguments: { city: 'Oslo' } }] });
    const stored = await client.responses.create({ model: projectId, input: 'Hi', tools: [{ type: 'function', name: 'weather', parameters: { type: 'object', properties: {} }, strict: null }] });
    const events = await replayed(stored.id);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0]?.response).toMatchObject({ id: stored.id, status: 'in_progress', output: [] });
    expect(events.filter((e) => e.type === 'response.output_item.done').map((e) => e.item.id)).toEqual(stored.output.map((item) => item.id));
    const { output_text: _, ...resource } = stored;
    expect(events.at(-1)?.response).toEqual(JSON.parse(JSON.stringify(resource)));
    // The client assembles it to the stored response.
    const assembled = client.responses.stream({ response_id: stored.id });
    expect((await assembled.finalResponse()).output_text).toBe('Plain [1] answer.');
    expect(shape(await retrieved(stored.id, { starting_after: 16 }))).toEqual([
      [17, 'response.output_item.done'],
      [18, 'response.completed'],
    ]);
  });

  it('replays a failed response to its error and response.failed', async () => {
    fake.script({ text: 'Half an ans', streamError: 'the upstream broke' });
    const sent = await responseEvents(s, { model: projectId, input: 'x', stream: true });
    expect(sent.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    const again = await replayed(sent[0]?.response.id);
    expect(again).toEqual(sent);
  });

  it('refuses an unknown or foreign id with 404 before any event, and a bad starting_after with 400', async () => {
    fake.script({ text: 'Mine.' });
    const mine = await client.responses.create({ model: projectId, input: 'x' });
    for (const [id, key] of [
      ['resp_nope', s.keyA],
      [mine.id, s.keyB],
    ] as const) {
      const res = await fetch(`${s.url}/api/v1/responses/${id}?stream=true`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(404);
      expect((await res.json()).error).toMatchObject({ type: 'not_found_error', param: 'id' });
    }
    for (const query of ['stream=true&starting_after=-1', 'stream=true&starting_after=x', 'stream=maybe']) {
      const res = await fetch(`${s.url}/api/v1/responses/${mine.id}?${query}`, { headers: { authorization: `Bearer ${s.keyA}` } });
      expect(res.status, query).toBe(400);
    }
  });
});

describe('background responses', () => {
  it('follows a running background response live, from its recorded start', async () => {
    fake.script({ text: 'a b c d e f', chunkDelayMs: 150 });
    const queued = await client.responses.create({ model: projectId, input: 'Slowly', background: true });
    expect(queued.status).toBe('queued');
    const events = await retrieved(queued.id);
    expect(events[0]).toMatchObject({ type: 'response.created', sequence_number: 0 });
    expect(
      events
        .filter((e) => e.type === 'response.output_text.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe('a b c d e f');
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'completed' } });
    expect(shape(await retrieved(queued.id))).toEqual(shape(events));
  });

  it('streams a background response; the client going away does not stop it, and it is read and replayed afterwards', async () => {
    fake.script({ text: 'one two three four five six', chunkDelayMs: 200 });
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: projectId, input: 'Count', background: true, stream: true }),
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while (!text.includes('response.output_text.delta')) text += new TextDecoder().decode((await reader.read()).value);
    const id = /"id":"(resp_[a-z0-9]+)"/.exec(text)?.[1] as string;
    controller.abort();
    await reader.cancel().catch(() => {});
    await expect.poll(async () => (await client.responses.retrieve(id)).status, { timeout: 10_000 }).toBe('completed');
    const done = await client.responses.retrieve(id);
    expect(done).toMatchObject({ background: true, status: 'completed' });
    expect(done.output_text).toBe('one two three four five six');
    expect(await fake.requests[0]?.ended).not.toBe('client_closed');
    const events = await retrieved(id);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed' });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));

    // Through the official client: stream with background, to the end.
    fake.script({ text: 'All of it.' });
    const stream = client.responses.stream({ model: projectId, input: 'Again', background: true });
    const final = await stream.finalResponse();
    expect(final).toMatchObject({ status: 'completed', background: true });
    expect(final.output_text).toBe('All of it.');
  });
});
