import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { PlatformError, type ToolOutcome, type ToolRun, type ToolSandbox } from '@agent-platform/core';
import { jsonWithinDepth, progressRelay, TOOL_LIMITS } from '@agent-platform/core/internal';
import { abortedOutcome, enqueueJob, type QueuedJob } from './jobs.js';
import { syntaxCheckResult, toOutcome } from './outcome.js';
import { cpuTicks, hostPidOf, hostScript, loadSnapshot, pyodideDir, rss } from './python-host.js';
import { chooseIsolation, type IsolationChoice, type PythonIsolation } from './python-isolation.js';
import { PACKAGE_NAME, PythonPackageIndex } from './python-packages.js';

export interface PythonSandboxOptions {
  /** Python processes at most (each holds a warm interpreter, ~170 MB). Default 2. */
  readonly workers?: number;
  /** See `PythonIsolation`. Default `auto`. */
  readonly isolation?: PythonIsolation;
  /** Folders of extra wheels (`*.whl`, pure Python or built for Pyodide) tools may declare. */
  readonly packageDirs?: readonly string[];
  /** Time to start a process and load Pyodide, and to load a tool's packages. Default 60 s. */
  readonly startTimeoutMs?: number;
  /** A process is replaced after this many runs (bounds what accumulates in it). Default 500. */
  readonly maxRunsPerProcess?: number;
  /**
   * The in-process guards of the host: network and process functions of Node.js replaced (see
   * py-host.js) and no JavaScript compiled from strings (`--disallow-code-generation-from-strings`).
   * Default true. Tests set false to check that the namespaces alone keep the network out, and
   * what the parent does when code does reach the host's JavaScript.
   */
  readonly guards?: boolean;
  /**
   * Start interpreters from a memory snapshot of a freshly started one, made once by a process
   * that runs no tool code: starts are ~7x faster. Default true (kept in memory).
   */
  readonly snapshots?: boolean;
  /** Folder to keep the snapshot in across restarts (e.g. in the data folder). Default none. */
  readonly snapshotDir?: string;
}

/** The Python sandbox, with what it found about this machine. */
export interface PythonSandbox extends ToolSandbox {
  /**
   * How the host processes are confined, e.g. `network and PID namespaces, uid nobody`, or why
   * Python tools are refused on this machine. Decided once (a few `unshare` probes).
   */
  isolation(): Promise<{ readonly description: string } | { readonly refused: string }>;
}

interface Job extends QueuedJob {
  /** `run`: run the code's main; `check`: compile the code only (its result is the syntax error or null). */
  readonly type: 'run' | 'check';
  readonly run: Pick<ToolRun, 'code' | 'timeoutMs' | 'memoryBytes'>;
  /** The arguments as JSON text (checked for depth). */
  readonly argsText: string;
  readonly owner: string;
  readonly packages: readonly string[];
}

interface Slot {
  readonly child: ChildProcess;
  state: 'starting' | 'idle' | 'busy';
  /** The owner whose code this interpreter has run; only that owner's runs may use it. */
  owner: string | undefined;
  runs: number;
  job: Job | undefined;
  jobId: number;
  timer: NodeJS.Timeout | undefined;
  memoryTimer: NodeJS.Timeout | undefined;
  /** RSS when the current job started, bytes. */
  baseline: number;
  /** Host process id as seen from here (inside namespaces it is a child of `unshare`). */
  hostPid: number | undefined;
  output: string;
  stderr: string;
  /** When the current job was sent, ms (performance.now). */
  jobStarted: number;
  /** Started from the snapshot. */
  fromSnapshot: boolean;
  /** CPU ticks and resident bytes at the last look while idle (reset by every run). */
  idle: { cpu: number; rss: number } | undefined;
  /** Packages its interpreter has loaded (or is loading). */
  readonly loaded: Set<string>;
}

const MAX_FRAME = 8 * 1024 * 1024;
const MEMORY_POLL_MS = 15;
/** An idle process is looked at this often; more CPU than IDLE_CPU_TICKS or memory than IDLE_RSS_GROWTH since the last look replaces it. */
const IDLE_CHECK_MS = 1000;
const IDLE_CPU_TICKS = 30;
const IDLE_RSS_GROWTH = 256 * 1024 * 1024;

const failure = (kind: 'timeout' | 'out_of_memory' | 'thrown' | 'invalid_code', message: string): ToolOutcome => ({
  ok: false,
  error: { kind, message },
  logs: [],
  durationMs: 0,
});

/**
 * Python tools in Pyodide (CPython 3.14 compiled to WebAssembly, from the `pyodide` npm package,
 * no CDN), each interpreter in its own Node.js process confined by Node's permission model, an
 * empty environment and, where possible, network and PID namespaces (see `PythonIsolation`).
 * Interpreters stay warm between runs; one is bound to the owner (user) whose code it first ran
 * and is replaced before it runs anyone else's code. Time and memory limits are enforced from
 * outside: the process is killed and replaced.
 *
 * @example
 * const sandbox = pythonSandbox({ workers: 2 });
 * await sandbox.run({ code: 'def main(args):\n    return args["x"] * 2', args: { x: 21 }, timeoutMs: 5000, memoryBytes: 64 << 20 });
 */
export function pythonSandbox(options: PythonSandboxOptions = {}): PythonSandbox {
  const size = Math.max(1, options.workers ?? 2);
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const maxRuns = options.maxRunsPerProcess ?? 500;
  const packageDirs = (options.packageDirs ?? []).map((d) => resolve(d));
  const slots: Slot[] = [];
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  let isolation: IsolationChoice | { refused: string } | undefined;
  let choosing: Promise<IsolationChoice | { refused: string }> | undefined;
  let readying: Promise<IsolationChoice | { refused: string }> | undefined;
  let snapshot: Buffer | undefined;
  let index: PythonPackageIndex | undefined;
  /** The standard library's module names, told by the first process that starts. */
  let stdlib: { promise: Promise<ReadonlySet<string>>; resolve(names: ReadonlySet<string>): void; reject(error: Error): void } | undefined;
  let stdlibKnown = false;
  let pumping = false;
  let pumpAgain = false;

  // Node's permission model: read Pyodide, the host script and the wheels; nothing else.
  const permissions = ['--experimental-permission', '--no-warnings', `--allow-fs-read=${hostScript}`, `--allow-fs-read=${pyodideDir}/`, ...packageDirs.map((d) => `--allow-fs-read=${d}/`)];

  /** Decided once; `isolation` holds the answer for the synchronous paths that come after. */
  const confinement = () => {
    choosing ??= chooseIsolation(options.isolation ?? 'auto', [hostScript, `${pyodideDir}/pyodide.mjs`, ...packageDirs]).then((choice) => {
      isolation = choice;
      return choice;
    });
    return choosing;
  };
  /** The confinement and, before the first process starts, the interpreter snapshot. */
  const ready = () => {
    readying ??= confinement().then(async (choice) => {
      if (!('refused' in choice) && options.snapshots !== false) snapshot = await loadSnapshot(permissions, options.snapshotDir, startTimeoutMs);
      return choice;
    });
    return readying;
  };
  const packages = () => {
    index ??= new PythonPackageIndex(pyodideDir, packageDirs);
    return index;
  };

  const spawnSlot = (): Slot | undefined => {
    const choice = isolation;
    if (!choice || 'refused' in choice) return undefined;
    const flags = [...(options.guards === false ? ['--no-guards'] : []), ...(snapshot ? ['--snapshot', String(snapshot.length)] : [])];
    // Python can reach the host's JavaScript; without code generation from strings it cannot
    // compile JavaScript of its own there (eval, Function, and so no import() of a path it picks).
    const hardening = options.guards === false ? [] : ['--disallow-code-generation-from-strings'];
    const [command, ...args] = [...choice.prefix, process.execPath, ...permissions, ...hardening, hostScript, pyodideDir, ...flags];
    const child = spawn(command as string, args, { env: {}, stdio: ['pipe', 'pipe', 'pipe'] });
    const slot: Slot = {
      child,
      state: 'starting',
      owner: undefined,
      runs: 0,
      job: undefined,
      jobId: 0,
      timer: undefined,
      memoryTimer: undefined,
      baseline: 0,
      hostPid: choice.prefix.includes('unshare') ? undefined : child.pid,
      output: '',
      stderr: '',
      jobStarted: 0,
      fromSnapshot: snapshot !== undefined,
      idle: undefined,
      loaded: new Set(),
    };
    watchIdle ??= setInterval(() => void checkIdle(), IDLE_CHECK_MS).unref();
    if (snapshot) child.stdin?.write(snapshot);
    slots.push(slot);
    slot.jobStarted = performance.now();
    slot.timer = setTimeout(() => retire(slot, `the Python sandbox did not start within ${startTimeoutMs} ms`), startTimeoutMs);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      // Only the new chunk can hold the end of a line: scanning all that waits at each chunk
      // would be quadratic in a flood without newlines.
      const newlineInChunk = chunk.indexOf('\n');
      slot.output += chunk;
      if (newlineInChunk < 0) {
        if (slot.output.length > MAX_FRAME) retire(slot, 'the Python sandbox wrote more than its output limit');
        return;
      }
      let newline = slot.output.length - chunk.length + newlineInChunk;
      while (newline >= 0) {
        const line = slot.output.slice(0, newline);
        slot.output = slot.output.slice(newline + 1);
        receive(slot, line);
        newline = slot.output.indexOf('\n');
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      slot.stderr = (slot.stderr + chunk).slice(-4000);
    });
    child.stdin?.on('error', () => {});
    child.on('error', (error) => retire(slot, `the Python sandbox could not start: ${error.message}`));
    // The host's last words, without the folders of this machine (they reach the user as the tool's error).
    const lastWords = () => slot.stderr.replaceAll(pyodideDir, 'pyodide').trim().split('\n').slice(-3).join(' | ');
    child.on('exit', (code, signal) => retire(slot, `the Python sandbox stopped (${signal ?? `exit ${code}`})${slot.stderr ? `: ${lastWords()}` : ''}`));
    return slot;
  };

  const receive = (slot: Slot, line: string) => {
    let message: { type?: string; id?: number; outcome?: ToolOutcome; stdlib?: string[] };
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    if (message.type === 'ready' && slot.state === 'starting') {
      clearTimeout(slot.timer);
      if (!stdlibKnown) {
        stdlibKnown = true;
        stdlibDeferred().resolve(new Set(Array.isArray(message.stdlib) ? message.stdlib.filter((n) => typeof n === 'string') : []));
      }
      slot.state = 'idle';
      pump();
    } else if (message.type === 'started' && message.id === slot.jobId && slot.job) {
      clearTimeout(slot.timer);
      const job = slot.job;
      slot.timer = setTimeout(() => retire(slot, undefined, failure('timeout', `the tool ran longer than ${job.run.timeoutMs} ms`)), job.run.timeoutMs);
      void watchMemory(slot, job);
    } else if (message.type === 'progress' && message.id === slot.jobId && slot.job) {
      // Checked and coalesced by the relay: a host that runs hostile code could write anything, as often as it likes.
      slot.job.progress?.report(message);
    } else if (message.type === 'done' && message.id === slot.jobId && slot.job) {
      const outcome = toOutcome(message.outcome);
      finish(slot, outcome);
    }
  };

  const watchMemory = async (slot: Slot, job: Job) => {
    slot.hostPid ??= await hostPidOf(slot.child.pid);
    if (slot.hostPid === undefined) return;
    const pid = slot.hostPid;
    slot.baseline = (await rss(pid)) ?? 0;
    const check = async () => {
      if (slot.job !== job) return;
      const now = await rss(pid);
      if (slot.job !== job) return;
      if (now !== undefined && now - slot.baseline > job.run.memoryBytes) {
        return retire(slot, undefined, failure('out_of_memory', `the tool used more than ${job.run.memoryBytes} bytes`));
      }
      slot.memoryTimer = setTimeout(check, MEMORY_POLL_MS);
    };
    await check();
  };

  /**
   * Code can leave work behind that goes on after its run (an asyncio task, a JavaScript timer
   * through the FFI) and would burn a core or fill memory while nobody waits for the process:
   * such a process is replaced.
   */
  let watchIdle: NodeJS.Timeout | undefined;
  const checkIdle = async () => {
    for (const slot of [...slots]) {
      if (slot.state !== 'idle' || slot.hostPid === undefined) continue;
      const [cpu, memory] = await Promise.all([cpuTicks(slot.hostPid), rss(slot.hostPid)]);
      if (cpu === undefined || memory === undefined || slot.state !== 'idle') continue;
      const before = slot.idle;
      slot.idle = { cpu, rss: before?.rss ?? memory };
      if (before && (cpu - before.cpu > IDLE_CPU_TICKS || memory - before.rss > IDLE_RSS_GROWTH)) retire(slot);
    }
  };

  const finish = (slot: Slot, outcome: ToolOutcome) => {
    const job = slot.job;
    clearTimeout(slot.timer);
    clearTimeout(slot.memoryTimer);
    slot.job = undefined;
    slot.runs += 1;
    slot.state = 'idle';
    job?.resolve(outcome);
    if (slot.runs >= maxRuns) retire(slot);
    else pump();
  };

  /** Kills a slot's process and forgets it; its job (if any) ends with `outcome` or `why`. */
  const retire = (slot: Slot, why?: string, outcome?: ToolOutcome) => {
    const index = slots.indexOf(slot);
    if (index < 0) return;
    slots.splice(index, 1);
    clearTimeout(slot.timer);
    clearTimeout(slot.memoryTimer);
    slot.child.kill('SIGKILL');
    // A process that was serving is replaced at once, so the next run finds a warm one.
    if (slot.state !== 'starting' && !closed) spawnSlot();
    if (slot.job) slot.job.resolve({ ...(outcome ?? failure('thrown', why ?? 'the Python sandbox stopped')), durationMs: performance.now() - slot.jobStarted });
    else if (slot.state === 'starting' && slot.fromSnapshot && snapshot && !closed) {
      // The snapshot did not work here: start without it from now on.
      snapshot = undefined;
    } else if (slot.state === 'starting' && why && !closed) {
      // Nothing could start: tell whoever waits instead of retrying forever.
      for (const job of queue.splice(0)) job.resolve(failure('thrown', why));
      if (!stdlibKnown && stdlib) {
        stdlib.reject(new Error(why));
        stdlib = undefined;
      }
    }
    slot.job = undefined;
    pump();
  };

  const pump = () => {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        if (!closed) pumpOnce();
      } while (pumpAgain);
    } finally {
      pumping = false;
    }
  };

  /** Hands queued runs to idle processes of their owner or to fresh ones; starts or replaces processes. */
  const pumpOnce = () => {
    for (const slot of slots) {
      if (slot.state !== 'idle' || queue.length === 0) continue;
      const at = slot.owner === undefined ? 0 : queue.findIndex((j) => j.owner === slot.owner);
      if (at >= 0) start(slot, queue.splice(at, 1)[0] as Job);
    }
    if (queue.length === 0) return;
    let starting = slots.filter((s) => s.state === 'starting').length;
    if (slots.length < size) {
      for (; slots.length < size && queue.length > starting; starting++) {
        if (!spawnSlot()) {
          const why = isolation && 'refused' in isolation ? isolation.refused : 'the Python sandbox is not available';
          for (const waiting of queue.splice(0)) waiting.resolve(failure('thrown', why));
          return;
        }
      }
      return;
    }
    // Every process is bound to someone else: replace an idle one whose owner waits for nothing.
    if (starting === 0 && slots.length >= size) {
      const victim = slots.find((s) => s.state === 'idle' && !queue.some((j) => j.owner === s.owner));
      if (victim) retire(victim);
    }
  };

  const start = (slot: Slot, job: Job) => {
    slot.state = 'busy';
    slot.idle = undefined;
    slot.owner = job.owner;
    slot.job = job;
    slot.jobId = nextId++;
    slot.jobStarted = performance.now();
    // Until the host says the code starts: packages to load may take long; with none, the host
    // answers at once unless something its owner's earlier code left behind keeps it busy.
    const fresh = job.packages.filter((p) => !slot.loaded.has(p));
    const wait = fresh.length > 0 ? startTimeoutMs : job.run.timeoutMs;
    slot.timer = setTimeout(
      () =>
        retire(
          slot,
          undefined,
          fresh.length > 0 ? failure('thrown', `loading the tool's packages took longer than ${startTimeoutMs} ms`) : failure('timeout', `the tool ran longer than ${job.run.timeoutMs} ms`),
        ),
      wait,
    );
    for (const p of fresh) slot.loaded.add(p);
    const request = { type: job.type, id: slot.jobId, code: job.run.code, args: job.argsText, packages: job.packages, limits: TOOL_LIMITS, progress: job.progress !== undefined };
    slot.child.stdin?.write(`${JSON.stringify(request)}\n`);
  };

  // An aborted job that started: its process killed and replaced as at the time limit (Python
  // running in the host cannot be interrupted from outside it).
  const enqueue = (job: Omit<Job, 'resolve'>, signal?: AbortSignal) =>
    enqueueJob(queue, job, signal, pump, (started) => {
      const slot = slots.find((s) => s.job === started);
      if (slot) retire(slot, undefined, abortedOutcome());
    });

  const stdlibDeferred = () => {
    if (!stdlib) {
      let resolve!: (names: ReadonlySet<string>) => void;
      let reject!: (error: Error) => void;
      const promise = new Promise<ReadonlySet<string>>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {});
      stdlib = { promise, resolve, reject };
    }
    return stdlib;
  };

  const stdlibNames = (): Promise<ReadonlySet<string>> => {
    const deferred = stdlibDeferred();
    // Until a process has started, start one (it stays warm for the runs that follow).
    if (!stdlibKnown && slots.length === 0 && !spawnSlot()) {
      throw PlatformError.invalid(`language: ${isolation && 'refused' in isolation ? isolation.refused : 'the Python sandbox is not available'}`);
    }
    return deferred.promise;
  };

  const resolvePackages = async (dependencies: readonly string[]): Promise<string[]> => {
    for (const name of dependencies) {
      if (!PACKAGE_NAME.test(name)) throw PlatformError.invalid(`dependencies: "${name}" is not a Python package name (give names only, without versions or URLs)`);
    }
    if (dependencies.length === 0) return [];
    try {
      return packages().resolve(dependencies, await stdlibNames());
    } catch (error) {
      throw PlatformError.invalid(`dependencies: ${(error as Error).message}`);
    }
  };

  return {
    language: 'python',
    concurrency: size,
    async isolation() {
      const choice = await confinement();
      return 'refused' in choice ? { refused: choice.refused } : { description: choice.description };
    },
    async prepare(tool) {
      const choice = await ready();
      if ('refused' in choice) throw PlatformError.invalid(`language: ${choice.refused}`);
      await resolvePackages(tool.dependencies);
    },
    async run(run) {
      if (closed) return failure('thrown', 'the sandbox is closed');
      const argsText = jsonWithinDepth('args', run.args);
      const choice = await ready();
      if ('refused' in choice) return failure('thrown', choice.refused);
      let files: string[];
      try {
        files = await resolvePackages(run.dependencies ?? []);
      } catch (error) {
        return failure('invalid_code', (error as Error).message);
      }
      const progress = run.onProgress ? progressRelay(run.onProgress) : undefined;
      return enqueue({ type: 'run', run, argsText, owner: run.owner ?? '', packages: files, progress }, run.signal);
    },
    async checkSyntax(check) {
      if (closed) throw new PlatformError('unavailable', 'the sandbox is closed');
      const choice = await ready();
      if ('refused' in choice) throw PlatformError.invalid(`language: ${choice.refused}`);
      // Compiled in an interpreter of the same owner only, as runs are: code an owner ran
      // earlier in a process could have replaced what compiles there.
      const { code, timeoutMs, memoryBytes } = check;
      const outcome = await enqueue({ type: 'check', run: { code, timeoutMs, memoryBytes }, argsText: '', owner: check.owner ?? '', packages: [] });
      return syntaxCheckResult(outcome);
    },
    async close() {
      closed = true;
      clearInterval(watchIdle);
      for (const job of queue.splice(0)) job.resolve(failure('thrown', 'the sandbox is closed'));
      await Promise.all(
        [...slots].map(
          (slot) =>
            new Promise<void>((done) => {
              if (slot.child.exitCode !== null || slot.child.signalCode !== null) return done();
              slot.child.once('exit', () => done());
              retire(slot, 'the sandbox is closed');
            }),
        ),
      );
    },
  };
}
