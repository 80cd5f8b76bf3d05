import type { DocumentRecord } from '../storage/types.js';
import type { IndexingEvent, IndexingListener } from './indexing-events.js';

/** How often a follower reads the document's row again: indexing events are delivered at most once. */
export const FOLLOW_POLL_MS = 1_000;

/** The event that ends a document's indexing: `complete` or `error`, as the indexing run sends it. */
export const completeEvent = (documentId: string): IndexingEvent => ({ type: 'complete', progress: 100, message: 'Document indexed successfully', documentId });

/** The last event of a document whose row says its indexing ended; undefined while it runs. */
export function finalEvent(doc: DocumentRecord): IndexingEvent | undefined {
  if (doc.status === 'completed') return completeEvent(doc.id);
  if (doc.status === 'failed') return { type: 'error', message: doc.error ?? 'Failed to index document', documentId: doc.id };
  return undefined;
}

/**
 * Events as a listener hears them, for one reader: the listener calls `push`, the reader takes
 * the next with `shift` or waits for one with `wait`.
 */
export function eventQueue<T>() {
  const items: T[] = [];
  let wake: (() => void) | undefined;
  return {
    push: (item: T): void => {
      items.push(item);
      wake?.();
    },
    shift: (): T | undefined => items.shift(),
    get length(): number {
      return items.length;
    },
    /** Ends a `wait` now. */
    wake: (): void => wake?.(),
    /** Resolves at the next `push` or `wake`, or after `ms` when given. */
    wait: async (ms?: number): Promise<void> => {
      await new Promise<void>((resolve) => {
        const timer = ms === undefined ? undefined : setTimeout(resolve, ms);
        timer?.unref?.();
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    },
  };
}

export interface FollowOptions {
  readonly documentId: string;
  /** Hears the document's indexing events (on any instance); answers the function that stops hearing them. */
  readonly subscribe: (documentId: string, listener: IndexingListener) => () => void;
  /** The caller's document row now, or undefined once it is gone. */
  readonly read: () => Promise<DocumentRecord | undefined>;
  readonly signal?: AbortSignal | undefined;
  readonly pollMs?: number;
}

/**
 * The indexing events of one document from now on, ending with `complete` or `error`: the events
 * of its run as they come, and, because their delivery is at most once, its row read again every
 * `pollMs`, so a follower that missed the final event (or came after it) still ends with it. A
 * document deleted meanwhile ends with an error saying so. It listens before the first read, so
 * nothing between the two is lost. Resolves undefined when the document is not the caller's.
 */
export async function followDocument(options: FollowOptions): Promise<AsyncIterable<IndexingEvent> | undefined> {
  const { documentId, signal } = options;
  const heard = eventQueue<IndexingEvent>();
  const stop = options.subscribe(documentId, heard.push);
  const first = await options.read().catch((error: unknown) => {
    stop();
    throw error;
  });
  if (!first) {
    stop();
    return undefined;
  }
  const pollMs = options.pollMs ?? FOLLOW_POLL_MS;
  return {
    async *[Symbol.asyncIterator]() {
      const onAbort = () => heard.wake();
      signal?.addEventListener('abort', onAbort);
      try {
        let row: DocumentRecord | undefined = first;
        for (;;) {
          const event = heard.shift();
          if (event) {
            yield event;
            if (event.type !== 'progress') return;
            continue;
          }
          if (!row) {
            yield { type: 'error', message: 'Failed to index document: the document was deleted', documentId };
            return;
          }
          const final = finalEvent(row);
          if (final) {
            yield final;
            return;
          }
          if (signal?.aborted) return;
          await heard.wait(pollMs);
          if (signal?.aborted) return;
          // An event heard meanwhile goes first; the row is read only when none was.
          if (heard.length === 0) row = await options.read();
        }
      } finally {
        signal?.removeEventListener('abort', onAbort);
        stop();
      }
    },
  };
}
