import type { NotificationPayload, Notifier } from '../notify/notifier.js';

/** Progress of one document's indexing, as the streaming route reports it. */
export type IndexingEvent =
  | { readonly type: 'progress'; readonly progress: 10 | 30 | 60 | 90; readonly message: string }
  | { readonly type: 'complete'; readonly progress: 100; readonly message: string; readonly documentId: string }
  | { readonly type: 'error'; readonly message: string; readonly documentId: string };

export type IndexingListener = (event: IndexingEvent) => void;

/** The notifier channel of indexing events: `{ documentId, event }`. */
export const INDEXING_CHANNEL = 'knowledge.indexing';

/** Longest error message sent with an event: the whole one is in the document's row. */
const MAX_MESSAGE_CHARS = 1000;

/**
 * Indexing events of documents, heard by every instance: the run (on whichever instance claimed
 * the job) publishes them on the notifier, and the listeners and waiters of each instance get
 * them from there, so a create-document wait or a progress stream on one instance hears a job
 * run by another. Delivery is at most once: waiters have a time limit and then read the
 * document's status from storage.
 */
export class IndexingEvents {
  readonly #notifier: Notifier;
  readonly #listeners = new Map<string, Set<IndexingListener>>();
  readonly #settled = new Map<string, Set<() => void>>();
  readonly #stop: () => void;

  constructor(notifier: Notifier) {
    this.#notifier = notifier;
    this.#stop = notifier.subscribe(INDEXING_CHANNEL, (payload) => {
      const { documentId, event } = (payload ?? {}) as { documentId?: unknown; event?: IndexingEvent };
      if (typeof documentId === 'string' && event && typeof event === 'object') this.#deliver(documentId, event);
    });
  }

  /** Calls `listener` with the indexing events of a document until it completes or fails. */
  subscribe(documentId: string, listener: IndexingListener): () => void {
    const set = this.#listeners.get(documentId) ?? new Set();
    this.#listeners.set(documentId, set);
    set.add(listener);
    return () => set.delete(listener);
  }

  /** Resolves when the document's job has ended (or after `ms`). True when it ended. */
  waitFor(documentId: string, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const set = this.#settled.get(documentId) ?? new Set();
      this.#settled.set(documentId, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        resolve(true);
      };
      const timer = setTimeout(() => {
        set.delete(done);
        resolve(false);
      }, ms);
      set.add(done);
    });
  }

  /**
   * Tells every instance. When the notifier cannot send (its database is down), this
   * instance's own listeners still hear it.
   */
  emit(documentId: string, event: IndexingEvent): void {
    // Under the notifier's size limit whatever the error said.
    const sent = event.message.length > MAX_MESSAGE_CHARS ? { ...event, message: `${event.message.slice(0, MAX_MESSAGE_CHARS)}…` } : event;
    this.#notifier.publish(INDEXING_CHANNEL, { documentId, event: sent } as unknown as NotificationPayload).catch(() => this.#deliver(documentId, sent));
  }

  /** Stops hearing events. */
  close(): void {
    this.#stop();
  }

  #deliver(documentId: string, event: IndexingEvent): void {
    for (const listener of this.#listeners.get(documentId) ?? []) listener(event);
    if (event.type !== 'progress') {
      this.#listeners.delete(documentId);
      for (const done of [...(this.#settled.get(documentId) ?? [])]) done();
      this.#settled.delete(documentId);
    }
  }
}
