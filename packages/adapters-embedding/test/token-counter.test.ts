import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import cl100k, { countTokens as count } from 'gpt-tokenizer/encoding/cl100k_base';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openaiEmbedder } from '../src/openai.js';
import { type TokenCounter, tokenCounter } from '../src/token-counter.js';
import { bagOfWords, type FakeOpenAI, startFakeOpenAI } from './openai-server.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI({ apiKey: 'sk-test', models: { 'text-embedding-3-small': 1536 } });
});
afterAll(() => fake.close());

// Every handle is closed after each test, so the next test starts with no worker.
const open: { close?(): Promise<void> }[] = [];
const counter = (): TokenCounter => {
  const c = tokenCounter();
  open.push(c);
  return c;
};
const embedder = (options: { maxInputTokens?: number; batchSize?: number; baseURL?: string } = {}) => {
  const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxRetries: 0, ...options });
  open.push(model);
  return model;
};
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(open.splice(0).map((c) => c.close?.()));
});

// As the embedder counts: text that looks like a special token is ordinary text.
const countTokens = (text: string) => count(text, { disallowedSpecial: new Set() });

/** Texts of `words` pseudo-random words each (a fixed sequence, so runs are repeatable). */
function texts(count: number, words: number): string[] {
  let seed = 11;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed;
  };
  return Array.from({ length: count }, (_, i) => `${i}: ${Array.from({ length: words }, () => (next() % 1_000_000).toString(36)).join(' ')}`);
}
const long = texts(1, 12_000)[0] as string;
/** The workers that were posted a request since the spy was set (a terminated one has threadId -1). */
const spyWorkers = () => {
  const posted = vi.spyOn(Worker.prototype, 'postMessage');
  const from = posted.mock.contexts.length;
  return () => new Set(posted.mock.contexts.slice(from) as Worker[]);
};

/**
 * An embeddings server on 127.0.0.1 that counts nothing (the fake OpenAI server counts tokens on
 * this thread): it keeps the inputs it received and when the first request arrived.
 */
async function plainUpstream() {
  let first = 0;
  const inputs: string[] = [];
  const server = createServer((req, res) => {
    first ||= performance.now();
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const input = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { input: string[] }).input;
      inputs.push(...input);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model: 'm', data: input.map((t, index) => ({ object: 'embedding', index, embedding: bagOfWords(t, 8) })) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, inputs, firstAt: () => first };
}

describe('the token counter (cl100k_base on a worker thread)', () => {
  it('counts exactly and cuts to maxInputTokens, blank texts becoming one space', async () => {
    const samples = ['one two three', 'Café naïve 日本語 😀👍🏽 <|endoftext|> \ud800 lone', '', '   ', ...texts(5, 40), long];
    const clipped = await counter().clip(samples, { maxInputTokens: 8191, maxTotalTokens: 10 });
    expect(clipped.slice(0, 2).map((c) => c.text)).toEqual(samples.slice(0, 2));
    expect(clipped.slice(2, 4)).toEqual([
      { text: ' ', tokens: 1 },
      { text: ' ', tokens: 1 },
    ]);
    for (const [i, c] of clipped.entries()) if (i < 2 || (i >= 4 && i < 9)) expect(c.tokens).toBe(countTokens(samples[i] as string));
    const cut = clipped[9];
    expect(cut?.tokens).toBe(8191);
    expect(long.startsWith(cut?.text as string)).toBe(true);
    expect(countTokens(cut?.text as string)).toBeLessThanOrEqual(8191);
    expect(countTokens(cut?.text as string)).toBeGreaterThan(8000);
  });

  it('needs no worker when every text and the whole call fit the limits by their UTF-8 length', async () => {
    const workers = spyWorkers();
    const short = ['alpha', 'Café 日本語 😀', '', ...texts(20, 30)];
    const clipped = await counter().clip(short, { maxInputTokens: 8191, maxTotalTokens: 300_000 });
    expect(clipped.map((c) => c.text)).toEqual(short.map((t) => (t === '' ? ' ' : t)));
    expect(workers().size).toBe(0);
    // The bound it relies on: a cl100k token is at least one UTF-8 byte.
    const varied = [...short, '\ud83d\ude00'.repeat(50), '\udc00\ud800 x', '<|endoftext|><|fim_prefix|>', '    \t\n\n\n', 'aaaaaaaaaaaaaaaa'.repeat(64), long];
    for (const t of varied) expect(countTokens(t)).toBeLessThanOrEqual(Buffer.byteLength(t, 'utf8'));
  });

  it('sends the embedder the same requests as it did on the main thread: exact counts split batches at maxRequestTokens', async () => {
    const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: fake.url, maxRequestTokens: 20_000 });
    open.push(model);
    const batch = texts(12, 1000);
    const before = fake.requests.length;
    expect(await model.embed(batch)).toHaveLength(12);
    const sent = fake.requests.slice(before).map((r) => r.body.input as string[]);
    // Greedy packing by exact counts, as before: each request as many texts as fit 20,000 tokens.
    const expected: string[][] = [];
    let tokens = 0;
    for (const t of batch) {
      const n = countTokens(t);
      if (expected.length === 0 || tokens + n > 20_000) {
        expected.push([]);
        tokens = 0;
      }
      expected.at(-1)?.push(t);
      tokens += n;
    }
    expect(expected.length).toBeGreaterThan(1);
    expect(sent).toEqual(expected);
  });

  it('keeps the main thread turning while a large batch is counted', async () => {
    const upstream = await plainUpstream();
    const model = embedder({ baseURL: upstream.url });
    // ~4 MB in texts under maxInputTokens: every one counted to its end (about a second of tokenizer).
    const batch = texts(1000, 500);
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), 2);
    const started = performance.now();
    const vectors = await model.embed(batch);
    clearInterval(timer);
    expect(vectors).toHaveLength(1000);
    // Counting ends before the first request arrives.
    const arrived = upstream.firstAt();
    const marks = [started, ...ticks.filter((t) => t < arrived), arrived];
    const gaps = marks.slice(1).map((t, i) => t - (marks[i] as number));
    // On the main thread, counting held it for most of the window in one stretch.
    expect(Math.max(...gaps)).toBeLessThan((arrived - started) / 4);
  });

  it('fails the call whose worker dies with a clear error; the next call starts a new worker', async () => {
    const model = embedder();
    // The worker is stopped instead of being sent the request: it dies with the call in flight.
    vi.spyOn(Worker.prototype, 'postMessage').mockImplementationOnce(function (this: Worker) {
      void this.terminate();
    });
    await expect(model.embed(['short', long])).rejects.toMatchObject({
      code: 'internal',
      retryable: true,
      message: expect.stringMatching(/^The openai embedder's token counter stopped \(exit code \d+\)$/),
    });
    const workers = spyWorkers();
    const before = fake.requests.length;
    expect(await model.embed(['short', long])).toHaveLength(2);
    expect(workers().size).toBe(1);
    const [sent] = fake.requests.slice(before).map((r) => r.body.input as string[]);
    expect(sent?.[0]).toBe('short');
    expect(countTokens(sent?.[1] as string)).toBeLessThanOrEqual(8191);
  });

  it('is one worker for every embedder of the process, stopped by the last close and started again by a later call', async () => {
    const workers = spyWorkers();
    const a = embedder({ maxInputTokens: 100 });
    const b = embedder({ maxInputTokens: 200 });
    await Promise.all([a.embed([long]), b.embed([long, 'x'])]);
    const [worker] = workers();
    expect(workers().size).toBe(1);
    // Closing one embedder leaves the worker to the other.
    await a.close?.();
    await b.embed([long]);
    expect(workers().size).toBe(1);
    expect(workers().has(worker as Worker)).toBe(true);
    expect(worker?.threadId).toBeGreaterThan(0);
    await b.close?.();
    expect(worker?.threadId).toBe(-1);
    await a.embed([long]);
    expect(workers().size).toBe(2);
  });

  it("merges long pre-tokens with a heap into exactly gpt-tokenizer's tokens", async () => {
    // A plain JavaScript worker script: imported on the main thread it only exports.
    const workerScript = new URL('../src/token-worker.js', import.meta.url).href;
    const { heapMerge } = (await import(workerScript)) as { heapMerge(core: unknown, piece: Uint8Array): number[] };
    // This process's encoding is gpt-tokenizer's own (the heap merge is installed in the worker only).
    const core = (cl100k as unknown as { bytePairEncodingCoreProcessor: { bytePairMerge(piece: Uint8Array): number[] } }).bytePairEncodingCoreProcessor;
    let seed = 5;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const alphabet = [...'abcdefghijklmnopqrstuvwxyz#=-.,;:!?()[]{}<>/\\\'"日本語😀é '];
    const encoder = new TextEncoder();
    const pieces = [
      ...Array.from({ length: 1500 }, () => Array.from({ length: 1 + random(300) }, () => alphabet[random(alphabet.length)]).join('')),
      ...['#', 'a', '=', ' ', 'é', '😀', 'ab', '-=', 'the'].map((unit) => unit.repeat(1 + random(800))),
    ];
    const mismatches = pieces.filter((piece) => {
      const bytes = encoder.encode(piece);
      return String(heapMerge(core, bytes)) !== String(core.bytePairMerge(bytes));
    });
    expect(mismatches).toEqual([]);
  });

  it('counts a long run of one character in about linear time (gpt-tokenizer alone takes minutes)', async () => {
    // Not the fake OpenAI server: it counts what it receives with gpt-tokenizer.
    const upstream = await plainUpstream();
    const model = embedder({ baseURL: upstream.url });
    // One pre-token each: 256 KB of `#` took gpt-tokenizer 46 s, 512 KB of letters about four times that.
    const hashes = '#'.repeat(256 * 1024);
    expect(await model.embed(['a'.repeat(512 * 1024), hashes], { purpose: 'query' })).toHaveLength(2);
    const [letters, sentHashes] = upstream.inputs;
    expect(countTokens(letters as string)).toBeLessThanOrEqual(8191);
    expect(sentHashes).toBe(hashes);
  }, 30_000);

  it('rejects the calls in flight when the last holder closes', async () => {
    const c = counter();
    const pending = expect(c.clip(texts(200, 500), { maxInputTokens: 8191, maxTotalTokens: 10 })).rejects.toMatchObject({
      code: 'aborted',
      message: "The openai embedder's token counter was closed",
    });
    await c.close();
    await pending;
  });
});

// The built package in plain Node (no `source` condition): token-worker.js must sit next to the
// bundled code in dist. The long text needs counting, so the worker runs in each.
const packageDir = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(new URL('../dist/openai.js', import.meta.url)) && existsSync(new URL('../dist/token-worker.js', import.meta.url));
const child = (script: string, preload?: string) =>
  promisify(execFile)(process.execPath, [...(preload ? ['--import', `data:text/javascript,${encodeURIComponent(preload)}`] : []), '--input-type=module', '-e', script], {
    cwd: packageDir,
    timeout: 20_000,
    env: { ...process.env, BASE_URL: fake.url },
  });
const embedLong = `
  import { openaiEmbedder } from '@agent-platform/adapters-embedding/openai';
  const model = openaiEmbedder({ model: 'text-embedding-3-small', apiKey: 'sk-test', baseURL: process.env.BASE_URL, maxRetries: 0 });
  const long = Array.from({ length: 12000 }, (_, i) => 'w' + (i % 997)).join(' ');
  const vectors = await model.embed(['short', long]);
  console.log(JSON.stringify({ resolved: import.meta.resolve('@agent-platform/adapters-embedding/openai'), lengths: vectors.map((v) => v.length) }));`;
const lastSent = () => (fake.requests.at(-1)?.body.input as string[]) ?? [];

describe.skipIf(!built)('the built package (dist)', () => {
  it('never loads gpt-tokenizer on the main thread', async () => {
    // On the main thread only (Node runs a preload in worker threads too): any import or require
    // of gpt-tokenizer there throws, and the embed call with it.
    const guard = `
      import Module, { register } from 'node:module';
      import { isMainThread } from 'node:worker_threads';
      if (isMainThread) {
        const hooks = "export async function resolve(s, c, next) { if (s.includes('gpt-tokenizer')) throw new Error('gpt-tokenizer imported on the main thread'); return next(s, c); }";
        register('data:text/javascript,' + encodeURIComponent(hooks));
        const load = Module._load;
        Module._load = function (request, ...rest) {
          if (String(request).includes('gpt-tokenizer')) throw new Error('gpt-tokenizer required on the main thread');
          return load.call(this, request, ...rest);
        };
        process.stderr.write('guard main\\n');
      }`;
    const { stdout, stderr } = await child(`${embedLong}\n  await model.close();`, guard);
    expect(stderr).toMatch(/guard main/);
    const result = JSON.parse(stdout) as { resolved: string; lengths: number[] };
    expect(result.resolved).toMatch(/\/dist\/openai\.js$/);
    expect(result.lengths).toEqual([1536, 1536]);
    // Counted and cut, in the worker.
    const [short, cut] = lastSent();
    expect(short).toBe('short');
    expect(countTokens(cut as string)).toBeLessThanOrEqual(8191);
    expect(countTokens(cut as string)).toBeGreaterThan(8000);
  });

  it('exits by itself with the token worker idle (no close)', async () => {
    // A worker that kept the process alive would run into execFile's timeout (a rejection here).
    const { stdout } = await child(embedLong);
    expect((JSON.parse(stdout) as { lengths: number[] }).lengths).toEqual([1536, 1536]);
    expect(countTokens(lastSent()[1] as string)).toBeLessThanOrEqual(8191);
  }, 40_000);
});
