import { afterEach, describe, expect, it } from 'vitest';
import { EmbedWorkerClient } from '../src/worker-client.js';

const script = new URL('./fixtures/scripted-worker.mjs', import.meta.url);
const clients: EmbedWorkerClient[] = [];
const client = (batchSize = 8, url = script) => {
  const c = new EmbedWorkerClient({ url, label: 'Test embedder', batchSize, dimensions: 3 });
  clients.push(c);
  return c;
};
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** [request size, request number in its thread, text length] of each vector. */
const rows = (vectors: Float32Array[]) => vectors.map((v) => Array.from(v));

describe('EmbedWorkerClient', () => {
  it('answers in order and coalesces calls queued behind a busy worker', async () => {
    const c = client(8);
    const busy = c.embed(['slow']);
    const queued = [c.embed(['a', 'bb']), c.embed(['ccc', 'dddd', 'eeeee']), c.embed(['f', 'g', 'h', 'i'])];
    expect(rows(await busy)).toEqual([[1, 1, 4]]);
    const [first, second, third] = await Promise.all(queued);
    // The first two calls (5 texts) share request 2; the third would pass 8 texts, so it is request 3.
    expect(rows(first ?? [])).toEqual([[5, 2, 1], [5, 2, 2]]);
    expect(rows(second ?? [])).toEqual([[5, 2, 3], [5, 2, 4], [5, 2, 5]]);
    expect(rows(third ?? [])).toEqual([[4, 3, 1], [4, 3, 1], [4, 3, 1], [4, 3, 1]]);
  });

  it('answers an empty call without the worker', async () => {
    expect(await client().embed([])).toEqual([]);
  });

  it('rejects the calls in flight when the worker crashes, and serves queued and later calls on a new worker', async () => {
    const c = client(1);
    const crashing = c.embed(['crash']);
    const queued = c.embed(['after']);
    queued.catch(() => {});
    await expect(crashing).rejects.toMatchObject({ code: 'internal', retryable: true, message: expect.stringMatching(/Test embedder crashed: scripted crash/) });
    // A new thread: its request counter starts again at 1.
    expect(rows(await queued)).toEqual([[1, 1, 5]]);
    expect(rows(await c.embed(['later']))).toEqual([[1, 2, 5]]);
  });

  it('rejects the calls in flight when the worker exits, and restarts it on the next call', async () => {
    const c = client();
    await expect(c.embed(['exit'])).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/stopped \(exit code 7\)/) });
    expect(rows(await c.embed(['ok']))).toEqual([[1, 1, 2]]);
  });

  it('rejects only the calls of a request the worker answered with an error', async () => {
    const c = client(1);
    const failing = c.embed(['fail']);
    const fine = c.embed(['fine']);
    fine.catch(() => {});
    await expect(failing).rejects.toMatchObject({ code: 'internal', message: 'Test embedder failed: scripted failure' });
    expect(rows(await fine)).toEqual([[1, 2, 4]]);
  });

  it('rejects an answer with the wrong number of vectors', async () => {
    await expect(client().embed(['wrong', 'x'])).rejects.toMatchObject({ message: expect.stringMatching(/returned 1 vectors for 2 texts/) });
  });

  it('rejects calls when the worker script cannot be loaded', async () => {
    const c = client(8, new URL('./fixtures/missing-worker.mjs', import.meta.url));
    await expect(c.embed(['x'])).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/Test embedder (crashed|stopped)/) });
  });

  it('honours an abort signal for queued and in-flight calls', async () => {
    const c = client(1);
    const inFlight = new AbortController();
    const queued = new AbortController();
    const busy = expect(c.embed(['slow'], inFlight.signal)).rejects.toThrow('in-flight call aborted');
    const waiting = expect(c.embed(['q'], queued.signal)).rejects.toThrow('queued call aborted');
    const other = c.embed(['other']);
    queued.abort(new Error('queued call aborted'));
    inFlight.abort(new Error('in-flight call aborted'));
    await busy;
    await waiting;
    // The aborted queued call never reached the worker: "other" is its second request.
    expect(rows(await other)).toEqual([[1, 2, 5]]);
    const done = new AbortController();
    done.abort(new Error('already aborted'));
    await expect(c.embed(['x'], done.signal)).rejects.toThrow('already aborted');
  });

  it('rejects calls in flight and queued on close; close is idempotent and a later call starts again', async () => {
    const c = client(1);
    const busy = expect(c.embed(['slow'])).rejects.toMatchObject({ code: 'aborted', message: 'Test embedder was closed' });
    const queued = expect(c.embed(['q'])).rejects.toMatchObject({ code: 'aborted' });
    await c.close();
    await c.close();
    await busy;
    await queued;
    expect(rows(await c.embed(['again']))).toEqual([[1, 1, 5]]);
  });
});
