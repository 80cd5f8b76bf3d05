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

/** One `embed` call: answered when every one of its pieces is. */
interface Call {
  /** Texts of the call: its rank in the queue (fewer first). */
  readonly size: number;
  /** A search query: ahead of every bulk call in the queue, and the only work of the query lane. */
  readonly query: boolean;
  readonly vectors: Float32Array[];
  /** Texts not answered yet. */
  remaining: number;
  readonly resolve: (vectors: Float32Array[]) => void;
  readonly reject: (error: unknown) => void;
  readonly signal: AbortSignal | undefined;
  readonly onAbort: (() => void) | undefined;
  settled: boolean;
}

/** Texts of one call that travel in one request: the whole call, or one batch of a long call. */
interface Piece {
  readonly call: Call;
  readonly texts: readonly string[];
  /** Where each text's vector goes in `call.vectors`. */
  readonly positions: readonly number[];
}

/** A worker thread of the pool and its request in flight, if any (one at a time). */
interface Slot {
  readonly worker: Worker;
  inFlight: { readonly id: number; readonly pieces: Piece[]; readonly size: number; readonly bulk: boolean } | undefined;
}

export interface EmbedWorkerClientOptions {
  /** The worker script (plain JavaScript, so Node runs it from the sources and from dist alike). */
  readonly url: URL;
  /** How errors name the embedder, e.g. `Built-in embedder`. */
  readonly label: string;
  /** Most texts in one request to a worker: longer calls are split, queued calls coalesced up to this. */
  readonly batchSize: number;
  /** Length of every vector the worker returns, checked on each answer. */
  readonly dimensions: number;
  /** Most worker threads running bulk work at once. Default 1. */
  readonly workers?: number;
  /**
   * One more worker that only query calls use: bulk work never holds more than `workers`, so a
   * query finds a free worker even while indexing fills every other. It is started when bulk
   * work first fills all `workers`, so its model is loaded before a query needs it. Default false.
   */
  readonly queryLane?: boolean;
}

/**
 * Runs embedding requests on a pool of up to `workers` worker threads, each with one request
 * of at most `batchSize` texts in flight.
 *
 * - **Lazy start.** The first call starts one worker; another starts only when work is queued
 *   while every running worker is busy (so a server that only embeds queries keeps one).
 * - **Splitting and length grouping.** A call of more than `batchSize` texts is split into the
 *   fewest batches of even sizes, each of texts of similar length (sorted by length: a padded
 *   model pads a batch to its longest text), that go to whichever workers are free; vectors come
 *   back in the call's order.
 * - **Priority.** Query calls first, in arrival order; then the rest smallest call first (fewest
 *   texts), in arrival order among calls of the same size. A search query therefore never waits
 *   behind the queued batches of a long call. A long call is delayed only while smaller calls
 *   keep arriving.
 * - **Query lane** (`queryLane`). Bulk work holds at most `workers` workers; one more serves
 *   only queries, so a query waits for no bulk batch in flight either.
 * - **Coalescing.** What is queued while every worker is busy is sent together, in queue order,
 *   up to `batchSize` texts. A call of at most `batchSize` texts is never split across requests.
 * - **Failures.** An error answer rejects only the calls of that request. A worker that crashes
 *   or exits rejects the calls with a piece in its request (pieces of those calls elsewhere are
 *   dropped) and leaves the pool; the other workers go on, and a new worker is started when
 *   work needs one. Every worker is unref'd while idle, so none keeps the process alive.
 */
export class EmbedWorkerClient {
  readonly #o: EmbedWorkerClientOptions;
  readonly #maxWorkers: number;
  #slots: Slot[] = [];
  /** Pieces waiting for a worker, in the order they are served. */
  #queue: Piece[] = [];
  #nextId = 0;

  constructor(options: EmbedWorkerClientOptions) {
    this.#o = options;
    this.#maxWorkers = options.workers ?? 1;
  }

  /** Worker threads running now (started lazily, at most `workers`). */
  get workers(): number {
    return this.#slots.length;
  }

  /** `kind`: `query` for a search query (served first, and on the query lane), else `bulk`. */
  embed(texts: readonly string[], signal?: AbortSignal, kind: 'query' | 'bulk' = 'bulk'): Promise<Float32Array[]> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (texts.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const onAbort = signal ? () => this.#settle(call, { error: signal.reason }) : undefined;
      const call: Call = { size: texts.length, query: kind === 'query', vectors: new Array(texts.length), remaining: texts.length, resolve, reject, signal, onAbort, settled: false };
      if (signal && onAbort) signal.addEventListener('abort', onAbort, { once: true });
      // Behind every queued piece that ranks the same or ahead (queries first, then by size).
      let at = this.#queue.findIndex((p) => (call.query ? !p.call.query : !p.call.query && p.call.size > call.size));
      if (at < 0) at = this.#queue.length;
      this.#queue.splice(at, 0, ...this.#pieces(call, texts));
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

  /** The call as one piece, or split into batches of texts of similar length. */
  #pieces(call: Call, texts: readonly string[]): Piece[] {
    const { batchSize } = this.#o;
    const all = texts.map((_, i) => i);
    if (texts.length <= batchSize) return [{ call, texts, positions: all }];
    // Stable: texts of equal length keep their order.
    const byLength = all.sort((a, b) => (texts[a] as string).length - (texts[b] as string).length);
    // The fewest batches, of even sizes (20 texts: 7 + 6 + 7, not 8 + 8 + 4), so that workers
    // sharing a call finish together.
    const batches = Math.ceil(texts.length / batchSize);
    const pieces: Piece[] = [];
    for (let b = 0; b < batches; b++) {
      const positions = byLength.slice(Math.round((b * texts.length) / batches), Math.round(((b + 1) * texts.length) / batches));
      pieces.push({ call, texts: positions.map((p) => texts[p] as string), positions });
    }
    return pieces;
  }

  #settle(call: Call, outcome: { vectors: Float32Array[] } | { error: unknown }): void {
    if (call.settled) return;
    call.settled = true;
    if (call.signal && call.onAbort) call.signal.removeEventListener('abort', call.onAbort);
    // Its pieces still queued will not be needed; pieces in flight are dropped when answered.
    if (this.#queue.some((p) => p.call === call)) this.#queue = this.#queue.filter((p) => p.call !== call);
    if ('vectors' in outcome) call.resolve(outcome.vectors);
    else call.reject(outcome.error);
  }

  #start(): Slot {
    // Started from a one-line eval that imports the script, not from the file itself: the worker
    // inherits the parent's Node options, and with `--input-type` (as under `node
    // --input-type=module -e ...`) a file entry fails; passing filtered `execArgv` instead would
    // fail on V8 options such as `--trace-gc`. A failed import is the worker's 'error' event.
    const worker = new Worker(`import(${JSON.stringify(this.#o.url.href)});`, { eval: true });
    const slot: Slot = { worker, inFlight: undefined };
    worker.on('message', (reply: Reply) => this.#onReply(slot, reply));
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
      if (!bulkAllowed && !(this.#queue[0] as Piece).call.query) break;
      let slot = this.#slots.find((s) => !s.inFlight);
      if (!slot) {
        // Every running worker is busy: one more, if the pool has room.
        if (this.#slots.length >= this.#maxWorkers + (lane ? 1 : 0)) break;
        slot = this.#start();
      }
      const pieces: Piece[] = [];
      let size = 0;
      while (this.#queue.length > 0) {
        const next = this.#queue[0] as Piece;
        if (pieces.length > 0 && size + next.texts.length > this.#o.batchSize) break;
        if (!bulkAllowed && !next.call.query) break;
        this.#queue.shift();
        pieces.push(next);
        size += next.texts.length;
      }
      const id = this.#nextId++;
      slot.inFlight = { id, pieces, size, bulk: pieces.some((p) => !p.call.query) };
      slot.worker.ref(); // a request is out: keep the process alive until it is answered
      slot.worker.postMessage({ id, texts: pieces.flatMap((p) => p.texts) });
    }
    // Bulk work fills every worker: the lane's worker starts now, so its model is loaded before
    // a query needs it.
    if (lane && this.#slots.length === this.#maxWorkers && this.#slots.every((s) => s.inFlight?.bulk)) this.#warm(this.#start());
    for (const slot of this.#slots) if (!slot.inFlight) slot.worker.unref();
  }

  /**
   * Sends a new worker one text of no call, so it loads its model now (workers load it on their
   * first request). Until it answers, the worker counts as busy: a query that comes meanwhile
   * goes to the first worker that is free and ready (a bulk worker between batches) instead of
   * waiting for the load, which takes seconds on a loaded machine.
   */
  #warm(slot: Slot): void {
    const id = this.#nextId++;
    slot.inFlight = { id, pieces: [], size: 1, bulk: false };
    slot.worker.postMessage({ id, texts: ['warm-up'] });
  }

  #onReply(slot: Slot, reply: Reply): void {
    const inFlight = slot.inFlight;
    if (!inFlight || inFlight.id !== reply.id || !this.#slots.includes(slot)) return;
    slot.inFlight = undefined;
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
    for (const piece of inFlight.pieces) {
      const { call } = piece;
      if (failure || !vectors) this.#settle(call, { error: failure });
      else if (!call.settled) {
        for (const [i, position] of piece.positions.entries()) call.vectors[position] = vectors[at + i] as Float32Array;
        call.remaining -= piece.texts.length;
        if (call.remaining === 0) this.#settle(call, { vectors: call.vectors });
      }
      at += piece.texts.length;
    }
    this.#pump();
  }

  #onFailure(slot: Slot, error: PlatformError): void {
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
