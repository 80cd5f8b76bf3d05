// Tool runs: cold and warm latency of a trivial tool, p50/p99, and runs per second with 2
// workers, for JavaScript (QuickJS in worker threads) and Python (Pyodide in confined processes).
import { createRequire } from 'node:module';
import { SchemaValidator } from '@agent-platform/core/internal';
import { javascriptSandbox, pythonSandbox } from '@agent-platform/sandbox';

const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
const stats = (xs) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99), n: xs.length });
const limits = { timeoutMs: 5000, memoryBytes: 64 * 1024 * 1024 };
const JS = { code: 'function main(args) { return args.x + 1; }', args: { x: 1 }, ...limits };
const PY = { code: 'def main(args):\n    return args["x"] + 1', args: { x: 1 }, ...limits };

async function ok(promise) {
  const outcome = await promise;
  if (!outcome.ok) throw new Error(JSON.stringify(outcome));
  return outcome;
}

async function timed(fn) {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function warmAndThroughput(sandbox, run, warmRuns, inFlight) {
  for (let i = 0; i < 20; i++) await ok(sandbox.run(run));
  const warm = [];
  for (let i = 0; i < warmRuns; i++) warm.push(await timed(() => ok(sandbox.run(run))));
  const ms = await timed(() => Promise.all(Array.from({ length: inFlight }, () => ok(sandbox.run(run)))));
  return { warm: stats(warm), runsPerSecond2Workers: inFlight / (ms / 1000) };
}

async function javascript() {
  const cold = [];
  for (let i = 0; i < 10; i++) {
    const sandbox = javascriptSandbox({ workers: 2 });
    cold.push(await timed(() => ok(sandbox.run(JS))));
    await sandbox.close();
  }
  const sandbox = javascriptSandbox({ workers: 2 });
  const rest = await warmAndThroughput(sandbox, JS, 300, 1000);
  await sandbox.close();
  return { cold: stats(cold), ...rest, target: 'warm p50 <= 5 ms' };
}

async function python() {
  // A new sandbox: probes the isolation, makes the interpreter snapshot, starts a process from it.
  const first = [];
  const noSnapshot = [];
  for (let i = 0; i < 3; i++) {
    const sandbox = pythonSandbox({ workers: 2 });
    first.push(await timed(() => ok(sandbox.run(PY))));
    await sandbox.close();
    const plain = pythonSandbox({ workers: 2, snapshots: false });
    noSnapshot.push(await timed(() => ok(plain.run(PY))));
    await plain.close();
  }
  // A new process on a running sandbox (what a run of another owner waits for): from the snapshot.
  const sandbox = pythonSandbox({ workers: 2 });
  await ok(sandbox.run(PY));
  const newProcess = [];
  for (let i = 0; i < 10; i++) newProcess.push(await timed(() => ok(sandbox.run({ ...PY, owner: `owner-${i}` }))));
  const rest = await warmAndThroughput(sandbox, { ...PY, owner: 'bench' }, 300, 1000);
  await sandbox.close();
  return {
    coldNewSandbox: stats(first),
    coldNewSandboxWithoutSnapshot: stats(noSnapshot),
    coldNewProcessFromSnapshot: stats(newProcess),
    ...rest,
    target: 'warm p50 <= 50 ms',
  };
}

/**
 * One check of ordinary arguments against an ordinary schema: on the validation worker (what a
 * run pays: a message each way, RE2 patterns, linear uniqueItems) vs ajv compiled in-process
 * (what runs paid before, on the event loop). Sequential calls; the worker waits idle between
 * calls of the `idle` kind (10 ms apart), as it would between an agent's tool calls.
 */
async function validation() {
  // ajv as the core package has it (the bench's own folder does not depend on it).
  const { Ajv } = createRequire(import.meta.resolve('@agent-platform/core'))('ajv');
  const schema = {
    type: 'object',
    properties: { city: { type: 'string', pattern: '^[A-Za-z ]+$' }, days: { type: 'integer', minimum: 1, maximum: 14 }, units: { enum: ['metric', 'imperial'] } },
    required: ['city'],
  };
  const args = { city: 'Oslo', days: 3, units: 'metric' };
  const validator = new SchemaValidator();
  for (let i = 0; i < 200; i++) await validator.check('bench', schema, args, 'args');
  const worker = [];
  for (let i = 0; i < 2000; i++) worker.push(await timed(() => validator.check('bench', schema, args, 'args')));
  const idle = [];
  for (let i = 0; i < 100; i++) {
    await new Promise((ok) => setTimeout(ok, 10));
    idle.push(await timed(() => validator.check('bench', schema, args, 'args')));
  }
  await validator.close();
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const inProcess = [];
  for (let i = 0; i < 2000; i++) inProcess.push(await timed(async () => validate(args)));
  return { worker: stats(worker), workerAfterIdle: stats(idle), inProcessAjv: stats(inProcess), target: 'worker p50 well under 1 ms' };
}

export async function toolRuns() {
  return {
    name: 'Tool runs of a trivial function, ms (2 workers each)',
    validation: await validation(),
    javascript: await javascript(),
    python: await python(),
  };
}
