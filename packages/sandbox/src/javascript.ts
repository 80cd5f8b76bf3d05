import { Worker } from 'node:worker_threads';
import type { ToolOutcome, ToolRun, ToolSandbox } from '@agent-platform/core';

export interface JavaScriptSandboxOptions {
  /** Worker threads running tools side by side. Default 2. */
  readonly workers?: number;
}

interface Job {
  readonly run: ToolRun;
  resolve(outcome: ToolOutcome): void;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** Time a worker gets beyond the run's own limit before it is killed (the interrupt handler should stop it first). */
const GRACE_MS = 2000;

/**
 * JavaScript tools in QuickJS compiled to WebAssembly, on worker threads: the code sees only the
 * JavaScript language (no `process`, `require`, `import`, `fetch`, timers or files), a fresh
 * runtime per run with a memory limit and an interrupt deadline, and the server's event loop
 * stays free. A worker that does not answer in time is terminated and replaced.
 */
export function javascriptSandbox(options: JavaScriptSandboxOptions = {}): ToolSandbox {
  const size = Math.max(1, options.workers ?? 2);
  const queue: Job[] = [];
  const slots: Slot[] = [];
  let nextId = 0;
  let closed = false;

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(new URL('./js-worker.js', import.meta.url)), job: undefined, timer: undefined };
    slot.worker.unref();
    slot.worker.on('message', (message: { outcome: ToolOutcome }) => finish(slot, message.outcome));
    const crashed = (why: string) => {
      finish(slot, { ok: false, error: { kind: 'out_of_memory', message: `the sandbox stopped: ${why}` }, logs: [], durationMs: 0 });
      replace(slot);
    };
    slot.worker.on('error', (error) => crashed(error.message));
    slot.worker.on('exit', () => {
      if (!closed && slots.includes(slot)) crashed('its worker exited');
    });
    return slot;
  };

  const replace = (slot: Slot) => {
    const index = slots.indexOf(slot);
    if (index < 0) return;
    slots.splice(index, 1);
    void slot.worker.terminate();
    if (!closed) slots.push(spawn());
    pump();
  };

  const finish = (slot: Slot, outcome: ToolOutcome) => {
    const job = slot.job;
    if (!job) return;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.worker.unref();
    job.resolve(outcome);
    pump();
  };

  const pump = () => {
    for (const slot of slots) {
      if (slot.job || queue.length === 0) continue;
      const job = queue.shift() as Job;
      slot.job = job;
      slot.worker.ref();
      slot.timer = setTimeout(() => {
        finish(slot, { ok: false, error: { kind: 'timeout', message: `the tool ran longer than ${job.run.timeoutMs} ms` }, logs: [], durationMs: job.run.timeoutMs + GRACE_MS });
        replace(slot);
      }, job.run.timeoutMs + GRACE_MS);
      slot.worker.postMessage({ id: nextId++, ...job.run });
    }
  };

  for (let i = 0; i < size; i++) slots.push(spawn());

  return {
    language: 'javascript',
    run(run) {
      if (closed) return Promise.resolve({ ok: false, error: { kind: 'thrown', message: 'the sandbox is closed' }, logs: [], durationMs: 0 });
      return new Promise((resolve) => {
        queue.push({ run, resolve });
        pump();
      });
    },
    async close() {
      closed = true;
      await Promise.all(slots.map((s) => s.worker.terminate()));
      slots.length = 0;
    },
  };
}
