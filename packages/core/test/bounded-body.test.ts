import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlatformError } from '../src/errors.js';
import { answerTooLargeIn, boundedFetch, limitBody } from '../src/net/bounded-body.js';
import { byteBudget } from '../src/net/upstream-limits.js';

/**
 * Reading upstream answers under byte limits, against a real loopback server: bodies that never
 * end (plain, gzip-compressed, an event stream's line), a declared length past the limit, and
 * well-behaved event streams, which must come through unchanged, a whole line at a time.
 */

const KiB = 1024;
let server: Server;
let base: string;
/** What each endless answer wrote before its client went away, by path. */
const written = new Map<string, number>();
const closed = new Set<string>();

/** Resolves at the stream's next `drain` or `close`, leaving no listener behind. */
function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}

/** Writes `chunk` until the client goes away (at most 1 GiB), recording how much went out. */
async function endless(path: string, res: ServerResponse | NodeJS.WritableStream, chunk: Buffer): Promise<void> {
  let total = 0;
  const target = res as NodeJS.WritableStream & { destroyed?: boolean };
  while (total < 1024 * 1024 * KiB && !target.destroyed) {
    total += chunk.byteLength;
    written.set(path, total);
    if (!target.write(chunk)) await drained(target);
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    res.on('close', () => closed.add(path));
    if (path === '/small') return void res.writeHead(200, { 'content-type': 'text/plain', 'x-mark': 'yes' }).end('a'.repeat(1000));
    if (path === '/endless') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void endless(path, res, Buffer.alloc(16 * KiB, 'a'));
    }
    if (path === '/gzip') {
      // A compression bomb: a few KB on the wire per MB it unpacks to.
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(res);
      res.on('close', () => gzip.destroy());
      return void endless(path, gzip, Buffer.alloc(64 * KiB, 0));
    }
    if (path === '/declared') {
      // Says it is 100 MB long, then sends nothing: the limit must answer without waiting.
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 1024 * KiB) });
      res.flushHeaders();
      return;
    }
    if (path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Events cut at odd places, CRLF and bare CR line ends among them, a comment, a multi-line event.
      const pieces = ['data: {"a":', '1}\n\n', 'data: one\r\ndata: two\r\n\r\n: keep-alive\r', '\rdata: ', 'x'.repeat(3000), '\n', '\n', 'event: end\ndata: 3\n\n'];
      void (async () => {
        for (const piece of pieces) {
          res.write(piece);
          await new Promise((r) => setTimeout(r, 5));
        }
        res.end();
      })();
      return;
    }
    if (path === '/many-events') {
      // Each event small, all of them far past the event limit together.
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      return void endless(path, res, Buffer.from(`data: ${'b'.repeat(1000)}\n\n`.repeat(16)));
    }
    if (path === '/long-line') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: ');
      return void endless(path, res, Buffer.alloc(16 * KiB, 'c'));
    }
    if (path === '/long-event') {
      // Short lines, but no blank line ever ends the event.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return void endless(path, res, Buffer.from('data: dddddddddd\n'.repeat(1000)));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('expected the read to fail') as never,
    (error: unknown) => error as PlatformError,
  );

/** Resolves once the server saw `path`'s connection close. */
async function cutOff(path: string): Promise<void> {
  for (let i = 0; i < 200 && !closed.has(path); i++) await new Promise((r) => setTimeout(r, 10));
  expect(closed.has(path), `${path} was closed`).toBe(true);
}

describe('limitBody and boundedFetch', () => {
  it('hands a body within its limit on unchanged, with the status, headers and URL', async () => {
    const bounded = boundedFetch(fetch, { maxBytes: 1000, setting: '--max-x' });
    const response = await bounded(`${base}/small`);
    expect([response.status, response.headers.get('x-mark'), response.url]).toEqual([200, 'yes', `${base}/small`]);
    expect(await response.text()).toBe('a'.repeat(1000));
  });

  it('cuts an endless body off at its limit: the read fails naming the limit and the setting, and the upstream is disconnected', async () => {
    const seen: PlatformError[] = [];
    const bounded = boundedFetch(fetch, { maxBytes: 256 * KiB, subject: 'Upstream U', setting: '--max-x', onExceeded: (e) => seen.push(e) });
    const error = await failure((await bounded(`${base}/endless`)).text());
    expect(error).toMatchObject({
      code: 'upstream_error',
      message: 'Upstream U sent an answer larger than 262144 bytes, the limit set by --max-x: it was cut off there and not used',
      details: { limitBytes: 256 * KiB, setting: '--max-x' },
    });
    expect(seen).toEqual([error]);
    expect(answerTooLargeIn(new Error('wrapped', { cause: error }))).toBe(error);
    await cutOff('/endless');
    // What the server got out before the cut: the limit and what sockets buffer, not more.
    expect(written.get('/endless')).toBeLessThan(256 * KiB + 16 * 1024 * KiB);
  });

  it('counts a compressed answer at the size it unpacks to', async () => {
    const bounded = boundedFetch(fetch, { maxBytes: 1024 * KiB, setting: '--max-x' });
    const error = await failure((await bounded(`${base}/gzip`)).arrayBuffer());
    expect(error.message).toMatch(new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/gzip sent an answer larger than 1048576 bytes`));
    await cutOff('/gzip');
  });

  it('refuses a declared length past the limit at the first read, without waiting for the body', async () => {
    const response = await fetch(`${base}/declared`);
    const started = performance.now();
    const error = await failure(limitBody(response, { maxBytes: 1024 * KiB, setting: '--max-x' }, response.url).json());
    expect(error.details).toMatchObject({ limitBytes: 1024 * KiB });
    expect(performance.now() - started).toBeLessThan(5000);
    await cutOff('/declared');
  });

  it('passes an event stream on unchanged, a whole line at a time, whatever the line ends (CRLF, CR, LF)', async () => {
    const bounded = boundedFetch(fetch, { maxEventBytes: 4 * KiB, setting: '--max-x' });
    const response = await bounded(`${base}/events`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value).toString('utf8'));
    }
    const expected = `data: {"a":1}\n\ndata: one\r\ndata: two\r\n\r\n: keep-alive\r\rdata: ${'x'.repeat(3000)}\n\nevent: end\ndata: 3\n\n`;
    expect(chunks.join('')).toBe(expected);
    // Every chunk handed on completes a line: a parser that looks for a line end from the start
    // of the line it holds never searches the same bytes once per chunk.
    for (const chunk of chunks) expect(chunk).toMatch(/[\r\n]/);
    expect(chunks.length).toBeLessThan(8);
  });

  it('bounds each event of a stream, not the stream: many small events pass, an endless line or event does not', async () => {
    const bounded = boundedFetch(fetch, { maxEventBytes: 8 * KiB, setting: '--max-x' });
    const many = (await bounded(`${base}/many-events`)).body as ReadableStream<Uint8Array>;
    let read = 0;
    for await (const chunk of many) {
      read += chunk.byteLength;
      if (read > 512 * KiB) break; // far past one event's limit: fine
    }
    expect(read).toBeGreaterThan(512 * KiB);
    for (const path of ['/long-line', '/long-event']) {
      const error = await failure((await bounded(`${base}${path}`)).text());
      expect(error.message, path).toMatch(/sent an event larger than 8192 bytes, the limit set by --max-x/);
      await cutOff(path);
    }
  });

  it('takes the limit each request needs from a chooser, and keeps the properties of the fetch it wraps', async () => {
    const base_ = Object.assign((input: string | URL, init?: RequestInit) => fetch(input, init), { check: () => 'checked' });
    const chosen: string[] = [];
    const bounded = boundedFetch(base_, (request) => {
      chosen.push(`${request.method} ${new URL(request.url).pathname}`);
      return { maxBytes: request.method === 'GET' ? 10 : 10_000, setting: '--max-x' };
    });
    expect(bounded.check()).toBe('checked');
    await expect((await bounded(`${base}/small`)).text()).rejects.toMatchObject({ code: 'upstream_error' });
    expect(await (await bounded(`${base}/small`, { method: 'POST' })).text()).toHaveLength(1000);
    expect(chosen).toEqual(['GET /small', 'POST /small']);
  });
});

describe('limitBody and the event loop', () => {
  /** A body of `chunks` chunks of 64 KiB, all already waiting: each read finds data at once. */
  const waiting = (chunks: number, byte = 0x61) =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < chunks; i++) controller.enqueue(new Uint8Array(64 * KiB).fill(byte));
          controller.close();
        },
      }),
    );

  it.each([
    ['a whole body', { maxBytes: 64 * 1024 * KiB, setting: 's' }],
    ['an event stream whose line goes on', { maxEventBytes: 64 * 1024 * KiB, setting: 's' }],
  ])('reads %s that is already waiting with turns of the event loop between, not in one stretch', async (_what, limit) => {
    // 8 MiB that is there at once: without turns, every read would resolve as a microtask of the
    // one before, and nothing else would run until the whole body was read.
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const text = await limitBody(waiting(128), limit, 'http://127.0.0.1/').text();
    counting = false;
    expect(text.length).toBe(8 * 1024 * KiB);
    // One turn at least every 256 KiB read (32 for 8 MiB).
    expect(turns).toBeGreaterThanOrEqual(30);
  });
});

describe('byteBudget', () => {
  it('counts UTF-8 bytes as pieces arrive and throws past the limit', () => {
    const budget = byteBudget(10, () => new Error('too large') as PlatformError);
    budget.add('héllo'); // 6 bytes
    budget.addBytes(4);
    expect(budget.used).toBe(10);
    expect(() => budget.add('!')).toThrow('too large');
  });
});
