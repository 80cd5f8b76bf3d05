import { Worker } from 'node:worker_threads';
import { PlatformError } from '@agent-platform/core';

/**
 * The protocol of an embedding worker thread: it receives `{ id, texts }` and answers
 * `{ id, vectors }` (one Float32Array per text, in order) or `{ id, error }`.
 */
interface Reply {
  readonly id: number;
  readonly vectors?: Float32Array[];
  readonly error?: string;
}

interface Job {
  readonly texts: readonly string[];
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  settled: boolean;
}

interface InFlight {
  readonly id: number;
  readonly worker: Worker;
  readonly jobs: Job[];
  readonly size: number;
}

export interface EmbedWorkerClientOptions {
  /** The worker script (plain JavaScript, so Node runs it from the sources and from dist alike). */
  readonly url: URL;
  /** How errors name the embedder, e.g. `Built-in embedder`. */
  readonly label: string;
  /** Most texts in one request to the worker; queued calls are coalesced up to this. */
  readonly batchSize: number;
  /** Length of every vector the worker returns, checked on each answer. */
  readonly dimensions: number;
}

/**
 * Runs embedding requests on one worker thread, started on the first call. One request is in
 * flight at a time; calls that arrive meanwhile wait in a queue and are sent together (up to
 * `batchSize` texts), so concurrent callers share batches and a short query waits behind at
 * most one batch. An error answer rejects only the calls of that request. A worker that
 * crashes or exits rejects the calls in flight and is replaced by a new one for the calls
 * still queued or made later. The worker is unref'd while idle, so it never keeps the process
 * alive on its own.
 */
export class EmbedWorkerClient {
  readonly #o: EmbedWorkerClientOptions;
  #worker: Worker | undefined;
  #queue: Job[] = [];
  #inFlight: InFlight | undefined;
  #nextId = 0;

  constructor(options: EmbedWorkerClientOptions) {
    this.#o = options;
  }

  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const onAbort = signal ? () => this.#settle(job, { error: signal.reason }) : undefined;
      const job: Job = { texts, resolve, reject, signal, onAbort, settled: false };
      if (signal && onAbort) signal.addEventListener('abort', onAbort, { once: true });
      this.#queue.push(job);
      this.#pump();
    });
  }

  /** Stops the worker; calls in flight or queued are rejected. Idempotent; a later call starts a new worker. */
  async close(): Promise<void> {
    const closed = new PlatformError('aborted', `${this.#o.label} was closed`);
    const worker = this.#worker;
    this.#worker = undefined;
    const inFlight = this.#inFlight;
    this.#inFlight = undefined;
    for (const job of [...(inFlight?.jobs ?? []), ...this.#queue]) this.#settle(job, { error: closed });
    this.#queue = [];
    if (worker) await worker.terminate();
  }

  #settle(job: Job, outcome: { vectors: Float32Array[] } | { error: unknown }): void {
    if (job.settled) return;
    job.settled = true;
    if (job.signal && job.onAbort) job.signal.removeEventListener('abort', job.onAbort);
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    if ('vectors' in outcome) job.resolve(outcome.vectors);
    else job.reject(outcome.error);
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // Started from a one-line eval that imports the script, not from the file itself: the worker
    // inherits the parent's Node options, and with `--input-type` (as under `node
    // --input-type=module -e ...`) a file entry fails; passing filtered `execArgv` instead would
    // fail on V8 options such as `--trace-gc`. A failed import is the worker's 'error' event.
    const worker = new Worker(`import(${JSON.stringify(this.#o.url.href)});`, { eval: true });
    worker.on('message', (reply: Reply) => this.#onReply(worker, reply));
    worker.on('error', (error) => {
      this.#onFailure(worker, new PlatformError('internal', `${this.#o.label} crashed: ${error.message}`, { retryable: true, cause: error }));
    });
    worker.on('exit', (code) => {
      this.#onFailure(worker, new PlatformError('internal', `${this.#o.label} stopped (exit code ${code})`, { retryable: true }));
    });
    this.#worker = worker;
    return worker;
  }

  #pump(): void {
    if (this.#inFlight) return;
    const jobs: Job[] = [];
    let size = 0;
    while (this.#queue.length > 0) {
      const next = this.#queue[0] as Job;
      if (jobs.length > 0 && size + next.texts.length > this.#o.batchSize) break;
      this.#queue.shift();
      jobs.push(next);
      size += next.texts.length;
    }
    if (jobs.length === 0) {
      this.#worker?.unref();
      return;
    }
    const worker = this.#start();
    const id = this.#nextId++;
    this.#inFlight = { id, worker, jobs, size };
    worker.ref(); // a request is out: keep the process alive until it is answered
    worker.postMessage({ id, texts: jobs.flatMap((j) => j.texts) });
  }

  #onReply(worker: Worker, reply: Reply): void {
    const inFlight = this.#inFlight;
    if (!inFlight || inFlight.worker !== worker || inFlight.id !== reply.id) return;
    this.#inFlight = undefined;
    const vectors = reply.vectors;
    let failure: PlatformError | undefined;
    if (reply.error !== undefined) {
      failure = new PlatformError('internal', `${this.#o.label} failed: ${reply.error}`);
    } else if (!vectors || vectors.length !== inFlight.size) {
      failure = new PlatformError('internal', `${this.#o.label} returned ${vectors?.length ?? 0} vectors for ${inFlight.size} texts`);
    } else if (vectors.some((v) => v.length !== this.#o.dimensions)) {
      failure = new PlatformError('internal', `${this.#o.label} returned a vector of the wrong length (expected ${this.#o.dimensions})`);
    }
    let at = 0;
    for (const job of inFlight.jobs) {
      if (failure || !vectors) this.#settle(job, { error: failure });
      else this.#settle(job, { vectors: vectors.slice(at, at + job.texts.length) });
      at += job.texts.length;
    }
    this.#pump();
  }

  #onFailure(worker: Worker, error: PlatformError): void {
    // 'error' is followed by 'exit': only the first event of a worker rejects its calls.
    if (this.#worker === worker) this.#worker = undefined;
    const inFlight = this.#inFlight;
    if (inFlight?.worker === worker) {
      this.#inFlight = undefined;
      for (const job of inFlight.jobs) this.#settle(job, { error });
    }
    // Calls still queued did not cause the failure: they go to a new worker.
    this.#pump();
  }
}
