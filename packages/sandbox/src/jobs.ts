import type { ToolOutcome } from '@agent-platform/core';
import type { ProgressRelay } from '@agent-platform/core/internal';

/** The outcome of a run whose signal aborted (`ToolRun.signal`), after `durationMs` of running. */
export const abortedOutcome = (durationMs = 0): ToolOutcome => ({ ok: false, error: { kind: 'aborted', message: 'the run was cancelled' }, logs: [], durationMs });

/** What both sandboxes queue: a run or a syntax check, answered through `resolve`. */
export interface QueuedJob {
  /** Where the run's progress goes (runs with a listener); ended before the outcome is resolved. */
  readonly progress?: ProgressRelay | undefined;
  /** Settles the job's promise; later calls (an answer after an abort, or after a kill) do nothing. */
  resolve(outcome: ToolOutcome): void;
}

/**
 * Queues `job` and calls `pump`; resolves to its outcome. However the job ends (done, timed out,
 * killed, aborted, the sandbox closed), its last progress comes first and only the first outcome
 * counts. When `signal` aborts, the job settles at once as `aborted`: one still in `queue` is
 * taken out (it never runs), one already started is handed to `stop`, which stops it in its
 * worker or process and frees its place (and may settle it first, with the time it ran).
 */
export function enqueueJob<J extends QueuedJob>(queue: J[], job: Omit<J, 'resolve'>, signal: AbortSignal | undefined, pump: () => void, stop: (job: J) => void): Promise<ToolOutcome> {
  return new Promise<ToolOutcome>((resolve) => {
    if (signal?.aborted) return resolve(abortedOutcome());
    let settled = false;
    const settle = (outcome: ToolOutcome) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      job.progress?.end();
      resolve(outcome);
    };
    const queued = { ...job, resolve: settle } as J;
    const onAbort = () => {
      const waiting = queue.indexOf(queued);
      if (waiting >= 0) queue.splice(waiting, 1);
      else stop(queued);
      // Settled now, also when `stop` did not (it may give the time the run ran).
      settle(abortedOutcome());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    queue.push(queued);
    pump();
  });
}
