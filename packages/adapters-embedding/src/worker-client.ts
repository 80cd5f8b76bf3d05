import { Worker } from 'node:worker_threads';
import { PlatformError } from '@agent-platform/core';

/**
 * The protocol of a worker thread of the pool: it receives `{ id, inputs }` and answers
 * `{ id, outputs }` (one output per input, in order) or `{ id, error }` (a message).
 */
interface Reply<Out> {
  readonly id: number;
  readonly outputs?: Out[];
  readonly error?: string;
}

/** One `run` call: answered when every one of its pieces is. */
interface Call<Out> {
  /** Inputs of the call: its rank in the queue (fewer first). */
  readonly size: number;
  /** A search query: ahead of every bulk call in the queue, and the only work of the query lane. */
  readonly query: boolean;
  readonly outputs: Out[];
  /** Inputs not answered yet. */
  remaining: number;
  readonly resolve: (outputs: Out[]) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  settled: boolean;
}

/** Inputs of one call that travel in one request: the whole call, or one batch of a long call. */
interface Piece<In, Out> {
  readonly call: Call<Out>;
  readonly inputs: readonly In[];
  /** Where each input's output goes in `call.outputs`. */
  readonly positions: readonly number[];
}

/** A worker thread of the pool and its request in flight, if any (one at a time). */
interface Slot<In, Out> {
  readonly worker: Worker;
  inFlight: { readonly id: number; readonly pieces: Piece<In, Out>[]; readonly size: number; readonly bulk: boolean } | undefined;
}

export interface WorkerClientOptions<In, Out> {
  /** The worker script (plain JavaScript, so Node runs it from the sources and from dist alike). */
  readonly url: URL;
  /** How errors name the work, e.g. `The built-in embedder`. */
  readonly label: string;
  /** Most inputs in one request to a worker: longer calls are split, queued calls coalesced up to this. */
  readonly batchSize: number;
  /**
   * Checks one output of a worker's answer: a problem (completing `<label> returned ...`, e.g.
   * `a vector of the wrong length (expected 512)`) fails the calls of that answer. Default: none.
   */
  readonly check?: (output: Out) => string | undefined;
  /** Length of an input, by which a long call's batches are grouped. Default: a string's length, else 0. */
  readonly length?: (input: In) => number;
  /** Most worker threads running bulk work at once. Default 1. */
  readonly workers?: number;
  /**
   * One more worker that only query calls use: bulk work never holds more than `workers`, so a
   * query finds a free worker even while indexing fills every other. It is started when bulk
   * work first fills all `workers`, and sent `warmUp`, so its model is loaded before a query
   * needs it. Default false.
   */
  readonly queryLane?: boolean;
  /** The input a new query-lane worker is sent to load its model (its output is dropped). Required with `queryLane`. */
  readonly warmUp?: In;
}

/**
 * Runs requests on a pool of up to `workers` worker threads, each with one request of at most
 * `batchSize` inputs in flight: the built-in embedder's model (one output a vector per text)
 * and the openai embedder's tokenizer (one output a count per text) both run on it.
 *
 * - **Lazy start.** The first call starts one worker; another starts only when work is queued
 *   while every running worker is busy (so a server that only embeds queries keeps one).
 * - **Splitting and length grouping.** A call of more than `batchSize` inputs is split into the
 *   fewest batches of even sizes, each of inputs of similar length (`length`; a padded model
 *   pads a batch to its longest text), that go to whichever workers are free; outputs come back
 *   in the call's order.
 * - **Priority.** Query calls first, in arrival order; then the rest smallest call first (fewest
 *   inputs), in arrival order among calls of the same size. A search query therefore never waits
 *   behind the queued batches of a long call. A long call is delayed only while smaller calls
 *   keep arriving.
 * - **Query lane** (`queryLane`). Bulk work holds at most `workers` workers; one more serves
 *   only queries, so a query waits for no bulk batch in flight either.
 * - **Coalescing.** What is queued while every worker is busy is sent together, in queue order,
 *   up to `batchSize` inputs. A call of at most `batchSize` inputs is never split across requests.
 * - **Failures.** An error answer rejects only the calls of that request. A worker that crashes
 *   or exits rejects the calls with a piece in its request (pieces of those calls elsewhere are
 *   dropped) and leaves the pool; the other workers go on, and a new worker is started when
 *   work needs one. Every worker is unref'd while idle, so none keeps the process alive.
 */
export class WorkerClient<In = string, Out = Float32Array> {
  readonly #o: WorkerClientOptions<In, Out>;
  readonly #maxWorkers: number;
  #slots: Slot<In, Out>[] = [];
  /** Pieces waiting for a worker, in the order they are served. */
  #queue: Piece<In, Out>[] = [];
  #nextId = 0;

  constructor(options: WorkerClientOptions<In, Out>) {
    if (options.queryLane && options.warmUp === undefined) throw new TypeError('WorkerClient: queryLane needs warmUp');
    this.#o = options;
    this.#maxWorkers = options.workers ?? 1;
  }

  /** Worker threads running now (started lazily, at most `workers`). */
  get workers(): number {
    return this.#slots.length;
  }

  /**
   * The outputs of `inputs`, in order. `kind`: `query` for a search query (served first, and on
   * the query lane), else `bulk`.
   */
  run(inputs: readonly In[], signal?: AbortSignal, kind: 'query' | 'bulk' = 'bulk'): Promise<Out[]> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (inputs.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const onAbort = signal ? () => this.#settle(call, { error: signal.reason }) : undefined;
      const call: Call<Out> = { size: inputs.length, query: kind === 'query', outputs: new Array(inputs.length), remaining: inputs.length, resolve, reject, signal, onAbort, settled: false };
      if (signal && onAbort) signal.addEventListener('abort', onAbort, { once: true });
      // Behind every queued piece that ranks the same or ahead (queries first, then by size).
      let at = this.#queue.findIndex((p) => (call.query ? !p.call.query : !p.call.query && p.call.size > call.size));
      if (at < 0) at = this.#queue.length;
      this.#queue.splice(at, 0, ...this.#pieces(call, inputs));
      this.#pump();
    });
  }

  /** Stops every worker; calls in flight or queued are rejected. Idempotent; a later call starts a new worker. */
  async close(): Promise<void> {
    const closed = new PlatformError('aborted', `${this.#o.label} was closed`);
    const slots = this.#slots;
    this.#slots = [];
    const pieces = [...slots.flatMap((s) => s.inFlight?.pieces ?? []), ...this.#queue];
    this.#queue = [];
    for (const piece of pieces) this.#settle(piece.call, { error: closed });
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  /** The call as one piece, or split into batches of inputs of similar length. */
  #pieces(call: Call<Out>, inputs: readonly In[]): Piece<In, Out>[] {
    const { batchSize } = this.#o;
    const all = inputs.map((_, i) => i);
    if (inputs.length <= batchSize) return [{ call, inputs, positions: all }];
    const length = this.#o.length ?? ((input: In) => (typeof input === 'string' ? input.length : 0));
    const lengths = inputs.map(length);
    // Stable: inputs of equal length keep their order.
    const byLength = all.sort((a, b) => (lengths[a] as number) - (lengths[b] as number));
    // The fewest batches, of even sizes (20 texts: 7 + 6 + 7, not 8 + 8 + 4), so that workers
    // sharing a call finish together.
    const batches = Math.ceil(inputs.length / batchSize);
    const pieces: Piece<In, Out>[] = [];
    for (let b = 0; b < batches; b++) {
      const positions = byLength.slice(Math.round((b * inputs.length) / batches), Math.round(((b + 1) * inputs.length) / batches));
      pieces.push({ call, inputs: positions.map((p) => inputs[p] as In), positions });
    }
    return pieces;
  }

  #settle(call: Call<Out>, outcome: { outputs: Out[] } | { error: unknown }): void {
    if (call.settled) return;
    call.settled = true;
    if (call.signal && call.onAbort) call.signal.removeEventListener('abort', call.onAbort);
    // Its pieces still queued will not be needed; pieces in flight are dropped when answered.
    if (this.#queue.some((p) => p.call === call)) this.#queue = this.#queue.filter((p) => p.call !== call);
    if ('outputs' in outcome) call.resolve(outcome.outputs);
    else call.reject(outcome.error);
  }

  #start(): Slot<In, Out> {
    // Started from a one-line eval that imports the script, not from the file itself: the worker
    // inherits the parent's Node options, and with `--input-type` (as under `node
    // --input-type=module -e ...`) a file entry fails; passing filtered `execArgv` instead would
    // fail on V8 options such as `--trace-gc`. A failed import is the worker's 'error' event.
    const worker = new Worker(`import(${JSON.stringify(this.#o.url.href)});`, { eval: true });
    const slot: Slot<In, Out> = { worker, inFlight: undefined };
    worker.on('message', (reply: Reply<Out>) => this.#onReply(slot, reply));
    worker.on('error', (error) => {
      this.#onFailure(slot, new PlatformError('internal', `${this.#o.label} crashed: ${error.message}`, { retryable: true, cause: error }));
    });
    worker.on('exit', (code) => {
      this.#onFailure(slot, new PlatformError('internal', `${this.#o.label} stopped (exit code ${code})`, { retryable: true }));
    });
    this.#slots.push(slot);
    return slot;
  }

  #pump(): void {
    const lane = this.#o.queryLane === true;
    while (this.#queue.length > 0) {
      // Bulk work may hold `workers` workers; the lane's worker beyond them takes queries only.
      const bulkAllowed = this.#slots.filter((s) => s.inFlight?.bulk).length < this.#maxWorkers;
      if (!bulkAllowed && !(this.#queue[0] as Piece<In, Out>).call.query) break;
      let slot = this.#slots.find((s) => !s.inFlight);
      if (!slot) {
        // Every running worker is busy: one more, if the pool has room.
        if (this.#slots.length >= this.#maxWorkers + (lane ? 1 : 0)) break;
        slot = this.#start();
      }
      const pieces: Piece<In, Out>[] = [];
      let size = 0;
      while (this.#queue.length > 0) {
        const next = this.#queue[0] as Piece<In, Out>;
        if (pieces.length > 0 && size + next.inputs.length > this.#o.batchSize) break;
        if (!bulkAllowed && !next.call.query) break;
        this.#queue.shift();
        pieces.push(next);
        size += next.inputs.length;
      }
      const id = this.#nextId++;
      slot.inFlight = { id, pieces, size, bulk: pieces.some((p) => !p.call.query) };
      slot.worker.ref(); // a request is out: keep the process alive until it is answered
      slot.worker.postMessage({ id, inputs: pieces.flatMap((p) => p.inputs) });
    }
    // Bulk work fills every worker: the lane's worker starts now, so its model is loaded before
    // a query needs it.
    if (lane && this.#slots.length === this.#maxWorkers && this.#slots.every((s) => s.inFlight?.bulk)) this.#warm(this.#start());
    for (const slot of this.#slots) if (!slot.inFlight) slot.worker.unref();
  }

  /**
   * Sends a new worker `warmUp`, the input of no call, so it loads its model now (workers load it
   * on their first request). Until it answers, the worker counts as busy: a query that comes meanwhile
   * goes to the first worker that is free and ready (a bulk worker between batches) instead of
   * waiting for the load, which takes seconds on a loaded machine.
   */
  #warm(slot: Slot<In, Out>): void {
    const id = this.#nextId++;
    slot.inFlight = { id, pieces: [], size: 1, bulk: false };
    slot.worker.postMessage({ id, inputs: [this.#o.warmUp] });
  }

  #onReply(slot: Slot<In, Out>, reply: Reply<Out>): void {
    const inFlight = slot.inFlight;
    if (!inFlight || inFlight.id !== reply.id || !this.#slots.includes(slot)) return;
    slot.inFlight = undefined;
    const outputs = reply.outputs;
    let failure: PlatformError | undefined;
    if (reply.error !== undefined) {
      failure = new PlatformError('internal', `${this.#o.label} failed: ${reply.error}`);
    } else if (!Array.isArray(outputs) || outputs.length !== inFlight.size) {
      failure = new PlatformError('internal', `${this.#o.label} returned ${Array.isArray(outputs) ? outputs.length : 0} outputs for ${inFlight.size} inputs`);
    } else {
      const problem = this.#o.check ? outputs.map(this.#o.check).find((p) => p !== undefined) : undefined;
      if (problem !== undefined) failure = new PlatformError('internal', `${this.#o.label} returned ${problem}`);
    }
    let at = 0;
    for (const piece of inFlight.pieces) {
      const { call } = piece;
      if (failure || !outputs) this.#settle(call, { error: failure });
      else if (!call.settled) {
        for (const [i, position] of piece.positions.entries()) call.outputs[position] = outputs[at + i] as Out;
        call.remaining -= piece.inputs.length;
        if (call.remaining === 0) this.#settle(call, { outputs: call.outputs });
      }
      at += piece.inputs.length;
    }
    this.#pump();
  }

  #onFailure(slot: Slot<In, Out>, error: PlatformError): void {
    // 'error' is followed by 'exit': only the first event of a worker rejects its calls.
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#slots.splice(index, 1);
    const inFlight = slot.inFlight;
    slot.inFlight = undefined;
    for (const piece of inFlight?.pieces ?? []) this.#settle(piece.call, { error });
    // Calls still queued did not cause the failure: they go to the other workers or a new one.
    this.#pump();
  }
}
