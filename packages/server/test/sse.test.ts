import { memoryStorage } from '@agent-platform/adapters-storage/memory';
import { AgentPlatform } from '@agent-platform/core';
import { serve } from 'h3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.js';
import { dataFrame, eventStream } from '../src/sse.js';

/** A real HTTP server on loopback over an in-memory platform, with the given keep-alive interval. */
async function startApp(platform: AgentPlatform, sseKeepAliveMs?: number) {
  const server = serve(createApp(platform, sseKeepAliveMs ? { sseKeepAliveMs } : {}), { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false });
  await server.ready();
  const address = server.node?.server?.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, close: () => server.close(true) };
}

let platform: AgentPlatform;
let key: string;
let chatId: string;
const newStream = async () => (await platform.createStream({ userId }, chatId, { chatId })).stream.id;
let userId: string;

beforeAll(async () => {
  platform = new AgentPlatform({ storage: memoryStorage() });
  const created = await platform.createUserWithKey({ name: 'sse' });
  key = created.key;
  userId = created.userId;
  const project = (await platform.createProject({ userId }, { name: 'p', model: 'm', provider: 'openai' })).project;
  chatId = (await platform.createChat({ userId }, { projectId: project.id })).chat.id;
});
afterAll(async () => {
  await platform.close();
});

/** Reads a response body until `done(text)` holds, or fails after `ms`. */
async function readUntil(res: Response, done: (text: string) => boolean, ms: number): Promise<string> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = setTimeout(() => void reader.cancel(), ms);
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => {});
  }
  return text;
}

describe('Server-Sent Events responses', () => {
  it('a replay of a stream with no events yet sends its headers and first bytes at once', async () => {
    const app = await startApp(platform);
    try {
      const headers = { authorization: `Bearer ${key}` };
      await fetch(`${app.url}/api/v1/projects`, { headers }); // warm the connection path once
      // The best of three each: the replay's first bytes, and (the baseline, on the same server
      // in the same moment) a whole ordinary answer.
      let firstBytes = Number.POSITIVE_INFINITY;
      let plain = Number.POSITIVE_INFINITY;
      for (let round = 0; round < 3; round++) {
        const streamId = await newStream();
        const started = performance.now();
        const res = await fetch(`${app.url}/api/chats/${chatId}/streams/${streamId}`, { headers, signal: AbortSignal.timeout(5000) });
        const text = await readUntil(res, (t) => t.length > 0, 5000);
        firstBytes = Math.min(firstBytes, performance.now() - started);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toContain('text/event-stream');
        expect(res.headers.get('x-accel-buffering')).toBe('no');
        expect(res.headers.get('cache-control')).toBe('no-cache');
        expect(text).toBe(': ok\n\n');
        const plainStarted = performance.now();
        await (await fetch(`${app.url}/api/v1/projects`, { headers })).text();
        plain = Math.min(plain, performance.now() - plainStarted);
      }
      // As soon as an ordinary answer, not at the first event or keep-alive (15 s).
      expect(firstBytes / Math.max(plain, 10)).toBeLessThan(10);
    } finally {
      await app.close();
    }
  });

  it('sends a keep-alive comment every interval while nothing happens', async () => {
    const app = await startApp(platform, 50);
    try {
      const res = await fetch(`${app.url}/api/chats/${chatId}/streams/${await newStream()}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5000) });
      const text = await readUntil(res, (t) => (t.match(/: keep-alive\n\n/g) ?? []).length >= 2, 5000);
      expect(text.startsWith(': ok\n\n')).toBe(true);
      expect((text.match(/: keep-alive\n\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
    } finally {
      await app.close();
    }
  });
});

describe('eventStream when the client goes away', () => {
  /** An iterable that yields one value, then answers the next call only when `release` is called, with `then`. */
  function stalled(then: () => unknown) {
    let release = () => {};
    const waiting = new Promise<void>((resolve) => {
      release = resolve;
    });
    const events = (async function* () {
      yield 1;
      await waiting;
      const value = then();
      yield value;
    })();
    return { events, release };
  }

  for (const [what, then] of [
    ['a value', () => 2],
    [
      'a failure',
      () => {
        throw new TypeError('a bug that happened after the client left');
      },
    ],
  ] as const) {
    it(`tells the client went away once, and hands on ${what} that comes after it without writing to the closed stream`, async () => {
      const { events, release } = stalled(then);
      const told: string[] = [];
      const late: unknown[] = [];
      const failures: unknown[] = [];
      const res = eventStream(events, {
        frame: dataFrame,
        failure: (e) => {
          failures.push(e);
          return dataFrame({ error: String(e) });
        },
        keepAliveMs: 60_000,
        onClientGone: () => told.push('gone'),
        onFailureAfterClientGone: (e) => late.push(e),
      });
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      let text = '';
      while (!text.includes('data: 1')) text += new TextDecoder().decode((await reader.read()).value);
      // The stream pulls again and waits for the stalled iterable: the client cancels, then the value comes.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const cancelled = reader.cancel();
      release();
      await cancelled;
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(told).toEqual(['gone']);
      expect(failures).toEqual([]);
      expect(late.map((e) => (e as Error).message)).toEqual(what === 'a failure' ? ['a bug that happened after the client left'] : []);
    });
  }
});
