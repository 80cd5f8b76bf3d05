/** Sends items in batches; see {@link createCoalescer}. */
export interface Coalescer<T> {
  /** Resolves once `item` was sent (its batch's `send` resolved), rejects with its batch's error or its own. */
  add(item: T): Promise<void>;
}

/**
 * Sends items one batch at a time, in the order they were added: an item added while nothing is
 * in flight goes at once, alone; items added while a batch is in flight wait and go together in
 * the next one, so a burst costs one round trip per batch instead of one per item, and an item
 * never waits longer than the batch before it. `joins(batch, item)` says whether the next
 * waiting item may join the batch being made (a size cap, no repeated key); the first item of a
 * batch always goes. `send` may resolve to an array of one error (or undefined) per item, to fail
 * some items of a batch and not others; when it rejects, every item of the batch rejects with
 * its error.
 *
 * @example
 * const notifications = createCoalescer<string>((bodies) => send(bodies), (batch) => batch.length < 100);
 * await notifications.add(body);
 */
export function createCoalescer<T>(send: (items: readonly T[]) => Promise<unknown>, joins: (batch: readonly T[], item: T) => boolean): Coalescer<T> {
  const waiting: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let sending = false;
  const flush = async () => {
    sending = true;
    while (waiting.length > 0) {
      const batch: T[] = [];
      for (const entry of waiting) {
        if (batch.length > 0 && !joins(batch, entry.item)) break;
        batch.push(entry.item);
      }
      const entries = waiting.splice(0, batch.length);
      try {
        const answer = await send(batch);
        const errors: readonly unknown[] = Array.isArray(answer) ? answer : [];
        for (const [i, entry] of entries.entries()) {
          const error = errors[i];
          if (error === undefined) entry.resolve();
          else entry.reject(error);
        }
      } catch (error) {
        for (const entry of entries) entry.reject(error);
      }
    }
    sending = false;
  };
  return {
    add: (item) =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (!sending) void flush();
      }),
  };
}
