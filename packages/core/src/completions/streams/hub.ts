import { type Clock, systemClock } from '../../clock.js';
import { PlatformError } from '../../errors.js';

export interface StreamEvent<T = string> {
  /** 1, 2, 3, ... within the stream (the SSE `id`, for `Last-Event-ID`). */
  readonly id: number;
  /** What was written: the SSE `data` (a JSON chunk), or a typed event (`StreamStore`). */
  readonly data: T;
}

export interface StreamHubOptions {
  /** An ended stream is dropped this long after its last write or read (ms). Default one hour. */
  readonly ttlMs?: number;
  /** A stream nobody has written is dropped this long after it was created (ms). Default 10 minutes. */
  readonly unwrittenTtlMs?: number;
  /**
   * Most open streams of one user: created and not yet ended (never written, or being written).
   * Creating one more is `rate_limited`. Default {@link DEFAULT_MAX_OPEN_STREAMS}.
   */
  readonly maxOpenPerUser?: number;
  /** Source of the time that expiry is measured in. Default the wall clock. */
  readonly clock?: Clock;
}

export const DEFAULT_MAX_OPEN_STREAMS = 100;

interface StreamState<T> {
  readonly id: string;
  readonly chatId: string;
  readonly userId: string;
  readonly createdAt: Date;
  readonly events: StreamEvent<T>[];
  /** Whether a completion is writing to it now. */
  writing: boolean;
  done: boolean;
  /** Wakes readers waiting for the next event. */
  waiters: Set<() => void>;
}

/**
 * Resumable streams of chats, kept in this process: a completion that names a stream writes its
 * chunks there; readers replay from the start or after `Last-Event-ID` and follow live until
 * the stream ends. A stream never written is dropped `unwrittenTtlMs` after it was created
 * (readers waiting on it end), an ended one `ttlMs` after its last write or read; one being
 * written is kept. Each user has at most `maxOpenPerUser` open streams.
 *
 * Expiry costs no scan: each of the two waiting lines (never written, ended) is a Map in the
 * order of expiry (one TTL per line, and a touched stream moves to the end), so every call
 * drops the expired ones from the front and stops at the first that is not: creating a stream
 * is O(1) amortised, however many exist.
 */
export class StreamHub<T = string> {
  readonly #streams = new Map<string, StreamState<T>>();
  /** Streams never written, by expiry time (ms), oldest first. */
  readonly #unwritten = new Map<string, number>();
  /** Ended streams, by expiry time (ms), least recently used first. */
  readonly #ended = new Map<string, number>();
  /** Open (not ended) streams per user. */
  readonly #open = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #unwrittenTtlMs: number;
  readonly #maxOpen: number;
  readonly #clock: Clock;

  constructor(options: StreamHubOptions = {}) {
    this.#ttlMs = options.ttlMs ?? 3_600_000;
    this.#unwrittenTtlMs = options.unwrittenTtlMs ?? 600_000;
    this.#maxOpen = options.maxOpenPerUser ?? DEFAULT_MAX_OPEN_STREAMS;
    this.#clock = options.clock ?? systemClock;
  }

  /** Streams held now (open and ended, not yet dropped). */
  get size(): number {
    return this.#streams.size;
  }

  /** A new open stream of the user's chat; `rate_limited` when the user has `maxOpenPerUser` open already. */
  create(input: { id: string; chatId: string; userId: string; createdAt: Date }): void {
    const now = this.#sweep();
    const open = this.#open.get(input.userId) ?? 0;
    if (open >= this.#maxOpen) {
      throw new PlatformError(
        'rate_limited',
        `Too many open streams: at most ${this.#maxOpen} per user. A stream is open until a completion has written to it and ended; one never written is dropped ${Math.round(this.#unwrittenTtlMs / 1000)} s after it was created`,
      );
    }
    this.#streams.set(input.id, { ...input, events: [], writing: false, done: false, waiters: new Set() });
    this.#unwritten.set(input.id, now + this.#unwrittenTtlMs);
    this.#open.set(input.userId, open + 1);
  }

  /** The stream of that user and chat, or undefined. */
  get(userId: string, chatId: string, id: string): { id: string; chatId: string; createdAt: Date } | undefined {
    this.#sweep();
    const s = this.#find(userId, chatId, id);
    return s && { id: s.id, chatId: s.chatId, createdAt: s.createdAt };
  }

  /** Events in the stream so far. */
  length(id: string): number {
    return this.#streams.get(id)?.events.length ?? 0;
  }

  /** Claims a stream for one completion; a stream is written by one completion at a time. */
  openWriter(userId: string, chatId: string, id: string): { write(data: T): void; end(): void } {
    this.#sweep();
    const s = this.#find(userId, chatId, id);
    if (!s) throw PlatformError.notFound('Stream not found');
    if (s.writing) throw new PlatformError('conflict', `Stream ${id} is being written by another completion`);
    // Out of the waiting lines while written (a completion always ends it); an ended one is open again.
    this.#unwritten.delete(id);
    if (this.#ended.delete(id)) this.#open.set(userId, (this.#open.get(userId) ?? 0) + 1);
    s.writing = true;
    s.done = false;
    return {
      write: (data) => {
        s.events.push({ id: s.events.length + 1, data });
        wake(s);
      },
      end: () => {
        if (!s.writing) return;
        s.writing = false;
        s.done = true;
        this.#closeOne(userId);
        if (this.#streams.get(id) === s) this.#ended.set(id, this.#clock.now().getTime() + this.#ttlMs);
        wake(s);
      },
    };
  }

  /**
   * The events after `afterId` (0: from the start), then live ones until the stream ends.
   * A stream nobody has written yet waits for its writer (and ends when it is dropped unwritten).
   */
  async *read(userId: string, chatId: string, id: string, afterId = 0, signal?: AbortSignal): AsyncGenerator<StreamEvent<T>> {
    this.#sweep();
    const s = this.#find(userId, chatId, id);
    if (!s) throw PlatformError.notFound('Stream not found');
    let next = Math.max(0, afterId);
    for (;;) {
      this.#touch(s);
      while (next < s.events.length) {
        if (signal?.aborted) return;
        yield s.events[next++] as StreamEvent<T>;
      }
      if (s.done || signal?.aborted) return;
      // One abort listener per wait, removed when the wait ends: a long stream would otherwise
      // pile one listener per event onto the reader's signal.
      await new Promise<void>((resolve) => {
        const done = () => {
          s.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        s.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  #find(userId: string, chatId: string, id: string): StreamState<T> | undefined {
    const s = this.#streams.get(id);
    return s && s.userId === userId && s.chatId === chatId ? s : undefined;
  }

  /** A read keeps an ended stream: it moves to the end of its line with a new expiry. */
  #touch(s: StreamState<T>): void {
    if (!this.#ended.delete(s.id)) return;
    this.#ended.set(s.id, this.#clock.now().getTime() + this.#ttlMs);
  }

  #closeOne(userId: string): void {
    const open = (this.#open.get(userId) ?? 1) - 1;
    if (open > 0) this.#open.set(userId, open);
    else this.#open.delete(userId);
  }

  /** Drops the expired streams at the front of both lines; answers the time it used (ms). */
  #sweep(): number {
    const now = this.#clock.now().getTime();
    for (const [line, unwritten] of [
      [this.#unwritten, true],
      [this.#ended, false],
    ] as const) {
      for (const [id, expires] of line) {
        if (expires > now) break;
        line.delete(id);
        const s = this.#streams.get(id);
        if (!s) continue;
        this.#streams.delete(id);
        if (unwritten) {
          this.#closeOne(s.userId);
          s.done = true;
          wake(s);
        }
      }
    }
    return now;
  }
}

function wake(s: StreamState<unknown>): void {
  for (const w of [...s.waiters]) w();
  s.waiters.clear();
}
