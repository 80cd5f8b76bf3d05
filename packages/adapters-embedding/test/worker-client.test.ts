import { BroadcastChannel, Worker } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { WorkerClient } from '../src/worker-client.js';

const script = new URL('./fixtures/scripted-worker.mjs', import.meta.url);
const clients: WorkerClient[] = [];
const client = (batchSize = 8, url = script) => {
  const c = new WorkerClient({ url, label: 'Test embedder', batchSize, check: (v) => (v.length === 3 ? undefined : 'a vector of the wrong length') });
  clients.push(c);
  return c;
};
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** [request size, request number in its thread, text length] of each vector. */
const rows = (vectors: Float32Array[]) => vectors.map((v) => Array.from(v));

describe('WorkerClient', () => {
  it('answers in order and coalesces calls queued behind a busy worker', async () => {
    const c = client(8);
    const busy = c.run(['slow']);
    const queued = [c.run(['a', 'bb']), c.run(['ccc', 'dddd', 'eeeee']), c.run(['f', 'g', 'h', 'i'])];
    expect(rows(await busy)).toEqual([[1, 1, 4]]);
    const [first, second, third] = await Promise.all(queued);
    // The first two calls (5 texts) share request 2; the third would pass 8 texts, so it is request 3.
    expect(rows(first ?? [])).toEqual([
      [5, 2, 1],
      [5, 2, 2],
    ]);
    expect(rows(second ?? [])).toEqual([
      [5, 2, 3],
      [5, 2, 4],
      [5, 2, 5],
    ]);
    expect(rows(third ?? [])).toEqual([
      [4, 3, 1],
      [4, 3, 1],
      [4, 3, 1],
      [4, 3, 1],
    ]);
  });

  it('splits a long call into the fewest batches of even sizes', async () => {
    const sizes = rows(await client(4).run(['a', 'b', 'c', 'd', 'e'])).map((v) => v[0]);
    expect(sizes).toEqual([3, 3, 3, 2, 2]);
  });

  it('answers an empty call without the worker', async () => {
    expect(await client().run([])).toEqual([]);
  });

  it('rejects the calls in flight when the worker crashes, and serves queued and later calls on a new worker', async () => {
    const c = client(1);
    const crashing = c.run(['crash']);
    const queued = c.run(['after']);
    queued.catch(() => {});
    await expect(crashing).rejects.toMatchObject({ code: 'internal', retryable: true, message: expect.stringMatching(/Test embedder crashed: scripted crash/) });
    // A new thread: its request counter starts again at 1.
    expect(rows(await queued)).toEqual([[1, 1, 5]]);
    expect(rows(await c.run(['later']))).toEqual([[1, 2, 5]]);
  });

  it('rejects the calls in flight when the worker exits, and restarts it on the next call', async () => {
    const c = client();
    await expect(c.run(['exit'])).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/stopped \(exit code 7\)/) });
    expect(rows(await c.run(['ok']))).toEqual([[1, 1, 2]]);
  });

  it('rejects only the calls of a request the worker answered with an error', async () => {
    const c = client(1);
    const failing = c.run(['fail']);
    const fine = c.run(['fine']);
    fine.catch(() => {});
    await expect(failing).rejects.toMatchObject({ code: 'internal', message: 'Test embedder failed: scripted failure' });
    expect(rows(await fine)).toEqual([[1, 2, 4]]);
  });

  it('rejects an answer with the wrong number of vectors', async () => {
    await expect(client().run(['wrong', 'x'])).rejects.toMatchObject({ message: expect.stringMatching(/returned 1 outputs for 2 inputs/) });
  });

  it('rejects an answer whose outputs fail the check', async () => {
    const c = new WorkerClient({ url: script, label: 'Test embedder', batchSize: 8, check: (v) => (v.length === 4 ? undefined : 'a vector of the wrong length (expected 4)') });
    clients.push(c);
    await expect(c.run(['x'])).rejects.toMatchObject({ code: 'internal', message: 'Test embedder returned a vector of the wrong length (expected 4)' });
  });

  it('rejects calls when the worker script cannot be loaded', async () => {
    const c = client(8, new URL('./fixtures/missing-worker.mjs', import.meta.url));
    await expect(c.run(['x'])).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/Test embedder (crashed|stopped)/) });
  });

  it('honours an abort signal for queued and in-flight calls', async () => {
    const c = client(1);
    const inFlight = new AbortController();
    const queued = new AbortController();
    const busy = expect(c.run(['slow'], inFlight.signal)).rejects.toThrow('in-flight call aborted');
    const waiting = expect(c.run(['q'], queued.signal)).rejects.toThrow('queued call aborted');
    const other = c.run(['other']);
    queued.abort(new Error('queued call aborted'));
    inFlight.abort(new Error('in-flight call aborted'));
    await busy;
    await waiting;
    // The aborted queued call never reached the worker: "other" is its second request.
    expect(rows(await other)).toEqual([[1, 2, 5]]);
    const done = new AbortController();
    done.abort(new Error('already aborted'));
    await expect(c.run(['x'], done.signal)).rejects.toThrow('already aborted');
  });

  it('rejects calls in flight and queued on close; close is idempotent and a later call starts again', async () => {
    const c = client(1);
    const busy = expect(c.run(['slow'])).rejects.toMatchObject({ code: 'aborted', message: 'Test embedder was closed' });
    const queued = expect(c.run(['q'])).rejects.toMatchObject({ code: 'aborted' });
    await c.close();
    await c.close();
    await busy;
    await queued;
    expect(rows(await c.run(['again']))).toEqual([[1, 1, 5]]);
  });
});

/** The pool's fake workers (fixtures/pool-worker.mjs): vectors are [threadId, request number in its thread, text length, holders seen]. */
const poolScript = new URL('./fixtures/pool-worker.mjs', import.meta.url);
const pool = (workers: number, batchSize = 8, queryLane = false) => {
  const c = new WorkerClient({ url: poolScript, label: 'Test pool', batchSize, check: (v) => (v.length === 4 ? undefined : 'a vector of the wrong length'), workers, queryLane, warmUp: 'warm-up' });
  clients.push(c);
  return c;
};
/** Releases the fake workers' "wait" requests. */
const channel = new BroadcastChannel('embed-pool-test');
afterAll(() => channel.close());
const threadOf = (vectors: Float32Array[]) => new Set(vectors.map((v) => v[0]));
/** Resolves once a fake worker says it holds a "wait" request (so a "go" posted then reaches it). */
const holdingWait = () =>
  new Promise<void>((resolve) => {
    const heard = (event: Event) => {
      if (typeof (event as MessageEvent).data?.waiting !== 'number') return;
      channel.removeEventListener('message', heard);
      resolve();
    };
    channel.addEventListener('message', heard);
  });

describe('WorkerClient pool', () => {
  it('runs the batches of a long call on several workers at once', async () => {
    const c = pool(2, 1);
    // Each "hold" is answered only once another thread holds one too (else after 2 s, alone).
    const vectors = rows(await c.run(['hold', 'hold']));
    expect(vectors.map((v) => v[3])).toEqual([2, 2]);
    expect(new Set(vectors.map((v) => v[0])).size).toBe(2);
    expect(c.workers).toBe(2);
  });

  it('starts workers lazily: one for calls made one at a time, another only when all running ones are busy', async () => {
    const c = pool(4);
    expect(c.workers).toBe(0);
    const sequential: Float32Array[] = [];
    for (const text of ['a', 'bb', 'ccc']) sequential.push(...(await c.run([text])));
    expect(threadOf(sequential).size).toBe(1);
    expect(c.workers).toBe(1);
    // Two calls in the same tick: the second one finds the first worker busy.
    const [first, second] = await Promise.all([c.run(['x']), c.run(['y'])]);
    expect(c.workers).toBe(2);
    expect(threadOf([...(first ?? []), ...(second ?? [])]).size).toBe(2);
  });

  it('groups the batches of a long call by text length and answers in the call order', async () => {
    const c = pool(1, 2);
    const texts = ['aaaaa', 'a', 'aaaa', 'aa', 'aaaaaa', 'aaa'];
    const vectors = rows(await c.run(texts));
    // Vector i belongs to text i...
    expect(vectors.map((v) => v[2])).toEqual(texts.map((t) => t.length));
    // ...and the requests held lengths 1-2, then 3-4, then 5-6.
    expect(vectors.map((v) => v[1])).toEqual([3, 1, 2, 1, 3, 2]);
  });

  it('serves a one-text call before the queued batches of a longer call', async () => {
    const c = pool(1, 2);
    const busy = c.run(['first']);
    const bulk = c.run(['b1', 'b2', 'b3', 'b4', 'b5', 'b6']);
    const query = c.run(['query']);
    await busy;
    // The query was the second request; the bulk call's three batches came after it.
    expect(rows(await query)).toEqual([[expect.any(Number), 2, 5, 0]]);
    expect(new Set(rows(await bulk).map((v) => v[1]))).toEqual(new Set([3, 4, 5]));
  });

  it('query lane: a query is answered while bulk work holds every other worker', async () => {
    const c = pool(1, 1, true);
    const held = holdingWait();
    const bulk = c.run(['wait', 'wait']);
    await held;
    // Bulk holds its one worker; the lane's worker was started beside it.
    expect(c.workers).toBe(2);
    const query = await Promise.race([c.run(['query'], undefined, 'query'), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the query waited for the bulk batch')), 3000))]);
    // The lane's second request: its first was the warm-up that loads its model.
    expect(rows(query)[0]?.slice(1, 3)).toEqual([2, 5]);
    // Bulk work never takes the lane: its second batch waits for its own worker.
    expect(c.workers).toBe(2);
    const second = holdingWait();
    channel.postMessage('go');
    await second;
    channel.postMessage('go');
    const vectors = rows(await bulk);
    expect(new Set(vectors.map((v) => v[0])).size).toBe(1);
    expect(vectors[0]?.[0]).not.toBe(rows(query)[0]?.[0]);
  });

  it("query lane: a query does not wait for the lane worker's model to load; a ready worker takes it", async () => {
    const c = pool(2, 1, true);
    const firstHeld = holdingWait();
    const first = c.run(['wait']); // worker A, ready (no load time), holds it
    await firstHeld;
    // Threads started now load for 4 s (a model loading on a loaded machine); a thread copies the
    // environment when it starts: B (bulk) and the lane's worker start within this call.
    process.env.POOL_WORKER_LOAD_MS = '4000';
    const second = c.run(['wait']);
    delete process.env.POOL_WORKER_LOAD_MS;
    expect(c.workers).toBe(3);
    const started = performance.now();
    const query = c.run(['query'], undefined, 'query');
    channel.postMessage('go'); // A answers its batch and is free; B and the lane are loading
    const threadA = rows(await first)[0]?.[0];
    const answered = rows(await query);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(answered[0]?.[0]).toBe(threadA);
    const secondHeld = holdingWait();
    await secondHeld;
    channel.postMessage('go');
    await second;
  });

  it('query lane: bulk work still progresses while queries keep coming', async () => {
    const c = pool(1, 1, true);
    let done = false;
    const bulk = c.run(['b1', 'b2', 'b3', 'b4', 'b5', 'b6']).then((vectors) => {
      done = true;
      return vectors;
    });
    let queries = 0;
    // Two query streams, each sending the next as soon as one is answered.
    const stream = async () => {
      while (!done && queries < 2000) {
        queries++;
        await c.run(['q'], undefined, 'query');
      }
    };
    await Promise.all([stream(), stream()]);
    expect(done).toBe(true);
    expect(rows(await bulk).map((v) => v[2])).toEqual([2, 2, 2, 2, 2, 2]);
    expect(queries).toBeGreaterThan(0);
  });

  it('a crashing worker fails only its own calls; a call in flight on another worker completes', async () => {
    const c = pool(2, 1);
    const held = holdingWait();
    const waiting = c.run(['wait']);
    const crashing = c.run(['crash']);
    expect(c.workers).toBe(2);
    await expect(crashing).rejects.toMatchObject({ code: 'internal', retryable: true, message: expect.stringMatching(/Test pool crashed: scripted crash/) });
    expect(c.workers).toBe(1);
    await held;
    channel.postMessage('go');
    const [survivor] = rows(await waiting);
    expect(survivor?.slice(1, 3)).toEqual([1, 4]);
    // The pool goes on, and starts a replacement when work needs one.
    const [later, next] = await Promise.all([c.run(['later']), c.run(['next'])]);
    expect(threadOf([...(later ?? []), ...(next ?? [])]).size).toBe(2);
  });

  it('close() terminates every worker and rejects calls in flight and queued', async () => {
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const c = pool(2, 1);
    const calls = [c.run(['wait']), c.run(['wait']), c.run(['queued'])].map((call) => expect(call).rejects.toMatchObject({ code: 'aborted', message: 'Test pool was closed' }));
    const workers = new Set(posted.mock.contexts as Worker[]);
    expect(workers.size).toBe(2);
    await c.close();
    await Promise.all(calls);
    expect(c.workers).toBe(0);
    // A Worker's threadId turns to -1 once its thread has stopped.
    expect([...workers].map((w) => w.threadId)).toEqual([-1, -1]);
  });
});
