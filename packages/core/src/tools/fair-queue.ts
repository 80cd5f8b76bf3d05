import { PlatformError } from '../errors.js';

export interface FairQueueLimits {
  /** Waiting items of one owner at most; one more is refused with `rate_limited`. */
  readonly maxPerOwner: number;
  /** Waiting items of all owners at most; one more is refused with `rate_limited`. */
  readonly maxTotal: number;
}

/** What waits in a queue, for the messages: e.g. `tool runs`. */
type Label = string;

/**
 * Items waiting per owner, taken round-robin between owners so that one owner's flood never
 * holds back another owner's item for longer than one item of each other waiting owner. Both
 * the items of one owner and the queue as a whole are bounded.
 */
export class FairQueue<T> {
  /** Each owner's waiting items; the map's order is the rotation (served owners move to the back). */
  readonly #byOwner = new Map<string, T[]>();
  #size = 0;

  constructor(
    private readonly limits: FairQueueLimits,
    private readonly label: Label,
  ) {}

  get size(): number {
    return this.#size;
  }

  /** Queues `item` for `owner`, or throws `rate_limited` naming the limit that is reached. */
  push(owner: string, item: T): void {
    const items = this.#byOwner.get(owner);
    if ((items?.length ?? 0) >= this.limits.maxPerOwner) {
      throw new PlatformError('rate_limited', `Too many ${this.label} waiting: ${this.limits.maxPerOwner} of this user's are already queued (the limit per user); try again when they finish`);
    }
    if (this.#size >= this.limits.maxTotal) {
      throw new PlatformError('rate_limited', `Too many ${this.label} waiting: ${this.limits.maxTotal} are already queued (the limit of the server); try again later`);
    }
    if (items) items.push(item);
    else this.#byOwner.set(owner, [item]);
    this.#size++;
  }

  /**
   * The next item: of the waiting owner with the fewest `running` items, ties broken by the
   * rotation (whoever was served longest ago first). That owner moves to the back of the rotation.
   */
  shift(running: (owner: string) => number = () => 0): { owner: string; item: T } | undefined {
    let chosen: string | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const owner of this.#byOwner.keys()) {
      const count = running(owner);
      if (count < fewest) {
        chosen = owner;
        fewest = count;
        if (count === 0) break;
      }
    }
    if (chosen === undefined) return undefined;
    const items = this.#byOwner.get(chosen) as T[];
    const item = items.shift() as T;
    this.#byOwner.delete(chosen);
    if (items.length > 0) this.#byOwner.set(chosen, items);
    this.#size--;
    return { owner: chosen, item };
  }

  /** Takes `item` out of the queue (an aborted wait); false when it is not there. */
  remove(owner: string, item: T): boolean {
    const items = this.#byOwner.get(owner);
    const at = items?.indexOf(item) ?? -1;
    if (!items || at < 0) return false;
    items.splice(at, 1);
    if (items.length === 0) this.#byOwner.delete(owner);
    this.#size--;
    return true;
  }

  /** Every waiting item, emptying the queue. */
  drain(): T[] {
    const all = [...this.#byOwner.values()].flat();
    this.#byOwner.clear();
    this.#size = 0;
    return all;
  }
}

interface Waiting {
  start(): void;
  fail(error: unknown): void;
}

/**
 * Runs at most `capacity` tasks at once; the rest wait in a `FairQueue`, so each owner gets a
 * fair share: a freed place goes to the waiting owner with the fewest tasks running (round-robin
 * among equals), and an owner never holds more places than others while they wait.
 */
export class FairScheduler {
  readonly #queue: FairQueue<Waiting>;
  readonly #running = new Map<string, number>();
  #inFlight = 0;
  #closed = false;

  constructor(
    private readonly capacity: number,
    limits: FairQueueLimits,
    label: Label,
  ) {
    this.#queue = new FairQueue(limits, label);
  }

  /**
   * Runs `task` for `owner` when a place is free. Rejects with `rate_limited` at once when the
   * queue is full, with `aborted` when `signal` aborts while it waits.
   */
  run<R>(owner: string, task: () => Promise<R>, signal?: AbortSignal): Promise<R> {
    if (this.#closed) return Promise.reject(new PlatformError('aborted', 'closed'));
    signal?.throwIfAborted();
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => {
        if (this.#queue.remove(owner, waiting)) reject(new PlatformError('aborted', 'The request was aborted'));
      };
      const waiting: Waiting = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#inFlight++;
          this.#running.set(owner, (this.#running.get(owner) ?? 0) + 1);
          const done = () => {
            this.#inFlight--;
            const left = (this.#running.get(owner) ?? 1) - 1;
            if (left > 0) this.#running.set(owner, left);
            else this.#running.delete(owner);
            this.#pump();
          };
          let started: Promise<R>;
          try {
            started = task();
          } catch (error) {
            started = Promise.reject(error);
          }
          started.then(resolve, reject).finally(done);
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      this.#queue.push(owner, waiting);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.capacity) {
      const next = this.#queue.shift((owner) => this.#running.get(owner) ?? 0);
      if (!next) return;
      next.item.start();
    }
  }

  /** Refuses what waits (with `error`) and everything submitted from now on. */
  close(error: unknown): void {
    this.#closed = true;
    for (const waiting of this.#queue.drain()) waiting.fail(error);
  }
}
