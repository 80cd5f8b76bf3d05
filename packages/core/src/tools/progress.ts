import { TOOL_LIMITS } from './limits.js';

/** How far a running tool has come, as its code reported it (`progress(done, total, message)`). */
export interface ToolProgress {
  /** Work done so far, in the tool's own unit (a finite number). */
  readonly progress: number;
  /** Work in all, in the same unit, when the tool knows it (a finite number). */
  readonly total?: number;
  /** What the tool is doing, at most `TOOL_LIMITS.maxProgressMessageChars` characters. */
  readonly message?: string;
}

/** Called with a run's progress while it runs: at most once per `TOOL_LIMITS.progressIntervalMs`, the last report always before the run's outcome. */
export type ToolProgressListener = (progress: ToolProgress) => void;

const finite = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n);

/**
 * A progress report from the other side of a sandbox (a worker or a process that ran untrusted
 * code, which could send anything), checked: `progress` and `total` finite numbers, `message` a
 * string cut to `TOOL_LIMITS.maxProgressMessageChars`. Undefined when it is not a report.
 */
export function toToolProgress(value: unknown): ToolProgress | undefined {
  const v = value as { progress?: unknown; total?: unknown; message?: unknown } | null;
  if (!finite(v?.progress)) return undefined;
  if (v.total !== undefined && v.total !== null && !finite(v.total)) return undefined;
  if (v.message !== undefined && v.message !== null && typeof v.message !== 'string') return undefined;
  return {
    progress: v.progress,
    ...(finite(v.total) ? { total: v.total } : {}),
    ...(typeof v.message === 'string' ? { message: v.message.slice(0, TOOL_LIMITS.maxProgressMessageChars) } : {}),
  };
}

/** What a sandbox hands a run's progress to: `report` as it arrives, `end` when the run ends. */
export interface ProgressRelay {
  /** A report from the sandbox, checked with `toToolProgress` (anything else is dropped). */
  report(value: unknown): void;
  /** Delivers the report still waiting, if any; nothing is delivered after. */
  end(): void;
}

/**
 * Coalesces a run's progress reports for `listener`: the first at once, then at most one per
 * `intervalMs`, a report arriving sooner replacing the one that waits (so the latest wins and
 * the last is always delivered, at the latest by `end`). Whatever the listener throws is
 * ignored: a listener's failure is no failure of the run.
 */
export function progressRelay(listener: ToolProgressListener, intervalMs: number = TOOL_LIMITS.progressIntervalMs): ProgressRelay {
  let last = Number.NEGATIVE_INFINITY;
  let waiting: ToolProgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const deliver = (progress: ToolProgress) => {
    last = performance.now();
    try {
      listener(progress);
    } catch {
      // Best effort: see above.
    }
  };
  const flush = () => {
    timer = undefined;
    const next = waiting;
    waiting = undefined;
    if (next) deliver(next);
  };
  return {
    report(value) {
      if (ended) return;
      const progress = toToolProgress(value);
      if (!progress) return;
      const wait = last + intervalMs - performance.now();
      if (wait <= 0 && !timer) return deliver(progress);
      waiting = progress;
      timer ??= setTimeout(flush, Math.max(0, wait));
    },
    end() {
      if (ended) return;
      clearTimeout(timer);
      flush();
      ended = true;
    },
  };
}
