import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startUpstream } from './fixtures/openai-upstream.js';
import { startTestServer, type TestServer } from './helpers.js';

/** Every line the server logs, parsed. */
const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
let upstream: FakeUpstream;
let s: TestServer;
let projectId: string;

beforeAll(async () => {
  upstream = await startUpstream();
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  s = await startTestServer({ env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-upstream' }, logger });
  projectId = (await s.call('POST', '/api/projects/create', { body: { name: 'Streams', model: 'gpt-test', provider: 'openai' } })).body.project.id;
});
afterAll(async () => {
  await s.stop();
  await upstream.close();
});

const headers = () => ({ authorization: `Bearer ${s.keyA}`, 'content-type': 'application/json' });

/** Reads `res` until `count` SSE blocks arrived, then drops the connection as a reloading browser does. */
async function readThenDrop(res: Response, controller: AbortController, count: number): Promise<void> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let text = '';
  while ((text.match(/\n\n/g) ?? []).length < count) text += new TextDecoder().decode((await reader.read()).value);
  controller.abort();
}

describe('logs of recorded streams whose client goes away', () => {
  it('say so in an info line, never as an error', async () => {
    const chat = (await s.call('POST', '/api/chats', { body: { projectId } })).body.chat;
    const streamId = (await s.call('POST', `/api/chats/${chat.id}/streams`, { body: { chatId: chat.id } })).body.stream.id;
    upstream.script({ text: 'one two three four five six seven eight nine ten', chunkDelayMs: 40 });
    const from = lines.length;

    // The completion's client stops after a few events...
    const live = new AbortController();
    const res = await fetch(`${s.url}/api/v1/chat/completions`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ model: projectId, chatId: chat.id, streamId, stream: true, messages: [{ role: 'user', content: 'count' }] }),
      signal: live.signal,
    });
    await readThenDrop(res, live, 3);
    // ...and so does a reader of the replay route.
    const replaying = new AbortController();
    const replay = await fetch(`${s.url}/api/chats/${chat.id}/streams/${streamId}`, { headers: headers(), signal: replaying.signal });
    await readThenDrop(replay, replaying, 3);

    // The turn runs to its end without them (it is recorded), then the whole replay is there.
    const whole = await (await fetch(`${s.url}/api/chats/${chat.id}/streams/${streamId}`, { headers: headers() })).text();
    expect(whole.endsWith('data: [DONE]\n\n')).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const logged = lines.slice(from);
    // Nothing failed: no warning, no error, no stack trace ("Controller is already closed" was
    // logged at level 50 for each of the two).
    expect(logged.filter((l) => l.level >= 40)).toEqual([]);
    expect(JSON.stringify(logged)).not.toContain('stack');
    const gone = logged.filter((l) => l.msg === 'the client went away before the stream ended');
    const requestOf = (path: string) => logged.filter((l) => l.msg === 'request' && l.path === path).map((l) => l.reqId);
    const completionIds = requestOf('/api/v1/chat/completions');
    const replayIds = requestOf(`/api/chats/${chat.id}/streams/${streamId}`);
    expect(gone.map((l) => l.level)).toEqual([30, 30]);
    expect(gone.map((l) => l.reqId).sort()).toEqual([completionIds[0], replayIds[0]].sort());
  });
});
