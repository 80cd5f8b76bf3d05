import { expect, it } from 'vitest';
import type { ToolLanguage, ToolOutcome, ToolSandbox } from '../tools/sandbox.js';

/** The programs of the abort cases, per language. */
const PROGRAMS: Record<ToolLanguage, Record<'endless' | 'double', string>> = {
  javascript: {
    // Reports once it runs, then never ends: only its time limit or its signal stops it.
    endless: 'function main() { progress(1); while (true) {} }',
    double: 'function main(args) { return args.x * 2; }',
  },
  python: {
    endless: 'def main(args):\n    progress(1)\n    while True:\n        pass',
    double: 'def main(args):\n    return args["x"] * 2',
  },
};

/** A time limit no case waits for: a run that ends is ended by its signal. */
const LONG_LIMIT_MS = 60_000;

const kind = (outcome: ToolOutcome) => (outcome.ok ? 'ok' : outcome.error.kind);

/**
 * The abort cases of the sandbox suite (`describeToolSandbox`): a run whose `signal` aborts
 * settles at once as `aborted`, whether it waits or runs, and a running one is stopped, so that
 * its place serves the next run long before its time limit.
 */
export function describeToolAbort(sandbox: () => ToolSandbox, language: ToolLanguage, limits: { timeoutMs: number; memoryBytes: number }): void {
  const programs = PROGRAMS[language];

  it('stops runs whose signal aborts, waiting or running, and gives their places to the next runs', async () => {
    const long = { timeoutMs: LONG_LIMIT_MS, memoryBytes: limits.memoryBytes };
    // Aborted before it is handed over: never runs.
    expect(await sandbox().run({ code: programs.double, args: { x: 1 }, ...long, signal: AbortSignal.abort() })).toMatchObject({ ok: false, error: { kind: 'aborted' } });

    // Every place taken by code that never ends (each has reported, so each runs).
    const places = sandbox().concurrency ?? 1;
    const endless = Array.from({ length: places }, () => {
      const controller = new AbortController();
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const outcome = sandbox().run({ code: programs.endless, args: {}, ...long, signal: controller.signal, onProgress: () => started() });
      return { controller, running, outcome };
    });
    await Promise.all(endless.map((e) => e.running));

    // Runs wait behind them; one aborted while it waits settles at once and never runs.
    const waiting = new AbortController();
    const dropped = sandbox().run({ code: programs.double, args: { x: 1 }, ...long, signal: waiting.signal });
    const next = Array.from({ length: places }, (_, i) => sandbox().run({ code: programs.double, args: { x: i }, ...limits }));
    // Time to reach the sandbox's queue (a sandbox may get ready asynchronously first).
    await new Promise((resolve) => setTimeout(resolve, 50));
    waiting.abort();
    expect(kind(await dropped)).toBe('aborted');

    const aborted = performance.now();
    for (const e of endless) e.controller.abort();
    expect((await Promise.all(endless.map((e) => e.outcome))).map(kind)).toEqual(endless.map(() => 'aborted'));
    // The places are free: the runs that waited get them and finish, well within the time limit
    // that would otherwise have ended the endless runs.
    const results = await Promise.all(next);
    expect(results.map((r) => (r.ok ? r.result : kind(r)))).toEqual(next.map((_, i) => i * 2));
    expect(performance.now() - aborted).toBeLessThan(LONG_LIMIT_MS / 3);
    // And the sandbox stays whole: more runs than places, all answered.
    const after = await Promise.all(Array.from({ length: places + 1 }, (_, i) => sandbox().run({ code: programs.double, args: { x: i }, ...limits })));
    expect(after.map((r) => (r.ok ? r.result : kind(r)))).toEqual(after.map((_, i) => i * 2));
  });
}
