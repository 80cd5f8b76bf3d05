import { Worker } from 'node:worker_threads';
import { isPlatformError, PlatformError, type ToolOutcome, type ToolSandbox } from '@agent-platform/core';
import { jsonWithinDepth, progressRelay, TOOL_LIMITS } from '@agent-platform/core/internal';
import { abortedOutcome, enqueueJob, type QueuedJob } from './jobs.js';
import type { NpmDependencies } from './npm-dependencies.js';
import { syntaxCheckResult, toOutcome } from './outcome.js';

export interface JavaScriptSandboxOptions {
  /** Worker threads running tools side by side. Default 2. */
  readonly workers?: number;
  /**
   * npm dependencies of tools (`npmDependencies({ cacheDir })`): with it the sandbox has
   * `prepare`, and runs with dependencies evaluate the tool bundled with them. Default none:
   * the sandbox has no `prepare`, so tools with dependencies are refused when saved.
   */
  readonly dependencies?: NpmDependencies;
}

interface Job extends QueuedJob {
  /** `run`: evaluate the script and call main; `check`: parse the script only (its result is the syntax error or null). */
  readonly type: 'run' | 'check';
  /** What the worker evaluates: the code, or the code bundled with its dependencies. */
  readonly script: string;
  /** The arguments as JSON text (runs). */
  readonly argsText: string;
  readonly timeoutMs: number;
  readonly memoryBytes: number;
}

interface Slot {
  worker: Worker;
  job: Job | undefined;
  /** The id of the message that started the current job: progress of an earlier job is not its. */
  jobId: number;
  timer: NodeJS.Timeout | undefined;
  /** When the current job was sent, ms (performance.now). */
  started: number;
  /**
   * Shared with the worker: the id of a job to stop. Its QuickJS interrupt handler reads it, so
   * an aborted run ends at the interpreter's next check while this thread goes on.
   */
  readonly cancel: Int32Array;
}

/** Time a worker gets beyond the run's own limit before it is killed (the interrupt handler should stop it first). */
const GRACE_MS = 2000;

/**
 * JavaScript tools in QuickJS compiled to WebAssembly, on worker threads: the code sees only the
 * JavaScript language (no `process`, `require`, `import`, `fetch`, timers or files), a fresh
 * runtime per run with a memory limit and an interrupt deadline, and the server's event loop
 * stays free. A worker that does not answer in time is terminated and replaced, and so is one
 * whose WebAssembly module failed (it says so with its answer).
 *
 * @example
 * const sandbox = javascriptSandbox({ workers: 2, dependencies: npmDependencies({ cacheDir: './data/tools/npm' }) });
 */
export function javascriptSandbox(options: JavaScriptSandboxOptions = {}): ToolSandbox {
  const size = Math.max(1, options.workers ?? 2);
  const queue: Job[] = [];
  const slots: Slot[] = [];
  // From 1: the shared cancel word starts at 0, which names no job.
  let nextId = 1;
  let closed = false;

  const spawn = (): Slot => {
    const cancel = new Int32Array(new SharedArrayBuffer(4));
    const slot: Slot = { worker: new Worker(new URL('./js-worker.js', import.meta.url), { workerData: { cancel } }), job: undefined, jobId: 0, timer: undefined, started: 0, cancel };
    slot.worker.unref();
    slot.worker.on('message', (message: { type?: string; id?: number; outcome: unknown; recycle?: boolean }) => {
      if (message.type === 'progress') {
        if (message.id === slot.jobId) slot.job?.progress?.report(message);
        return;
      }
      finish(slot, toOutcome(message.outcome), message.recycle === true);
    });
    const crashed = (why: string) => finish(slot, { ok: false, error: { kind: 'out_of_memory', message: `the sandbox stopped: ${why}` }, logs: [], durationMs: 0 }, true);
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

  /**
   * Delivers the slot's outcome; with `recycle` the worker is replaced first, so the next queued
   * job never goes to a worker that is being terminated.
   */
  const finish = (slot: Slot, outcome: ToolOutcome, recycle: boolean) => {
    const job = slot.job;
    clearTimeout(slot.timer);
    slot.job = undefined;
    slot.worker.unref();
    if (recycle) replace(slot);
    else pump();
    job?.resolve(outcome);
  };

  const pump = () => {
    for (const slot of slots) {
      if (slot.job || queue.length === 0) continue;
      const job = queue.shift() as Job;
      slot.job = job;
      slot.worker.ref();
      const { type, script, argsText, timeoutMs, memoryBytes } = job;
      slot.jobId = nextId++;
      slot.started = performance.now();
      slot.timer = setTimeout(() => {
        finish(slot, { ok: false, error: { kind: 'timeout', message: `the tool ran longer than ${timeoutMs} ms` }, logs: [], durationMs: timeoutMs + GRACE_MS }, true);
      }, timeoutMs + GRACE_MS);
      slot.worker.postMessage({ id: slot.jobId, type, code: script, argsText, timeoutMs, memoryBytes, limits: TOOL_LIMITS, progress: job.progress !== undefined });
    }
  };

  for (let i = 0; i < size; i++) slots.push(spawn());

  /**
   * An aborted job that runs: settled at once while its worker is interrupted (the shared cancel
   * word, read by QuickJS's interrupt handler). The slot stays busy until the worker answers,
   * which it does at the interpreter's next check; one that does not within GRACE_MS is
   * terminated and replaced, as at the time limit.
   */
  const stop = (job: Job) => {
    const slot = slots.find((s) => s.job === job);
    if (!slot) return;
    Atomics.store(slot.cancel, 0, slot.jobId);
    job.resolve(abortedOutcome(performance.now() - slot.started));
    clearTimeout(slot.timer);
    slot.timer = setTimeout(() => finish(slot, abortedOutcome(), true), GRACE_MS);
  };
  const enqueue = (job: Omit<Job, 'resolve'>, signal?: AbortSignal) => enqueueJob(queue, job, signal, pump, stop);

  const dependencies = options.dependencies;
  const refused = (message: string): ToolOutcome => ({ ok: false, error: { kind: 'invalid_code', message }, logs: [], durationMs: 0 });
  const closedOutcome: ToolOutcome = { ok: false, error: { kind: 'thrown', message: 'the sandbox is closed' }, logs: [], durationMs: 0 };

  return {
    language: 'javascript',
    concurrency: size,
    ...(dependencies
      ? {
          async prepare({ code, dependencies: specs, signal }) {
            await dependencies.prepare(code, specs, signal);
          },
        }
      : {}),
    async run(run) {
      if (closed) return closedOutcome;
      // JSON text, checked for depth: a string crosses to the worker without a structured clone.
      const argsText = jsonWithinDepth('args', run.args);
      let script = run.code;
      if (run.dependencies?.length) {
        if (!dependencies) return refused('dependencies: this sandbox cannot provide npm dependencies');
        try {
          script = await dependencies.bundle(run.code, run.dependencies);
        } catch (error) {
          return refused(isPlatformError(error) ? error.message : `dependencies: ${(error as Error).message}`);
        }
        if (closed) return closedOutcome;
      }
      const progress = run.onProgress ? progressRelay(run.onProgress) : undefined;
      return enqueue({ type: 'run', script, argsText, timeoutMs: run.timeoutMs, memoryBytes: run.memoryBytes, progress }, run.signal);
    },
    async checkSyntax(check) {
      // Code with dependencies has imports, which only the bundler reads: `prepare` parses it
      // there (esbuild names the line and column alike).
      if (check.dependencies.length > 0) return undefined;
      if (closed) throw new PlatformError('unavailable', 'the sandbox is closed');
      const outcome = await enqueue({ type: 'check', script: check.code, argsText: '', timeoutMs: check.timeoutMs, memoryBytes: check.memoryBytes });
      return syntaxCheckResult(outcome);
    },
    async close() {
      closed = true;
      // Runs still waiting or running get an answer rather than a promise that never settles.
      for (const job of queue.splice(0)) job.resolve(closedOutcome);
      for (const slot of slots) {
        clearTimeout(slot.timer);
        slot.job?.resolve(closedOutcome);
        slot.job = undefined;
      }
      await Promise.all(slots.map((s) => s.worker.terminate()));
      slots.length = 0;
    },
  };
}
