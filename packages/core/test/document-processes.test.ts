import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { DocumentProcesses } from '../src/knowledge/document-processes.js';
import { readDocument } from '../src/knowledge/read-document.js';
import { flateBombPdf, repeated } from '../src/testing/bombs.js';
import { processAlive } from '../src/testing/postgres-cluster.js';
import { ProcessPool } from '../src/workers/process-pool.js';

// Real child processes (the reader from the TypeScript sources, through the workspace's
// TypeScript hooks): the limits of time and memory, crashes, aborts, and that the processes go.

const utf8 = (s: string) => new TextEncoder().encode(s);
const OPTIONS = { chunkSize: 512, chunkOverlap: 64 };
const CRASHING = new URL('./fixtures/crashing-reader.ts', import.meta.url);

const readers: DocumentProcesses[] = [];
function reader(options: ConstructorParameters<typeof DocumentProcesses>[0] = {}): DocumentProcesses {
  const r = new DocumentProcesses(options);
  readers.push(r);
  return r;
}
afterEach(async () => {
  await Promise.all(readers.splice(0).map((r) => r.close()));
});

const gone = async (pid: number) => {
  for (let i = 0; i < 100 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return !processAlive(pid);
};
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the read to fail');
    },
    (error: { code: string; message: string; details?: unknown }) => error,
  );

describe('DocumentProcesses', () => {
  it('reads a document in a child process, as it would be read here, and keeps the process for the next one', async () => {
    const r = reader();
    const input = { bytes: utf8('# Pumps\n\nThe pump is checked every month. Leaks are fixed at once.'), fileName: 'pumps.md' };
    const reading = await r.read(input, OPTIONS);
    expect(reading).toEqual(await readDocument(input, OPTIONS));
    expect(reading.chunks[0]?.section).toBe('Pumps');
    const [pid] = r.pids as [number];
    expect(pid).toBeGreaterThan(0);
    expect(pid).not.toBe(process.pid);
    // At a lower priority than this process: the server's own threads come first.
    expect(getPriority(pid)).toBe(10);
    // Thousands of chunks come back in several messages, whole and in order.
    const many = { bytes: utf8(Array.from({ length: 3000 }, (_, i) => `Sentence number ${i} is here.`).join('\n\n')), fileName: 'many.txt' };
    const small = { chunkSize: 16, chunkOverlap: 0 };
    const chunks = (await r.read(many, small)).chunks;
    expect(chunks.length).toBeGreaterThan(1000);
    expect(chunks).toEqual((await readDocument(many, small)).chunks);
    // Megabytes go over in slices, whole and in order.
    const big = { bytes: Buffer.concat(Array.from({ length: 40_000 }, (_, i) => Buffer.from(`Line ${i} of a long file.\n`))), fileName: 'big.txt' };
    expect(big.bytes.length).toBeGreaterThan(4 * 256 * 1024);
    expect(await r.read(big, OPTIONS)).toEqual(await readDocument(big, OPTIONS));
    expect(r.pids).toEqual([pid]);
  });

  it('kills the process of a document past the time limit; that document fails naming the limit, the next one gets a new process', async () => {
    const r = reader({ limits: { timeoutMs: 300 }, limitHints: { timeoutMs: '--document-timeout' } });
    await r.read({ bytes: utf8('warm'), fileName: 'a.txt' }, OPTIONS);
    const [first] = r.pids as [number];
    const slow = repeated('. ', 8 * 1024 * 1024);
    const error = await failure(r.read({ bytes: slow, fileName: 'dots.md' }, OPTIONS));
    expect(error).toMatchObject({
      code: 'payload_too_large',
      message: 'parsing and chunking the document did not end in time, over the limit of 300 ms (--document-timeout)',
      details: { limit: 'timeoutMs' },
    });
    expect(await gone(first)).toBe(true);
    expect((await r.read({ bytes: utf8('still working'), fileName: 'c.txt' }, OPTIONS)).chunks[0]?.text).toBe('still working');
    expect(r.pids).not.toContain(first);
  });

  it('kills a process whose memory passes the limit, also memory a heap limit does not count (a PDF stream inflated into typed arrays)', async () => {
    const r = reader({ limits: { memoryMb: 300 } });
    const bomb = flateBombPdf(2048);
    expect(bomb.length).toBeLessThan(4 * 1024 * 1024);
    const error = await failure(r.read({ bytes: bomb, fileName: 'flate.pdf' }, OPTIONS));
    expect(error).toMatchObject({
      code: 'payload_too_large',
      message: 'parsing and chunking the document needed more memory, over the limit of 300 MB (knowledge.limits.memoryMb)',
      details: { limit: 'memoryMb' },
    });
    expect((await r.read({ bytes: utf8('after the bomb'), fileName: 'd.txt' }, OPTIONS)).chunks).toHaveLength(1);
  }, 60_000);

  it('a crash fails only its own document: one read at the same time completes, and a new process takes the next', async () => {
    const r = reader({ entry: CRASHING, processes: 2 });
    const [thrown, fine] = await Promise.allSettled([
      r.read({ bytes: utf8('x'), fileName: 'throw.txt' }, OPTIONS),
      r.read({ bytes: repeated('Fine words. ', 200_000), fileName: 'fine.txt' }, OPTIONS),
    ]);
    expect(thrown).toMatchObject({ status: 'rejected', reason: { code: 'internal', message: 'the document reader crashed: boom from a parser callback (exit code 70)' } });
    expect(fine).toMatchObject({ status: 'fulfilled' });
    const exited = await failure(r.read({ bytes: utf8('x'), fileName: 'exit.txt' }, OPTIONS));
    expect(exited).toMatchObject({ code: 'internal', message: 'the document reader crashed (exit code 3)' });
    expect((await r.read({ bytes: utf8('after the crashes'), fileName: 'e.txt' }, OPTIONS)).chunks).toHaveLength(1);
  });

  it('stops the process of an aborted document; the reader goes on', async () => {
    const r = reader({ processes: 1 });
    await r.read({ bytes: utf8('warm'), fileName: 'a.txt' }, OPTIONS);
    const [pid] = r.pids as [number];
    const controller = new AbortController();
    const reading = r.read({ bytes: repeated('. ', 8 * 1024 * 1024), fileName: 'slow.md' }, OPTIONS, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('deleted meanwhile')), 100);
    await expect(reading).rejects.toThrow('deleted meanwhile');
    expect(await gone(pid)).toBe(true);
    expect((await r.read({ bytes: utf8('next'), fileName: 'b.txt' }, OPTIONS)).chunks).toHaveLength(1);
  });

  it('fails the waiting documents when its process cannot start, instead of starting it again and again', async () => {
    const r = reader({ entry: new URL('./fixtures/broken-reader.ts', import.meta.url) });
    const error = await failure(r.read({ bytes: utf8('x'), fileName: 'a.txt' }, OPTIONS));
    expect(error).toMatchObject({ code: 'internal', message: expect.stringMatching(/^the document reader could not start: .*this reader cannot load.* \(exit code 1\)$/) });
    expect(r.pids).toEqual([]);
  });

  it('shares warm processes between readers of one configuration; closing the last one ends them', async () => {
    const a = reader();
    const b = reader();
    await a.read({ bytes: utf8('one'), fileName: 'a.txt' }, OPTIONS);
    await b.read({ bytes: utf8('two'), fileName: 'b.txt' }, OPTIONS);
    const pids = a.pids;
    expect(b.pids).toEqual(pids);
    await a.close();
    await expect(a.read({ bytes: utf8('x'), fileName: 'x.txt' }, OPTIONS)).rejects.toMatchObject({ code: 'aborted' });
    expect((await b.read({ bytes: utf8('three'), fileName: 'c.txt' }, OPTIONS)).chunks).toHaveLength(1);
    await b.close();
    for (const pid of pids) expect(await gone(pid)).toBe(true);
  });
});

describe('ProcessPool', () => {
  const ENTRY = new URL('../src/knowledge/document-process.ts', import.meta.url);
  const request = (text: string, fileName = 'a.txt') => ({
    message: { input: { fileName }, options: OPTIONS, limits: {} },
    attachment: utf8(text),
    timeoutMs: 60_000,
    overTime: () => new Error('time'),
    overMemory: () => new Error('memory'),
  });

  it('keeps one warm process for a stream of small requests; a second starts only for a request kept waiting', async () => {
    const pool = new ProcessPool({ entry: ENTRY, label: 'the document reader', processes: 2, memoryMb: 1024, spawnAfterMs: 1000 });
    try {
      await pool.run(request('warm'));
      await Promise.all(Array.from({ length: 30 }, (_, i) => pool.run(request(`Small document ${i}.`))));
      expect(pool.pids).toHaveLength(1);
      // A long document holds the process: the small one behind it gets a second one.
      const long = pool.run(request('. '.repeat(4 * 1024 * 1024), 'dots.md'));
      const started = performance.now();
      await pool.run(request('Behind the long one.'));
      expect(pool.pids).toHaveLength(2);
      expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
      await long;
    } finally {
      await pool.close();
    }
  });

  /** Whether `promise` has settled, after a turn of the event loop. */
  const settled = async (promise: Promise<unknown>) => {
    let done = false;
    promise.then(
      () => (done = true),
      () => (done = true),
    );
    await new Promise((r) => setTimeout(r, 10));
    return done;
  };
  const long = (owner: string, signal: AbortSignal) => ({ ...request('. '.repeat(4 * 1024 * 1024), 'dots.md'), owner, signal });

  it('gives a free process to the owner with the fewest requests running, not to the oldest request', async () => {
    const pool = new ProcessPool({ entry: ENTRY, label: 'the document reader', processes: 2, memoryMb: 1024, spawnAfterMs: 0 });
    try {
      await Promise.all([pool.run(request('warm one')), pool.run(request('warm two'))]);
      const stop = new AbortController();
      // About a second and four seconds of reading.
      const a1 = pool.run({ ...request('. '.repeat(512 * 1024), 'dots.md'), owner: 'a' });
      const a2 = pool.run(long('a', stop.signal));
      a2.catch(() => {});
      const order: string[] = [];
      const a3 = pool.run({ ...request('The third of a.'), owner: 'a' }).then(() => order.push('a3'));
      const b1 = pool.run({ ...request('The first of b.'), owner: 'b' }).then(() => order.push('b1'));
      await a1;
      // b has none running, a has one: b's request takes the freed process although a's third is older.
      await Promise.all([a3, b1]);
      expect(order).toEqual(['b1', 'a3']);
      expect(await settled(a2)).toBe(false);
      stop.abort(new Error('stopped'));
    } finally {
      await pool.close();
    }
  });

  it('takes turns between owners with as many running: with every process just killed, the owner served longest ago goes first', async () => {
    const pool = new ProcessPool({ entry: ENTRY, label: 'the document reader', processes: 1, memoryMb: 1024, spawnAfterMs: 0 });
    try {
      await pool.run(request('warm'));
      const stop = new AbortController();
      const a1 = pool.run(long('a', stop.signal));
      a1.catch(() => {});
      const order: string[] = [];
      const a2 = pool.run({ ...request('The second of a.'), owner: 'a' }).then(() => order.push('a2'));
      const b1 = pool.run({ ...request('The first of b.'), owner: 'b' }).then(() => order.push('b1'));
      // Its process killed, a has none running, as b: b, never served, goes before a's older second.
      stop.abort(new Error('stopped'));
      await Promise.all([a2, b1]);
      expect(order).toEqual(['b1', 'a2']);
    } finally {
      await pool.close();
    }
  });

  it('keeps the spare process for owners with none running: an owner whose process was just killed waits for its replacement', async () => {
    const pool = new ProcessPool({ entry: ENTRY, label: 'the document reader', processes: 1, spare: 1, memoryMb: 1024, spawnAfterMs: 60_000 });
    try {
      await pool.run(request('warm'));
      const stop = new AbortController();
      const a1 = pool.run(long('a', stop.signal));
      a1.catch(() => {});
      // b's first request starts the spare process, and leaves it warm.
      await pool.run({ ...request('The first of b.'), owner: 'b' });
      const order: string[] = [];
      const a2 = pool.run({ ...request('The second of a.'), owner: 'a' }).then(() => order.push('a2'));
      // a's process is killed (as at its time limit): a has none running, but a process starts
      // for it at once, and the warm spare stays for b, whose second request is read first.
      stop.abort(new Error('stopped'));
      const b2 = pool.run({ ...request('The second of b.'), owner: 'b' }).then(() => order.push('b2'));
      await Promise.all([a2, b2]);
      expect(order).toEqual(['b2', 'a2']);
      expect(pool.pids).toHaveLength(2);
    } finally {
      await pool.close();
    }
  });

  it("starts a spare process at once for an owner with none running while another owner's requests fill every process", async () => {
    const pool = new ProcessPool({ entry: ENTRY, label: 'the document reader', processes: 1, spare: 1, memoryMb: 1024, spawnAfterMs: 60_000 });
    try {
      await pool.run(request('warm'));
      const stop = new AbortController();
      const a1 = pool.run(long('a', stop.signal));
      a1.catch(() => {});
      const a2 = pool.run({ ...request('The second of a.'), owner: 'a' });
      // Not after spawnAfterMs (a minute): at once, and b's document is read while a's long one is.
      await pool.run({ ...request('The first of b.'), owner: 'b' });
      expect(pool.pids).toHaveLength(2);
      expect(await settled(a1)).toBe(false);
      // The spare is only for an owner with none running: a's second waits for a's first.
      expect(await settled(a2)).toBe(false);
      stop.abort(new Error('stopped'));
      await a2;
    } finally {
      await pool.close();
    }
  });
});
