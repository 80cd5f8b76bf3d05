// Tool runs: cold (a new sandbox: worker threads start and load QuickJS) and warm latency of a
// trivial JavaScript tool, p50/p99, and runs per second with 2 workers (200 runs in flight).
import { javascriptSandbox } from '@agent-platform/sandbox';

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const run = { code: 'function main(args) { return args.x + 1; }', args: { x: 1 }, timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024 };

export async function toolRuns() {
  const cold = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    const sandbox = javascriptSandbox({ workers: 2 });
    await sandbox.run(run);
    cold.push(performance.now() - t);
    await sandbox.close();
  }
  const sandbox = javascriptSandbox({ workers: 2 });
  for (let i = 0; i < 20; i++) await sandbox.run(run);
  const warm = [];
  for (let i = 0; i < 300; i++) {
    const t = performance.now();
    const outcome = await sandbox.run(run);
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    warm.push(performance.now() - t);
  }
  const t = performance.now();
  await Promise.all(Array.from({ length: 1000 }, () => sandbox.run(run)));
  const perSecond = 1000 / ((performance.now() - t) / 1000);
  await sandbox.close();
  return {
    name: 'JavaScript tool runs (QuickJS in 2 worker threads), ms',
    cold: { p50: percentile(cold, 50), p99: percentile(cold, 99) },
    warm: { p50: percentile(warm, 50), p99: percentile(warm, 99) },
    runsPerSecond2Workers: perSecond,
    target: 'warm p50 <= 5 ms',
  };
}
