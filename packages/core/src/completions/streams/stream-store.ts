import type { ErrorCode } from '../../errors.js';
import type { ChatCompletionChunk } from '../../schemas/completion-answers.js';
import { type StreamEvent, StreamHub, type StreamHubOptions } from './hub.js';

/** One event of a chat stream, as a completion writes it: a chunk, or the failure that ended it. */
export type StreamRecord =
  | { readonly type: 'chunk'; readonly chunk: ChatCompletionChunk }
  /** `details`: the error's facts (e.g. an upstream refusal's `kind` and `retryAfterSeconds`), so a reader answers it as the writer would. */
  | { readonly type: 'error'; readonly code: ErrorCode; readonly message: string; readonly details?: Record<string, unknown> };

/** A stream as `get` answers it. */
export interface StreamInfo {
  readonly id: string;
  readonly chatId: string;
  readonly createdAt: Date;
}

/** The one completion writing a stream. */
export interface StreamWriter {
  /** Adds the next event (ids 1, 2, 3, ... in the order of the calls; wait for each before the next). */
  append(event: StreamRecord): Promise<void>;
  /** Ends the stream: readers get what was written and stop. Idempotent. */
  end(): Promise<void>;
}

/**
 * Resumable chat streams (the MCP SDK's `EventStore` is the model): a completion writes typed
 * events; readers replay them from the start or after an event id and follow live ones until
 * the stream ends. A stream never written expires `unwrittenTtlMs` after it was created (its
 * waiting readers end), an ended one `ttlMs` after its last write or read; one being written is
 * kept. Each user has at most `maxOpenPerUser` open (created, not yet ended) streams. Every
 * lookup is by user and chat too: another user's stream is not found.
 */
export interface StreamStore {
  /**
   * The lease of a writer (ms), when writers may live in another process: a stream whose writer
   * neither appended nor sent a heartbeat for this long is ended with an `unavailable` error event
   * by whoever finds it first, once. Undefined: writers are in this process and end with it.
   */
  readonly writerLeaseMs?: number;
  /** A new open stream; `rate_limited` when the user has `maxOpenPerUser` open already. */
  create(input: { readonly id: string; readonly chatId: string; readonly userId: string; readonly createdAt: Date }): Promise<void>;
  /** The stream of that user and chat, or undefined (never created, or expired). */
  get(userId: string, chatId: string, id: string): Promise<StreamInfo | undefined>;
  /** Events written to the stream so far (the id of the last one). */
  length(id: string): Promise<number>;
  /** Claims the stream for one completion: `not_found`, or `conflict` while another completion writes it. */
  openWriter(userId: string, chatId: string, id: string): Promise<StreamWriter>;
  /** The events after `afterId` (0: from the start), then live ones until the stream ends; `not_found` for an unknown stream. */
  read(userId: string, chatId: string, id: string, afterId?: number, signal?: AbortSignal): AsyncIterable<StreamEvent<StreamRecord>>;
  /** Frees what it holds. Optional. */
  close?(): Promise<void>;
}

/**
 * Streams kept in this process (`StreamHub`): the default, for one instance. They do not
 * survive a restart and are not seen by other instances.
 *
 * @example
 * const platform = new AgentPlatform({ storage, streamStore: memoryStreamStore({ ttlMs: 600_000 }) });
 */
export function memoryStreamStore(options: StreamHubOptions = {}): StreamStore {
  const hub = new StreamHub<StreamRecord>(options);
  return {
    async create(input) {
      hub.create(input);
    },
    async get(userId, chatId, id) {
      return hub.get(userId, chatId, id);
    },
    async length(id) {
      return hub.length(id);
    },
    async openWriter(userId, chatId, id) {
      const writer = hub.openWriter(userId, chatId, id);
      return {
        async append(event) {
          writer.write(event);
        },
        async end() {
          writer.end();
        },
      };
    },
    read: (userId, chatId, id, afterId, signal) => hub.read(userId, chatId, id, afterId, signal),
  };
}
