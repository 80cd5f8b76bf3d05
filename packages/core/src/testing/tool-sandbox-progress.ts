import { expect, it } from 'vitest';
import { TOOL_LIMITS } from '../tools/limits.js';
import type { ToolProgress } from '../tools/progress.js';
import type { ToolLanguage, ToolOutcome, ToolSandbox } from '../tools/sandbox.js';

/** The programs of the progress cases, per language. */
const PROGRAMS: Record<ToolLanguage, Record<'thenLoop' | 'latest' | 'flood' | 'badArguments' | 'forged', string>> = {
  javascript: {
    // Reports, then runs until its time limit: a report seen before the outcome came while it ran.
    thenLoop: 'function main() { progress(1, 3, "started"); while (true) {} }',
    latest: 'function main() { progress(1, 2, "first"); progress(1.5, 2, "replaced"); progress(2, 2, "last"); const end = Date.now() + 300; while (Date.now() < end) {} return "done"; }',
    flood: 'function main(args) { for (let i = 1; i <= args.n; i++) progress(i, args.n); return "done"; }',
    badArguments: `function main() {
  const seen = [];
  for (const a of [[], [NaN], [Infinity], ["1"], [1, "x"], [1, -Infinity], [1, 2, 3], [1, 2, {}]]) {
    try { progress(...a); seen.push("accepted"); } catch (error) { seen.push(error instanceof TypeError ? "TypeError" : String(error)); }
  }
  progress(7, null, "x".repeat(10000));
  return seen;
}`,
    // The check inside the sandbox undone: the host still refuses an oversized message.
    forged: 'function main() { String.prototype.slice = function () { return String(this); }; progress(1, 2, "y".repeat(10000)); progress(2, 2); return 1; }',
  },
  python: {
    thenLoop: 'def main(args):\n    progress(1, 3, "started")\n    while True:\n        pass',
    latest:
      'import time\ndef main(args):\n    progress(1, 2, "first")\n    progress(1.5, 2, "replaced")\n    progress(2, 2, "last")\n    end = time.time() + 0.3\n    while time.time() < end:\n        pass\n    return "done"',
    flood: 'def main(args):\n    for i in range(1, args["n"] + 1):\n        progress(i, args["n"])\n    return "done"',
    badArguments: `def main(args):
    seen = []
    for a in [[], [float("nan")], [float("inf")], ["1"], [True], [10 ** 400], [1, "x"], [1, float("-inf")], [1, 2, 3]]:
        try:
            progress(*a)
            seen.append("accepted")
        except TypeError:
            seen.append("TypeError")
    progress(7, None, "x" * 10000)
    return seen`,
    // The host's own function, taken from the closure, called with what progress refuses.
    forged:
      'def main(args):\n    report = [c.cell_contents for c in progress.__closure__ if callable(c.cell_contents)][0]\n    report(1.0, None, "y" * 10000)\n    report("x", None, None)\n    report(float("nan"), None, None)\n    progress(2, 2)\n    return 1',
  },
};

/**
 * The progress cases of the sandbox suite (`describeToolSandbox`): `progress(done, total,
 * message)` in the code reaches `ToolRun.onProgress` while the run goes on, checked, cut and
 * coalesced, the last report before the outcome.
 */
export function describeToolProgress(sandbox: () => ToolSandbox, language: ToolLanguage, limits: { timeoutMs: number; memoryBytes: number }): void {
  const programs = PROGRAMS[language];
  const run = (program: keyof typeof programs, onProgress?: (p: ToolProgress) => void, args: unknown = {}) =>
    sandbox().run({ code: programs[program], args, ...limits, ...(onProgress ? { onProgress } : {}) });

  it('tells onProgress what the code reports while it still runs', async () => {
    let settled = false;
    let seen!: (p: ToolProgress) => void;
    const first = new Promise<ToolProgress>((resolve) => {
      seen = resolve;
    });
    const running = run('thenLoop', (p) => seen(p)).finally(() => {
      settled = true;
    });
    // The code never ends by itself (it is stopped at its time limit): the report came first.
    expect(await first).toEqual({ progress: 1, total: 3, message: 'started' });
    expect(settled).toBe(false);
    const outcome = await running;
    expect(outcome.ok ? undefined : outcome.error.kind).toBe('timeout');
  });

  it('delivers the latest report of a burst, and the last before the outcome', async () => {
    const reports: ToolProgress[] = [];
    let settled = false;
    let late = 0;
    const outcome = await run('latest', (p) => {
      if (settled) late += 1;
      reports.push(p);
    }).finally(() => {
      settled = true;
    });
    expect(outcome).toMatchObject({ ok: true, result: 'done' });
    expect(late).toBe(0);
    // The first at once; the two that came sooner than the interval: only the latest.
    expect(reports).toEqual([
      { progress: 1, total: 2, message: 'first' },
      { progress: 2, total: 2, message: 'last' },
    ]);
  });

  it('coalesces a flood of reports to about one per interval', async () => {
    const reports: ToolProgress[] = [];
    const n = 100_000;
    const started = performance.now();
    const outcome = await sandbox().run({ code: programs.flood, args: { n }, timeoutMs: Math.max(limits.timeoutMs, 10_000), memoryBytes: limits.memoryBytes, onProgress: (p) => reports.push(p) });
    const elapsed = performance.now() - started;
    expect(outcome, JSON.stringify(outcome.ok ? undefined : outcome.error)).toMatchObject({ ok: true, result: 'done' });
    expect(reports.at(-1)).toEqual({ progress: n, total: n });
    expect(reports.length).toBeLessThanOrEqual(Math.ceil(elapsed / TOOL_LIMITS.progressIntervalMs) + 2);
    const values = reports.map((r) => r.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
  });

  it('refuses bad arguments with a TypeError and cuts long messages', async () => {
    const reports: ToolProgress[] = [];
    const outcome: ToolOutcome = await run('badArguments', (p) => reports.push(p));
    expect(outcome.ok, JSON.stringify(outcome.ok ? undefined : outcome.error)).toBe(true);
    const seen = (outcome as { result: string[] }).result;
    expect(seen.every((s) => s === 'TypeError')).toBe(true);
    expect(reports).toEqual([{ progress: 7, message: 'x'.repeat(TOOL_LIMITS.maxProgressMessageChars) }]);
    // Without a listener the calls are the same, and nothing goes anywhere.
    expect(await run('badArguments')).toMatchObject({ ok: true, result: seen });
  });

  it('drops reports that get past the checks inside the sandbox', async () => {
    const reports: ToolProgress[] = [];
    expect(await run('forged', (p) => reports.push(p))).toMatchObject({ ok: true, result: 1 });
    expect(reports).toEqual([{ progress: 2, total: 2 }]);
  });
}
