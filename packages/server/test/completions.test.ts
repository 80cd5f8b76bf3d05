import { DEFAULT_MAX_OPEN_STREAMS } from '@agent-platform/core/internal';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addToolSource } from './add-tool.js';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { sseEvents, startTestServer, type TestServer } from './helpers.js';

let upstream: FakeUpstream;
let s: TestServer;
let client: OpenAI;
let projectId: string;

/** Every project has the agent tool `add`. */
const { source: testTools, calls } = addToolSource();

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({
    env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '1500' },
    toolSources: [testTools],
  });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  const res = await s.call('POST', '/api/projects/create', {
    body: { name: 'Support', model: 'gpt-test', provider: 'openai', instructions: 'You are the support agent of ACME.' },
  });
  projectId = res.body.project.id;
  const doc = await s.call('POST', '/api/knowledge/documents', {
    body: { projectId, fileName: 'refunds.md', fileType: 'md', sourceType: 'upload', content: '# Refunds\n\nACME refunds purchases within 30 days of delivery.' },
  });
  // On a busy machine indexing may outlast the route's own wait: the agent needs the chunks.
  await s.indexed(doc.body.documentId);
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

describe('POST /api/v1/chat/completions with the openai client', () => {
  it('answers a plain model call (model is not a project)', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-plain', messages: [{ role: 'user', content: 'hello' }] });
    expect(completion.choices[0]?.message.content).toBe('You said: hello');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.model).toBe('gpt-plain');
    expect(completion.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(upstream.requests[0]).toMatchObject({ model: 'gpt-plain', messages: [{ role: 'user', content: 'hello' }], stream: true });
  });

  it('runs the agent: knowledge reaches the system context and comes back as sources', async () => {
    const completion = await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'How long do I have to get a refund?' }] });
    const sent = upstream.requests[0] as { model: string; messages: { role: string; content: string }[] };
    expect(sent.model).toBe('gpt-test');
    expect(sent.messages[0]?.role).toBe('system');
    expect(sent.messages[0]?.content).toContain('You are the support agent of ACME.');
    expect(sent.messages[0]?.content).toContain('[1] refunds.md');
    expect(sent.messages[0]?.content).toContain('within 30 days of delivery');
    const sources = (completion as unknown as { sources: { index: number; fileName: string; chunkId: string; documentId: string; score: number }[] }).sources;
    expect(sources[0]).toMatchObject({ index: 1, fileName: 'refunds.md', chunkId: expect.stringMatching(/^chunk_/), documentId: expect.stringMatching(/^doc_/) });
    expect((sources[0] as unknown as { excerpt: string }).excerpt).toBe('# Refunds ACME refunds purchases within 30 days of delivery.');
    expect(completion.model).toBe(projectId);
  });

  it('streams in OpenAI chunks ending with [DONE], with usage when asked', async () => {
    upstream.script({ text: 'one two three four', usage: { prompt_tokens: 7, completion_tokens: 4 } });
    const stream = await client.chat.completions.create({
      model: projectId,
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    let deltas = 0;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) {
        text += choice.delta.content;
        deltas++;
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('one two three four');
    expect(deltas).toBe(4);
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
  });

  it('runs tool calls and sums usage over every model call', async () => {
    calls.length = 0;
    upstream.script(
      { toolCalls: [{ name: 'add', arguments: '{"a":2,"b":3}' }], usage: { prompt_tokens: 20, completion_tokens: 2 } },
      { text: 'The sum is 5.', usage: { prompt_tokens: 30, completion_tokens: 3 } },
    );
    const completion = await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'What is 2 + 3?' }] });
    expect(completion.choices[0]?.message.content).toBe('The sum is 5.');
    expect(calls).toEqual([{ a: 2, b: 3 }]);
    expect(completion.usage).toEqual({ prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 });
    expect(upstream.requests[0]?.tools?.[0]?.function?.name).toBe('add');
    const second = upstream.requests[1] as { messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[] };
    expect(second.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: expect.any(String), type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }] },
      { role: 'tool', tool_call_id: expect.any(String), content: '5' },
    ]);
  });

  it("streams the agent's tool steps as toolCall / toolResult on empty deltas, which the openai client passes over; a recorded stream replays them", async () => {
    type Step = { toolCall?: { id: string; name: string; arguments: string }; toolResult?: { id: string; name: string; content: string; isError: boolean } };
    const script = () =>
      upstream.script(
        {
          toolCalls: [
            { name: 'add', arguments: '{"a":4,"b":5}' },
            { name: 'nope', arguments: '{}' },
          ],
        },
        { text: 'The sum is 9.' },
      );
    script();
    const stream = await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'What is 4 + 5?' }], stream: true });
    let text = '';
    const steps: Step[] = [];
    for await (const chunk of stream) {
      // An OpenAI client sees an empty delta: no content, no tool_calls for it to run.
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      text += chunk.choices[0]?.delta.content ?? '';
      const step = chunk as unknown as Step;
      if (step.toolCall || step.toolResult) {
        expect(chunk.choices).toEqual([{ index: 0, delta: {}, finish_reason: null }]);
        steps.push({ ...(step.toolCall ? { toolCall: step.toolCall } : {}), ...(step.toolResult ? { toolResult: step.toolResult } : {}) });
      }
    }
    expect(text).toBe('The sum is 9.');
    const [addId, nopeId] = [steps[0]?.toolCall?.id, steps[2]?.toolCall?.id];
    expect(steps).toEqual([
      { toolCall: { id: expect.any(String), name: 'add', arguments: '{"a":4,"b":5}' } },
      { toolResult: { id: addId, name: 'add', content: '9', isError: false } },
      { toolCall: { id: expect.any(String), name: 'nope', arguments: '{}' } },
      { toolResult: { id: nopeId, name: 'nope', content: 'Error: There is no tool named nope', isError: true } },
    ]);
    expect(addId).not.toBe(nopeId);

    // Recorded into a resumable stream: the replay carries the same steps, in order.
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    const streamId = (await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } })).body.stream.id;
    script();
    const live = await s.call('POST', '/api/v1/ai/chat/completions', {
      raw: JSON.stringify({ model: projectId, chatId: chat.id, streamId, stream: true, messages: [{ role: 'user', content: 'What is 4 + 5?' }] }),
    });
    const replay = await fetch(`${s.url}/api/chats/${chat.id}/streams/${streamId}`, { headers: { authorization: `Bearer ${s.keyA}` } });
    const stepsOf = (sse: string) =>
      sseEvents<Step>(sse)
        .filter((c) => c.toolCall || c.toolResult)
        .map((c) => [c.toolCall?.name ?? c.toolResult?.name, c.toolCall ? 'call' : c.toolResult?.isError ? 'error' : 'result']);
    const expected = [
      ['add', 'call'],
      ['add', 'result'],
      ['nope', 'call'],
      ['nope', 'error'],
    ];
    expect(stepsOf(live.body as string)).toEqual(expected);
    expect(stepsOf(await replay.text())).toEqual(expected);
    // The chat's stored messages carry the same steps: the calls on the assistant message, each result as a tool message.
    const stored = (await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages as { role: string; content: string | null; toolCalls?: { id: string; name: string }[]; toolCallId?: string }[];
    expect(stored.map((m) => [m.role, m.toolCalls?.map((c) => c.name) ?? m.toolCallId ?? m.content])).toEqual([
      ['user', 'What is 4 + 5?'],
      ['assistant', ['add', 'nope']],
      ['tool', stored[1]?.toolCalls?.[0]?.id],
      ['tool', stored[1]?.toolCalls?.[1]?.id],
      ['assistant', 'The sum is 9.'],
    ]);
  });

  it('reports finish_reason length', async () => {
    upstream.script({ text: 'cut', finishReason: 'length' });
    const completion = await client.chat.completions.create({ model: 'gpt-plain', messages: [{ role: 'user', content: 'x' }], max_tokens: 1 });
    expect(completion.choices[0]?.finish_reason).toBe('length');
    expect(upstream.requests[0]?.max_tokens).toBe(1);
  });
});

describe('chat memory', () => {
  it('sends earlier messages on the next turn and stores the turns', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId, name: 'memory' } })).body.chat;
    await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'My name is Ada.' }], chatId: chat.id } as never);
    await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'What is my name?' }], chatId: chat.id } as never);
    const second = upstream.requests[1] as { messages: { role: string; content: string }[] };
    expect(second.messages.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'You said: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    const stored = (await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages;
    expect(stored.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'My name is Ada.'],
      ['assistant', 'You said: My name is Ada.'],
      ['user', 'What is my name?'],
      ['assistant', 'You said: What is my name?'],
    ]);
  });

  it('the chat-scoped form creates an unknown chat for a project of the caller and answers success', async () => {
    const chatClient = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1/ai`, maxRetries: 0 });
    const completion = await chatClient.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'hi' }], chatId: 'my-chat-1' } as never);
    expect((completion as unknown as { success: boolean; chatId: string }).success).toBe(true);
    expect((completion as unknown as { chatId: string }).chatId).toBe('my-chat-1');
    expect((await s.call('GET', '/api/chats/my-chat-1/messages')).body.messages).toHaveLength(2);
    await expect(chatClient.chat.completions.create({ model: 'not-a-project', messages: [{ role: 'user', content: 'hi' }], chatId: 'other-chat' } as never)).rejects.toMatchObject({ status: 404 });
    await expect(chatClient.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 400 });
    // user B cannot write into user A's chat
    const clientB = new OpenAI({ apiKey: s.keyB, baseURL: `${s.url}/api/v1/ai`, maxRetries: 0 });
    await expect(clientB.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'hi' }], chatId: 'my-chat-1' } as never)).rejects.toMatchObject({ status: 404 });
  });
});

describe('stored sources', () => {
  type Source = { index: number; chunkId: string; documentId: string; fileName: string; score: number; excerpt: string };
  type Stored = { role: string; content: string | null; sources?: Source[] };
  const messagesOf = async (chatId: string) => (await s.call('GET', `/api/chats/${chatId}/messages`)).body.messages as Stored[];
  const question = { role: 'user', content: 'How long do I have to get a refund?' };

  it("keeps the answer's sources with its message: the messages route answers them as the completion did", async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    upstream.script({ text: 'Within 30 days of delivery [1].' });
    const completion = (await client.chat.completions.create({ model: projectId, messages: [question], chatId: chat.id } as never)) as unknown as { sources: Source[] };
    expect(completion.sources).toHaveLength(1);
    expect(completion.sources[0]).toEqual({
      index: 1,
      chunkId: expect.stringMatching(/^chunk_/),
      documentId: expect.stringMatching(/^doc_/),
      fileName: 'refunds.md',
      score: expect.any(Number),
      excerpt: '# Refunds ACME refunds purchases within 30 days of delivery.',
    });
    // A second turn without knowledge keeps the first turn's sources where they were.
    upstream.script({ text: 'You are welcome.' });
    await client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'zzz qqq' }], chatId: chat.id } as never);
    const stored = await messagesOf(chat.id);
    expect(stored.map((m) => [m.role, m.content, m.sources])).toEqual([
      ['user', question.content, undefined],
      ['assistant', 'Within 30 days of delivery [1].', completion.sources],
      ['user', 'zzz qqq', undefined],
      ['assistant', 'You are welcome.', undefined],
    ]);
  });

  it('keeps them on the recorded-stream path too, streamed or not', async () => {
    for (const stream of [true, false]) {
      const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
      const streamId = (await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } })).body.stream.id;
      upstream.script({ text: 'Thirty days [1].' });
      const res = await s.call('POST', '/api/v1/ai/chat/completions', { body: { model: projectId, chatId: chat.id, streamId, stream, messages: [question] } });
      expect(res.status).toBe(200);
      const sent: Source[] = stream ? JSON.parse(/^data: (\{.*)$/m.exec(res.body as string)?.[1] as string).sources : res.body.sources;
      expect(sent).toMatchObject([{ index: 1, fileName: 'refunds.md', excerpt: expect.stringContaining('within 30 days') }]);
      // The recording runs to its end on its own: wait for the stored answer.
      await expect.poll(async () => (await messagesOf(chat.id)).at(-1), { timeout: 10_000 }).toMatchObject({ role: 'assistant', content: 'Thirty days [1].', sources: sent });
    }
  });
});

describe('upstream failures', () => {
  const turn = async (chatId: string) => client.chat.completions.create({ model: projectId, messages: [{ role: 'user', content: 'fail please' }], chatId } as never);

  it('maps a 500, a timeout, malformed SSE and a refused connection to clear 5xx answers, storing nothing', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    // The provider client retries a 5xx once: both attempts fail.
    upstream.script({ status: 500 }, { status: 500 });
    await expect(turn(chat.id)).rejects.toMatchObject({ status: 502, error: { type: 'api_error', code: 'upstream_error' } });
    upstream.script({ hang: true }, { hang: true });
    await expect(turn(chat.id)).rejects.toMatchObject({ status: 504 });
    upstream.script({ text: 'half an answer', malformed: true });
    await expect(turn(chat.id)).rejects.toMatchObject({ status: 502 });
    expect((await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages).toEqual([]);

    const res = await s.call('POST', '/api/v1/chat/completions', { body: { model: 'gpt-plain', messages: [{ role: 'user', content: 'x' }] } });
    expect(res.status).toBe(200);
  });

  it('answers 503 when the provider is unreachable', async () => {
    const down = await startTestServer({ env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'k' } });
    try {
      const res = await down.call('POST', '/api/v1/chat/completions', { body: { model: 'gpt-x', messages: [{ role: 'user', content: 'x' }] } });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ success: false, code: 'unavailable', error: { message: expect.stringContaining('unreachable'), code: 'unavailable' } });
    } finally {
      await down.stop();
    }
  });

  it('a client that disconnects mid-stream aborts the upstream call', async () => {
    upstream.script({ text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 100 });
    const before = upstream.aborted;
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-plain', messages: [{ role: 'user', content: 'x' }], stream: true }),
      signal: controller.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    for (let i = 0; i < 50 && upstream.aborted === before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(upstream.aborted).toBe(before + 1);
  });
});

describe('resumable streams', () => {
  it('a client that disconnects resumes with Last-Event-ID and gets the whole answer', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    const created = await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } });
    expect(created.status).toBe(201);
    const streamId = created.body.stream.id;
    const full = 'alpha beta gamma delta epsilon zeta eta theta';
    upstream.script({ text: full, chunkDelayMs: 40 });

    // Start a recorded completion and read only a few events, then drop the connection.
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: projectId, chatId: chat.id, streamId, stream: true, messages: [{ role: 'user', content: 'greek letters' }] }),
      signal: controller.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let early = '';
    while ((early.match(/\n\n/g) ?? []).length < 3) early += new TextDecoder().decode((await reader.read()).value);
    controller.abort();

    // Reading the stream from the start gives every event with ids.
    const replay = await fetch(`${s.url}/api/chats/${chat.id}/streams/${streamId}`, { headers: { authorization: `Bearer ${s.keyA}` } });
    // Comment blocks (the opening `: ok`, keep-alives) are not events.
    const events = (await replay.text()).split('\n\n').filter((block) => block && !block.startsWith(':'));
    expect(events.at(-1)).toBe('data: [DONE]');
    const parsed = events.slice(0, -1).map((e) => {
      const [idLine, dataLine] = e.split('\n');
      return { id: Number(idLine?.slice(4)), chunk: JSON.parse((dataLine as string).slice(6)) };
    });
    const textOf = (list: typeof parsed) => list.map((p) => p.chunk.choices[0]?.delta?.content ?? '').join('');
    expect(textOf(parsed)).toBe(full);

    // Resuming after event 3 gives exactly the rest.
    const resumed = await fetch(`${s.url}/api/chats/${chat.id}/streams/${streamId}`, { headers: { authorization: `Bearer ${s.keyA}`, 'last-event-id': '3' } });
    const rest = (await resumed.text()).split('\n\n').filter((e) => e.startsWith('id: '));
    expect(rest.map((e) => Number(e.split('\n')[0]?.slice(4)))).toEqual(parsed.slice(3).map((p) => p.id));
    expect(textOf(parsed.slice(0, 3)) + textOf(parsed.slice(3))).toBe(full);

    // The recorded turn was stored even though the client went away.
    const stored = (await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages;
    expect(stored.at(-1)).toMatchObject({ role: 'assistant', content: full });
  });

  it('refuses a stream of another chat, a chat id that differs from the path, and unknown chats', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    expect((await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: 'chat_other' } })).status).toBe(400);
    expect(await s.call('POST', '/api/chats/chat_missing/streams', { body: { chatId: 'chat_missing' } })).toMatchObject({ status: 404, body: { message: 'Chat not found' } });
    expect((await s.call('GET', `/api/chats/${chat.id}/streams/stream_missing`)).status).toBe(404);
    expect((await s.call('POST', `/api/chats/${chat.id}/streams`, { key: s.keyB, body: { chatId: chat.id } })).status).toBe(404);
  });
});

describe('open streams', () => {
  it('bounds the open streams of one user: 429 naming the limit; other users are not affected', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    // Earlier tests of this file may hold open streams of user A: fill up to the limit.
    let created = 0;
    let refused: { status: number; body: { message: string; code: string } } | undefined;
    for (let i = 0; i <= DEFAULT_MAX_OPEN_STREAMS && !refused; i++) {
      const res = await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } });
      if (res.status === 201) created++;
      else refused = res;
    }
    expect(created).toBeGreaterThan(DEFAULT_MAX_OPEN_STREAMS - 5);
    expect(refused).toMatchObject({ status: 429, body: { code: 'rate_limited', message: expect.stringMatching(`^Too many open streams: at most ${DEFAULT_MAX_OPEN_STREAMS} per user`) } });
    const projectB = (await s.call('POST', '/api/projects/create', { key: s.keyB, body: { name: 'b', model: 'gpt-plain', provider: 'openai' } })).body.project.id;
    const chatB = (await s.call('POST', '/api/chats', { key: s.keyB, body: { projectId: projectB } })).body.chat;
    expect((await s.call('POST', `/api/chats/${chatB.id}/streams`, { key: s.keyB, body: { chatId: chatB.id } })).status).toBe(201);
  });
});

describe('bad input', () => {
  it('answers 400 naming the field, with OpenAI error objects', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await s.call('POST', '/api/v1/chat/completions', { body: { model: 'gpt-plain', messages: [{ role: 'user', content: 'x' }], ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message).toContain(field);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining(field) });
    };
    await bad({ messages: [] }, 'messages');
    await bad({ messages: [{ role: 'wizard', content: 'x' }] }, 'messages');
    await bad({ temperature: 3 }, 'temperature');
    await bad({ max_tokens: 0 }, 'max_tokens');
    await bad({ chatId: 5 }, 'chatId');
    expect((await s.call('POST', '/api/v1/chat/completions', { body: { model: 'gpt-plain', messages: [{ role: 'user', content: 'x' }], chatId: 'chat_nope' } })).status).toBe(404);
    await bad({ top_p: 1.5 }, 'top_p');
    await bad({ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop');
    const unauth = await s.call('POST', '/api/v1/chat/completions', { key: null, body: {} });
    expect(unauth.body).toMatchObject({ success: false, message: 'Unauthorized', error: { type: 'authentication_error' } });
  });
});

describe('what the request may carry', () => {
  /** Calls through the official client with its default retries, counting what it sent. */
  const counted = () => {
    let sent = 0;
    const countingFetch: typeof fetch = (input, init) => {
      sent++;
      return fetch(input, init);
    };
    return { client: new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, fetch: countingFetch }), sent: () => sent };
  };
  const ask = () => ({ model: projectId, messages: [{ role: 'user' as const, content: 'hi' }] });

  it('refuses each member it cannot honour with 400 naming it and why, before any model call, and an OpenAI client does not retry', async () => {
    const refused: [Record<string, unknown>, string][] = [
      [{ n: 2 }, 'n: only 1 is supported'],
      [{ response_format: { type: 'xml' } }, 'response_format.type: must be {"type":"text"}, {"type":"json_object"} or {"type":"json_schema"'],
      [
        { messages: [{ role: 'assistant', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] },
        'messages.0.content.0.type: "image_url" content parts are not supported in this message: images are taken in user messages only',
      ],
      [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] }, 'messages.0.content.0.type: "input_audio" content parts are not supported'],
      [{ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] }, 'messages.0.content.0.type: "file" content parts are not supported'],
      [{ messages: [{ role: 'user', content: 'hi', name: 'Ada Lovelace' }] }, 'messages.0.name: must be 1 to 64 letters, digits, _ or -'],
      [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages.0.role: must be system, developer, user, assistant or tool'],
      [{ logprobs: true }, 'logprobs: not supported'],
      [{ top_logprobs: 3 }, 'top_logprobs: not supported'],
      [{ logit_bias: { '50256': -100 } }, 'logit_bias: not supported: token biases'],
      [{ audio: { voice: 'alloy', format: 'mp3' } }, 'audio: not supported: answers are text only'],
      [{ modalities: ['text', 'audio'] }, 'modalities.1: only "text" is supported'],
      [{ functions: [{ name: 'f', parameters: {} }] }, 'functions: not supported: the deprecated form of tools'],
      [{ function_call: 'auto' }, 'function_call: not supported'],
      [{ reasoning_effort: 'high' }, 'reasoning_effort: not supported'],
      [{ verbosity: 'low' }, 'verbosity: not supported'],
      [{ web_search_options: {} }, 'web_search_options: not supported'],
      [{ store: true }, 'store: not supported'],
      [{ service_tier: 'flex' }, 'service_tier: only "auto" and "default" are supported'],
      [{ tools: [{ type: 'custom', custom: { name: 'grammar' } }] }, 'tools.0.type: only function tools are supported'],
      [{ top_k: 40 }, 'unknown member "top_k": not part of OpenAI\'s chat completion request'],
    ];
    for (const [members, message] of refused) {
      for (const path of ['/api/v1/chat/completions', '/api/v1/ai/chat/completions']) {
        const res = await s.call('POST', path, { body: { ...ask(), chatId: 'chat-refused', ...members } });
        expect([res.status, res.body.code], JSON.stringify(members)).toEqual([400, 'invalid_request']);
        expect(res.body.message, JSON.stringify(members)).toContain(message);
        expect(res.body.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining(message) });
      }
    }
    expect(upstream.requests).toEqual([]);
    // Nothing half-written: the chat-scoped form did not create the chat it named.
    expect((await s.call('GET', '/api/chats/chat-refused/messages')).status).toBe(404);
    // A refused response_format (as LangChain's withStructuredOutput might send one this service cannot check): one request, a 400 at once, no retry.
    const { client: retrying, sent } = counted();
    const started = Date.now();
    await expect(retrying.chat.completions.create({ ...ask(), response_format: { type: 'json_schema', json_schema: { name: 'joke', schema: { type: 'nothing' } } } })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('response_format.json_schema.schema: not a valid JSON Schema'),
    });
    expect(sent()).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('takes the default values of refused members, and members that cannot change the answer', async () => {
    const res = await s.call('POST', '/api/v1/chat/completions', {
      body: {
        ...ask(),
        n: 1,
        response_format: { type: 'text' },
        logprobs: false,
        modalities: ['text'],
        store: false,
        service_tier: 'auto',
        audio: null,
        user: 'end-user-1',
        safety_identifier: 'u1',
        prompt_cache_key: 'k',
        metadata: { tag: 'x' },
        stream_options: null,
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi ' },
              { type: 'text', text: 'again' },
            ],
          },
        ],
      },
    });
    expect(res.status).toBe(200);
    const sent = upstream.requests[0] as { messages: { role: string; content: string }[] };
    expect(sent.messages.slice(-3)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'I cannot help with that.' },
      { role: 'user', content: 'hi again' },
    ]);
    for (const member of ['n', 'response_format', 'logprobs', 'store', 'user', 'metadata']) expect(sent).not.toHaveProperty(member);
  });

  it("passes a message's name (the spec's optional member) to the model", async () => {
    await client.chat.completions.create({
      model: projectId,
      messages: [
        { role: 'system', content: 'Two people write.', name: 'moderator' },
        { role: 'user', content: 'I prefer tea.', name: 'ada' },
        { role: 'assistant', content: 'Noted.', name: 'bot' },
        { role: 'user', content: 'And I coffee.', name: 'grace' },
      ],
    });
    const sent = upstream.requests[0] as { messages: { role: string; content: string; name?: string }[] };
    expect(sent.messages.slice(-4)).toEqual([
      { role: 'system', content: 'Two people write.', name: 'moderator' },
      { role: 'user', content: 'I prefer tea.', name: 'ada' },
      { role: 'assistant', content: 'Noted.', name: 'bot' },
      { role: 'user', content: 'And I coffee.', name: 'grace' },
    ]);
  });

  it('forwards the sampling members to the model', async () => {
    await client.chat.completions.create({ ...ask(), top_p: 0.5, frequency_penalty: 0.5, presence_penalty: -1, seed: 7, stop: 'END' });
    expect(upstream.requests[0]).toMatchObject({ top_p: 0.5, frequency_penalty: 0.5, presence_penalty: -1, seed: 7, stop: ['END'] });
    await client.chat.completions.create({ ...ask(), stop: ['A', 'B'] });
    expect(upstream.requests[1]).toMatchObject({ stop: ['A', 'B'] });
  });
});
