import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { sseEvents, startTestServer, type TestServer } from './helpers.js';

// The answer's finish reason `content_filter` and the model's reasoning (`reasoning_content`, as
// DeepSeek and vLLM send it), through the server, against an OpenAI-compatible upstream that
// streams them: live, whole, replayed from a resumable stream, and in the stored chat.

let upstream: FakeUpstream;
let s: TestServer;
let client: OpenAI;
let projectId: string;

/** A chunk's delta and a message as an OpenAI-compatible reasoning server gives them (not in OpenAI's types). */
type WithReasoning = { reasoning_content?: string; content?: string | null };

beforeAll(async () => {
  upstream = await startUpstream();
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream', AGENT_PLATFORM_MODEL_TIMEOUT_MS: '1500' } });
  client = new OpenAI({ apiKey: s.keyA, baseURL: `${s.url}/api/v1`, maxRetries: 0 });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Thinker', model: 'deepseek-reasoner', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});
beforeEach(() => {
  upstream.requests.length = 0;
});

const ask = (content: string) => ({ model: projectId, messages: [{ role: 'user' as const, content }] });

/** The chunks of an SSE body (a live completion or a stream's replay). */
const chunksOf = (sse: string) => sseEvents<OpenAI.ChatCompletionChunk>(sse);

const reasoningOf = (chunks: readonly OpenAI.ChatCompletionChunk[]) => chunks.map((c) => (c.choices[0]?.delta as WithReasoning | undefined)?.reasoning_content ?? '').join('');
const textOf = (chunks: readonly OpenAI.ChatCompletionChunk[]) => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
const finishOf = (chunks: readonly OpenAI.ChatCompletionChunk[]) => chunks.flatMap((c) => (c.choices[0]?.finish_reason ? [c.choices[0].finish_reason] : []));

/** A chat of the project with a resumable stream, its completion recorded into it (`stream` or not), and the replay. */
async function recorded(content: string, stream: boolean) {
  const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
  const streamId = (await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } })).body.stream.id;
  const live = await s.call('POST', '/api/v1/ai/chat/completions', { raw: JSON.stringify({ ...ask(content), chatId: chat.id, streamId, stream }) });
  expect(live.status).toBe(200);
  const replay = await (await fetch(`${s.url}/api/chats/${chat.id}/streams/${streamId}`, { headers: { authorization: `Bearer ${s.keyA}` } })).text();
  const stored = (await s.call('GET', `/api/chats/${chat.id}/messages`)).body.messages as Record<string, unknown>[];
  return { live, replay: chunksOf(replay), stored };
}

describe('finish_reason content_filter', () => {
  it('ends a filtered answer with content_filter, streamed and not, through the openai client', async () => {
    upstream.script({ text: 'I cannot ', finishReason: 'content_filter' });
    const whole = await client.chat.completions.create(ask('something unsafe'));
    expect(whole.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'I cannot ' } });

    upstream.script({ text: 'I cannot ', finishReason: 'content_filter' });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await client.chat.completions.create({ ...ask('something unsafe'), stream: true })) chunks.push(chunk);
    expect(finishOf(chunks)).toEqual(['content_filter']);
    expect(textOf(chunks)).toBe('I cannot ');
  });

  it('keeps content_filter in a resumable stream and its replay, and the chat keeps the answer the model gave', async () => {
    for (const stream of [true, false]) {
      upstream.script({ text: 'Partly said', finishReason: 'content_filter' });
      const { live, replay, stored } = await recorded('something unsafe', stream);
      if (stream) expect(finishOf(chunksOf(live.body as string))).toEqual(['content_filter']);
      else expect(live.body.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'Partly said' } });
      expect(finishOf(replay)).toEqual(['content_filter']);
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'something unsafe'],
        ['assistant', 'Partly said'],
      ]);
    }
  });
});

describe('reasoning_content', () => {
  const thought = 'The user greets me, so I greet back.';

  it('streams the reasoning as delta.reasoning_content, never in content, through the openai client', async () => {
    upstream.script({ reasoning: thought, text: 'Hello there.' });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await client.chat.completions.create({ ...ask('hello'), stream: true })) chunks.push(chunk);
    expect(reasoningOf(chunks)).toBe(thought);
    expect(textOf(chunks)).toBe('Hello there.');
    // Each chunk carries one or the other, the reasoning first (as it came).
    const kinds = chunks.flatMap((c) => {
      const delta = c.choices[0]?.delta as WithReasoning | undefined;
      return delta?.reasoning_content ? ['reasoning'] : delta?.content ? ['text'] : [];
    });
    expect(kinds.indexOf('text')).toBeGreaterThan(kinds.lastIndexOf('reasoning'));
    expect(chunks.some((c) => (c.choices[0]?.delta as WithReasoning | undefined)?.reasoning_content && c.choices[0]?.delta.content)).toBe(false);
  });

  it('answers the reasoning as message.reasoning_content when not streamed; none when the model gave none', async () => {
    upstream.script({ reasoning: thought, text: 'Hello there.' });
    const whole = await client.chat.completions.create(ask('hello'));
    expect(whole.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Hello there.', reasoning_content: thought });
    upstream.script({ text: 'Plain.' });
    const plain = await client.chat.completions.create(ask('hello'));
    expect(plain.choices[0]?.message).not.toHaveProperty('reasoning_content');
  });

  it('keeps the reasoning in a resumable stream and its replay, and never stores it in the chat', async () => {
    for (const stream of [true, false]) {
      upstream.script({ reasoning: thought, text: 'Hello there.' });
      const { live, replay, stored } = await recorded('hello', stream);
      if (stream) expect(reasoningOf(chunksOf(live.body as string))).toBe(thought);
      else expect(live.body.choices[0].message).toMatchObject({ content: 'Hello there.', reasoning_content: thought });
      expect(reasoningOf(replay)).toBe(thought);
      expect(textOf(replay)).toBe('Hello there.');
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'hello'],
        ['assistant', 'Hello there.'],
      ]);
      expect(JSON.stringify(stored)).not.toContain('greets');
    }
  });
});
