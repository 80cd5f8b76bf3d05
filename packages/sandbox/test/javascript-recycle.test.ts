// The worker pool of javascriptSandbox: a worker whose QuickJS module aborted (a failed assertion
// while freeing a runtime that ran out of memory) or that had to be killed is replaced, and no
// run is ever left without an answer.
import { describe, expect, it, vi } from 'vitest';

const spawned = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:worker_threads', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:worker_threads')>();
  class CountedWorker extends original.Worker {
    constructor(...args: ConstructorParameters<typeof original.Worker>) {
      super(...args);
      spawned.count++;
    }
  }
  return { ...original, Worker: CountedWorker };
});

const { javascriptSandbox } = await import('../src/javascript.js');

describe('javascriptSandbox worker pool', () => {
  it('replaces a worker whose QuickJS module aborted after a memory bomb; the runs after it all succeed', async () => {
    const sandbox = javascriptSandbox({ workers: 1 });
    // A long deadline: the bomb must end by memory, also on a loaded machine where filling 32 MiB is slow.
    const limits = { timeoutMs: 15_000, memoryBytes: 32 * 1024 * 1024 };
    try {
      expect(spawned.count).toBe(1);
      // Many small objects: QuickJS runs out of memory, and freeing that runtime fails its
      // `list_empty(&rt->gc_obj_list)` assertion, which aborts the WebAssembly module.
      const bomb = await sandbox.run({ code: 'function main() { const a = []; for (;;) a.push({ a: 1, b: [1, 2, 3] }); }', args: {}, ...limits });
      expect(bomb).toMatchObject({ ok: false, error: { kind: 'out_of_memory' } });
      expect(spawned.count).toBe(2);
      const runs = await Promise.all(Array.from({ length: 5 }, (_, i) => sandbox.run({ code: 'function main(args) { return args.i * 2; }', args: { i }, ...limits })));
      expect(runs.map((r) => (r.ok ? r.result : r.error))).toEqual([0, 2, 4, 6, 8]);
      for (let i = 0; i < 3; i++) expect(await sandbox.run({ code: 'async function main() { await null; return "ok"; }', args: {}, ...limits })).toMatchObject({ ok: true, result: 'ok' });
      expect(spawned.count).toBe(2);
    } finally {
      await sandbox.close();
    }
  });

  it('gives a job queued behind a run that had to be killed to the new worker, not to the dying one', async () => {
    const sandbox = javascriptSandbox({ workers: 1 });
    const limits = { timeoutMs: 300, memoryBytes: 32 * 1024 * 1024 };
    try {
      const before = spawned.count;
      // Filling huge arrays does not reach QuickJS's interrupt handler: the worker never answers
      // and is terminated at the limit plus its grace period.
      const [stuck, queued] = await Promise.all([
        sandbox.run({ code: 'function main() { const a = []; for (;;) a.push(new Array(1e5).fill(1)); }', args: {}, ...limits }),
        sandbox.run({ code: 'function main() { return "queued"; }', args: {}, ...limits }),
      ]);
      expect(stuck).toMatchObject({ ok: false, error: { kind: 'timeout' } });
      expect(queued).toMatchObject({ ok: true, result: 'queued' });
      expect(spawned.count).toBe(before + 1);
    } finally {
      await sandbox.close();
    }
  });

  it.each([
    { what: 'interrupts an aborted run in its worker, which serves the next run', code: 'function main() { progress(1); for (;;) {} }', replaced: 0 },
    // Filling huge arrays does not reach QuickJS's interrupt handler: terminated 2 s after the abort.
    {
      what: 'replaces the worker of an aborted run that never reaches the interrupt handler',
      code: 'function main() { progress(1); const a = []; for (;;) a.push(new Array(1e5).fill(1)); }',
      replaced: 1,
    },
  ])('$what; the job queued behind it runs', async ({ code, replaced }) => {
    const sandbox = javascriptSandbox({ workers: 1 });
    const limits = { timeoutMs: 60_000, memoryBytes: 32 * 1024 * 1024 };
    try {
      await sandbox.run({ code: 'function main() { return 0; }', args: {}, ...limits });
      const before = spawned.count;
      const controller = new AbortController();
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const aborted = sandbox.run({ code, args: {}, ...limits, signal: controller.signal, onProgress: () => started() });
      const queued = sandbox.run({ code: 'function main() { return "next"; }', args: {}, ...limits });
      await running;
      controller.abort();
      expect(await aborted).toMatchObject({ ok: false, error: { kind: 'aborted', message: 'the run was cancelled' } });
      expect(await queued).toMatchObject({ ok: true, result: 'next' });
      expect(spawned.count).toBe(before + replaced);
    } finally {
      await sandbox.close();
    }
  });

  it('answers runs still running or queued when it is closed', async () => {
    const sandbox = javascriptSandbox({ workers: 1 });
    const limits = { timeoutMs: 5000, memoryBytes: 32 * 1024 * 1024 };
    const running = sandbox.run({ code: 'function main() { for (;;) {} }', args: {}, ...limits });
    const queued = sandbox.run({ code: 'function main() { return 1; }', args: {}, ...limits });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await sandbox.close();
    const closed = { ok: false, error: { kind: 'thrown', message: 'the sandbox is closed' } };
    expect(await running).toMatchObject(closed);
    expect(await queued).toMatchObject(closed);
  });
});
