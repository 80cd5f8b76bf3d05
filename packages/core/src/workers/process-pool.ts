import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { PlatformError } from '../errors.js';
import { forkModule } from './fork-module.js';

/**
 * The protocol of a pool process (see knowledge/document-process.ts): it says `{ ready }` once
 * loaded, then answers each `{ id, ...request }` with `{ id, result }` or `{ id, error }` (a
 * `PlatformError`'s code, message and details), optionally after `{ id, progress }` messages; a
 * crash it can still report is `{ id, crash }` before it exits. A request's attachment arrives
 * first as `{ id, slice }` messages, in order; the request itself then says `slices: n`.
 */
type Reply =
  | { readonly ready: true }
  | { readonly id: number; readonly progress: unknown }
  | { readonly id: number; readonly result: unknown }
  | { readonly id: number; readonly error: { code: PlatformError['code']; message: string; details?: Record<string, unknown> } }
  | { readonly id: number | undefined; readonly crash: string };

export interface ProcessPoolOptions {
  /** The module each process runs. */
  readonly entry: URL;
  /** How errors name a process, e.g. `the document reader`. */
  readonly label: string;
  /** Most processes at once, each with one request at a time (besides `spare`). */
  readonly processes: number;
  /**
   * Processes beyond `processes` that take only requests of an owner with none running, so such
   * a request never waits for other owners' requests to end. One starts at once for such a
   * request when no other process is free, or ahead of need once a request has waited
   * `spawnAfterMs` while the others are busy (so the next owner finds it warm); a spare is never
   * used by an owner with requests running, nor by one whose processes were just killed (their
   * replacements are started for it), so it stays warm through their floods and their time
   * limits. Default 0. Memory: `(processes + spare) × memoryMb` at most.
   */
  readonly spare?: number;
  /** Resident memory (Linux) and heap of each process, in MB: a process past it is killed. */
  readonly memoryMb: number;
  /**
   * Another process starts only when a request has waited this long (ms) while every running
   * one is busy. Default 1000: a stream of small requests keeps one warm process (a new one
   * costs about a second of CPU to load, and its caches start cold), a long request soon gets
   * company.
   */
  readonly spawnAfterMs?: number;
  /**
   * Scheduling priority ("nice", 0-19) of the processes. Default 10: when the machine is busy,
   * the CPU goes to this process first (its event loop, its own workers), so a document being
   * parsed cannot slow the answers of the server.
   */
  readonly nice?: number;
}

export interface PoolRequest {
  /**
   * Whose share of the processes the request counts against (e.g. a user). A free process goes
   * to the waiting request of the owner with the fewest running, the oldest first between
   * owners with as many (see `ProcessPoolOptions.spare`). Default `''`: one owner.
   */
  readonly owner?: string;
  /** Sent to the process as it is (structured clone), with an `id` added. */
  readonly message: Record<string, unknown>;
  /**
   * Bytes sent ahead of the message in slices of 256 KB, one per turn of the event loop:
   * serializing megabytes in one message held this thread for tens of milliseconds.
   */
  readonly attachment?: Uint8Array;
  /** From the moment a process takes the request; then the process is killed and the request fails with `overTime()`. */
  readonly timeoutMs: number;
  readonly overTime: () => unknown;
  /** The error of a request whose process passed `memoryMb`. */
  readonly overMemory: () => unknown;
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((progress: unknown) => void) | undefined;
}

interface Job {
  readonly id: number;
  readonly request: PoolRequest;
  /** When it was queued (performance.now()). */
  readonly since: number;
  readonly resolve: (result: unknown) => void;
  readonly reject: (error: unknown) => void;
  onAbort: (() => void) | undefined;
  settled: boolean;
}

interface Slot {
  readonly child: ChildProcess;
  /** A spare process: it takes only requests of owners with none running (`ProcessPoolOptions.spare`). */
  readonly spare: boolean;
  /**
   * The owner a regular process was started for (whose request ran in the process it replaces,
   * else whose request waited): while it starts, that owner counts as having one running, so an
   * owner whose processes were just killed waits for their replacements, not for the spare one.
   */
  readonly startedFor: string | undefined;
  ready: boolean;
  job: Job | undefined;
  timers: NodeJS.Timeout[];
  /** What the process said about its crash before exiting. */
  crash: string | undefined;
  /** The end of its stderr: tells a process that ran out of heap from other crashes. */
  stderr: string;
}

const ownerOf = (job: Job): string => job.request.owner ?? '';

/** Bytes of an attachment per message (see `PoolRequest.attachment`). */
const ATTACHMENT_SLICE = 256 * 1024;

/** How often the memory of a busy process is looked at (Linux), in ms. */
const MEMORY_CHECK_MS = 100;

/** Resident memory of a process in MB (Linux), or undefined. */
async function residentMb(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined || process.platform !== 'linux') return undefined;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : undefined;
}

/**
 * A pool of up to `processes` child processes running `entry`, each with one request at a
 * time, which this process can always stop:
 *
 * - **Limits.** A request gets `timeoutMs` from the moment a process takes it, then its process
 *   is killed. A process whose resident memory passes `memoryMb` (checked every 100 ms on
 *   Linux; this covers what a heap limit does not, such as typed arrays) or whose heap does
 *   (`--max-old-space-size`) is killed too.
 * - **Crashes.** A process that dies fails only its own request; the others go on, and a new
 *   process starts when work needs one. One that dies before it is ready fails the waiting
 *   requests instead of being restarted in a loop.
 * - **Fair.** A free process goes to the waiting request of the owner with the fewest requests
 *   running (`PoolRequest.owner`), the oldest first between owners with as many; an owner with
 *   none running gets a process at once: a spare one (kept for such owners only) when every
 *   other process is busy with others' (or starting for them).
 * - **Warm and lazy.** The first request starts one process; another starts only when a
 *   request has waited `spawnAfterMs` while every running one is busy (or at once for an owner
 *   with none running), one at a time (and one spare). Processes stay for the
 *   next requests; idle ones are unref'd so they never keep this process alive, and they exit
 *   when it does (their IPC channel closes).
 * - **Least privilege.** A process gets an empty environment (no credentials), none of this
 *   process's flags, no stdin or stdout, and a lower scheduling priority (`nice`).
 */
export class ProcessPool {
  readonly #o: ProcessPoolOptions;
  #slots: Slot[] = [];
  #queue: Job[] = [];
  /** When each owner was last given a process (a turn number), for the rotation between owners with as many running. */
  readonly #served = new Map<string, number>();
  #turn = 0;
  #nextId = 0;
  #closed = false;

  constructor(options: ProcessPoolOptions) {
    this.#o = options;
  }

  /** The ids of the running processes. */
  get pids(): number[] {
    return this.#slots.flatMap((s) => (s.child.pid === undefined ? [] : [s.child.pid]));
  }

  /** Runs a request; rejects with the process's error, `overTime()`, `overMemory()`, an `internal` crash, or the signal's reason. */
  run(request: PoolRequest): Promise<unknown> {
    if (this.#closed) return Promise.reject(new PlatformError('aborted', `${this.#o.label} was closed`));
    if (request.signal?.aborted) return Promise.reject(request.signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = { id: this.#nextId++, request, since: performance.now(), resolve, reject, onAbort: undefined, settled: false };
      if (request.signal) {
        job.onAbort = () => this.#abort(job, request.signal?.reason);
        request.signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Kills every process; requests running or waiting are rejected. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#spawnTimer);
    const closed = new PlatformError('aborted', `${this.#o.label} was closed`);
    for (const job of this.#queue.splice(0)) this.#settle(job, { error: closed });
    const exits = this.#slots.map((s) => new Promise((resolve) => (s.child.exitCode !== null || s.child.signalCode !== null ? resolve(undefined) : s.child.once('close', resolve))));
    for (const slot of [...this.#slots]) {
      // Idle processes are unref'd: without this, a caller awaiting close() with nothing else
      // to do lets the event loop empty before the exits are heard, and close() never settles.
      this.#hold(slot, true);
      this.#kill(slot, closed);
    }
    await Promise.all(exits);
  }

  #settle(job: Job, outcome: { result: unknown } | { error: unknown }): void {
    if (job.settled) return;
    job.settled = true;
    if (job.request.signal && job.onAbort) job.request.signal.removeEventListener('abort', job.onAbort);
    if ('result' in outcome) job.resolve(outcome.result);
    else job.reject(outcome.error);
  }

  #abort(job: Job, reason: unknown): void {
    const slot = this.#slots.find((s) => s.job === job);
    if (slot) {
      this.#kill(slot, reason);
      return;
    }
    this.#queue = this.#queue.filter((j) => j !== job);
    this.#settle(job, { error: reason });
  }

  #start(spare: boolean, startedFor?: string): void {
    const child = forkModule(this.#o.entry, {
      execArgv: [`--max-old-space-size=${this.#o.memoryMb}`],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      env: {},
    });
    const slot: Slot = { child, spare, startedFor, ready: false, job: undefined, timers: [], crash: undefined, stderr: '' };
    this.#slots.push(slot);
    try {
      if (child.pid !== undefined) setPriority(child.pid, this.#o.nice ?? 10);
    } catch {
      // Not allowed here (some sandboxes): the process runs at the default priority.
    }
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      slot.stderr = (slot.stderr + text).slice(-2048);
    });
    child.on('message', (reply: Reply) => this.#onReply(slot, reply));
    child.on('error', (error) => {
      slot.crash ??= error.message;
    });
    child.on('close', (code, signal) => this.#onClose(slot, code, signal));
  }

  /** Set while requests wait for `spawnAfterMs` to pass before another process starts. */
  #spawnTimer: NodeJS.Timeout | undefined;

  /** Gives free processes to waiting requests and starts processes; `replacing`: the owner of the request whose regular process just ended. */
  #pump(replacing?: string): void {
    clearTimeout(this.#spawnTimer);
    this.#spawnTimer = undefined;
    const { processes, spare = 0 } = this.#o;
    while (this.#queue.length > 0 && !this.#closed) {
      const running = new Map<string, number>();
      for (const s of this.#slots) {
        const owner = s.job ? ownerOf(s.job) : s.ready ? undefined : s.startedFor;
        if (owner !== undefined) running.set(owner, (running.get(owner) ?? 0) + 1);
      }
      const job = this.#next(running);
      const newcomer = !running.has(ownerOf(job));
      const regular = this.#slots.filter((s) => !s.spare).length;
      const loading = (spare: boolean) => this.#slots.some((s) => !s.ready && s.spare === spare);
      // The spare process takes an owner with nothing running, unless a regular process is
      // missing and none is starting: then its replacement starts first (for the owner whose
      // request it ran, below), so that owner is not taken for one with nothing running.
      const offerSpare = newcomer && (regular >= processes || loading(false));
      const idle = this.#slots.find((s) => s.ready && !s.job && !s.spare) ?? (offerSpare ? this.#slots.find((s) => s.ready && !s.job) : undefined);
      if (idle) {
        this.#queue = this.#queue.filter((j) => j !== job);
        this.#served.set(ownerOf(job), this.#turn++);
        this.#dispatch(idle, job);
        continue;
      }
      // One regular process starts at a time (and one spare): while one loads (seconds, cold),
      // the requests wait for it rather than start more (each loads everything again).
      const spares = this.#slots.length - regular;
      const busy = this.#slots.some((s) => s.job);
      // An owner with nothing running waits while others' requests run: a process starts for it
      // now (a regular one while there are fewer than `processes`, else a spare one). Otherwise
      // one starts once the oldest request has waited `spawnAfterMs`: a regular one, else a spare
      // warmed for the next owner with nothing running.
      const waited = performance.now() - (this.#queue[0] as Job).since;
      const delay = this.#o.spawnAfterMs ?? 1000;
      // A killed process's replacement starts at once too: its owner's requests wait for it.
      const now = this.#slots.length === 0 || (busy && newcomer) || waited >= delay || replacing !== undefined;
      if (regular < processes) {
        if (loading(false)) break;
        if (!now) {
          this.#spawnTimer = setTimeout(() => this.#pump(), delay - waited);
          break;
        }
        this.#start(false, replacing ?? ownerOf(job));
        replacing = undefined;
      } else if (spares < spare && busy) {
        if (loading(true)) break;
        if (!now) {
          this.#spawnTimer = setTimeout(() => this.#pump(), delay - waited);
          break;
        }
        this.#start(true);
      } else {
        break;
      }
    }
    // A process keeps this one alive only while it starts or has a request.
    for (const slot of this.#slots) this.#hold(slot, !slot.ready || slot.job !== undefined);
  }

  /**
   * The request a free process takes next: of the owner with the fewest running; between owners
   * with as many, the one served longest ago (one never served, or not since it last had nothing
   * waiting or running, first: with one process, or all of them just killed, everyone has none
   * running and the oldest request would always win); then the oldest request.
   */
  #next(running: ReadonlyMap<string, number>): Job {
    const served = (job: Job) => this.#served.get(ownerOf(job)) ?? -1;
    let best = this.#queue[0] as Job;
    for (const job of this.#queue) {
      const byRunning = (running.get(ownerOf(job)) ?? 0) - (running.get(ownerOf(best)) ?? 0);
      if (byRunning < 0 || (byRunning === 0 && served(job) < served(best))) best = job;
    }
    // Owners with nothing waiting or running are forgotten: they start afresh when they come back.
    if (this.#served.size > this.#queue.length + this.#slots.length) {
      const present = new Set([...this.#queue, ...this.#slots.flatMap((s) => (s.job ? [s.job] : []))].map(ownerOf));
      for (const owner of this.#served.keys()) if (!present.has(owner)) this.#served.delete(owner);
    }
    return best;
  }

  /** Whether the process (its handle, IPC channel and stderr pipe) keeps this process's event loop alive. */
  #hold(slot: Slot, alive: boolean): void {
    for (const handle of [slot.child, slot.child.channel, slot.child.stderr] as ({ ref?: () => void; unref?: () => void } | null | undefined)[]) {
      if (alive) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  #dispatch(slot: Slot, job: Job): void {
    slot.job = job;
    const { request } = job;
    void this.#send(slot, job);
    slot.timers = [
      setTimeout(() => this.#kill(slot, request.overTime()), request.timeoutMs),
      setInterval(() => {
        void residentMb(slot.child.pid).then((mb) => {
          if (mb !== undefined && mb > this.#o.memoryMb && slot.job === job) this.#kill(slot, request.overMemory());
        });
      }, MEMORY_CHECK_MS),
    ];
  }

  /** Sends a request: its attachment's slices, yielding between them, then the message. */
  async #send(slot: Slot, job: Job): Promise<void> {
    const { attachment, message } = job.request;
    let slices = 0;
    for (let at = 0; attachment && at < attachment.length; at += ATTACHMENT_SLICE) {
      if (slices > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (slot.job !== job) return; // killed or aborted meanwhile
      slot.child.send({ id: job.id, slice: attachment.subarray(at, at + ATTACHMENT_SLICE) });
      slices++;
    }
    slot.child.send({ ...message, id: job.id, slices });
  }

  /** Ends a process now: its request (if any) fails with `error`; a new process starts when work needs one. */
  #kill(slot: Slot, error: unknown): void {
    if (!this.#slots.includes(slot)) return;
    this.#slots = this.#slots.filter((s) => s !== slot);
    for (const timer of slot.timers) clearTimeout(timer);
    const job = slot.job;
    slot.job = undefined;
    if (job) this.#settle(job, { error });
    slot.child.kill('SIGKILL');
    this.#pump(job && !slot.spare ? ownerOf(job) : undefined);
  }

  #onReply(slot: Slot, reply: Reply): void {
    if ('ready' in reply) {
      slot.ready = true;
      this.#pump();
      return;
    }
    if ('crash' in reply) {
      slot.crash = reply.crash;
      return;
    }
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    if ('progress' in reply) {
      try {
        job.request.onProgress?.(reply.progress);
      } catch {
        // A progress listener's failure is not the request's.
      }
      return;
    }
    for (const timer of slot.timers) clearTimeout(timer);
    slot.job = undefined;
    if ('result' in reply) this.#settle(job, { result: reply.result });
    else this.#settle(job, { error: new PlatformError(reply.error.code, reply.error.message, reply.error.details ? { details: reply.error.details } : {}) });
    this.#pump();
  }

  #onClose(slot: Slot, code: number | null, signal: NodeJS.Signals | null): void {
    // Killed by this pool: its request has failed with the reason already.
    if (!this.#slots.includes(slot)) return;
    this.#slots = this.#slots.filter((s) => s !== slot);
    for (const timer of slot.timers) clearTimeout(timer);
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    const job = slot.job;
    slot.job = undefined;
    if (job) {
      const outOfHeap = /heap limit|heap out of memory|allocation failed/i.test(slot.stderr);
      this.#settle(job, { error: outOfHeap ? job.request.overMemory() : new PlatformError('internal', `${this.#o.label} crashed${slot.crash ? `: ${slot.crash}` : ''} (${how})`) });
    } else if (!slot.ready && !this.#closed) {
      // It never started: another would fail the same way, again and again.
      // Node prints the stack, then "Node.js v20...": the error's own line says what went wrong.
      const reason = slot.crash ?? /^\w*Error\b.*$/m.exec(slot.stderr)?.[0];
      const error = new PlatformError('internal', `${this.#o.label} could not start${reason ? `: ${reason}` : ''} (${how})`);
      for (const waiting of this.#queue.splice(0)) this.#settle(waiting, { error });
    }
    this.#pump(job && !slot.spare ? ownerOf(job) : undefined);
  }
}
