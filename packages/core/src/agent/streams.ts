import { PlatformError } from '../errors.js';

export interface StreamEvent {
  /** 1, 2, 3, ... within the stream (the SSE `id`, for `Last-Event-ID`). */
  readonly id: number;
  /** The SSE `data` (a JSON chunk, or `[DONE]`). */
  readonly data: string;
}

interface StreamState {
  readonly id: string;
  readonly chatId: string;
  readonly userId: string;
  readonly createdAt: Date;
  readonly events: StreamEvent[];
  /** Whether a completion is writing to it now. */
  writing: boolean;
  done: boolean;
  /** Wakes readers waiting for the next event. */
  waiters: Set<() => void>;
  lastTouched: number;
}

/**
 * Resumable streams of chats, kept in this process: a completion that names a stream writes its
 * chunks there; readers replay from the start or after `Last-Event-ID` and follow live until
 * the stream ends. Ended streams are dropped after `ttlMs` (default one hour) without readers.
 */
export class StreamHub {
  readonly #streams = new Map<string, StreamState>();
  readonly #ttlMs: number;

  constructor(options: { ttlMs?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? 3_600_000;
  }

  create(input: { id: string; chatId: string; userId: string; createdAt: Date }): void {
    this.#sweep(input.createdAt.getTime());
    this.#streams.set(input.id, { ...input, events: [], writing: false, done: false, waiters: new Set(), lastTouched: input.createdAt.getTime() });
  }

  /** The stream of that user and chat, or undefined. */
  get(userId: string, chatId: string, id: string): { id: string; chatId: string; createdAt: Date } | undefined {
    const s = this.#streams.get(id);
    return s && s.userId === userId && s.chatId === chatId ? { id: s.id, chatId: s.chatId, createdAt: s.createdAt } : undefined;
  }

  /** Events in the stream so far. */
  length(id: string): number {
    return this.#streams.get(id)?.events.length ?? 0;
  }

  /** Claims a stream for one completion; a stream is written by one completion at a time. */
  openWriter(userId: string, chatId: string, id: string): { write(data: string): void; end(): void } {
    const s = this.#streams.get(id);
    if (!s || s.userId !== userId || s.chatId !== chatId) throw PlatformError.notFound('Stream not found');
    if (s.writing) throw new PlatformError('conflict', `Stream ${id} is being written by another completion`);
    s.writing = true;
    s.done = false;
    const wake = () => {
      for (const w of [...s.waiters]) w();
      s.waiters.clear();
    };
    return {
      write(data) {
        s.events.push({ id: s.events.length + 1, data });
        wake();
      },
      end() {
        s.writing = false;
        s.done = true;
        wake();
      },
    };
  }

  /**
   * The events after `afterId` (0: from the start), then live ones until the stream ends.
   * A stream nobody has written yet waits for its writer.
   */
  async *read(userId: string, chatId: string, id: string, afterId = 0, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    const s = this.#streams.get(id);
    if (!s || s.userId !== userId || s.chatId !== chatId) throw PlatformError.notFound('Stream not found');
    let next = Math.max(0, afterId);
    for (;;) {
      s.lastTouched = Date.now();
      while (next < s.events.length) yield s.events[next++] as StreamEvent;
      if (s.done || signal?.aborted) return;
      await new Promise<void>((resolve) => {
        s.waiters.add(resolve);
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }

  #sweep(now: number): void {
    for (const [id, s] of this.#streams) if (s.done && now - s.lastTouched > this.#ttlMs) this.#streams.delete(id);
  }
}
