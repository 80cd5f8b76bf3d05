import type { StreamStore } from '../completions/types.js';
import type { ResponseResource, ResponseStreamEvent } from '../schemas/response-objects.js';
import type { StorageAdapter } from '../storage/types.js';
import { isRecorded, recordedEvents, storedEvents } from './replay.js';
import { notFound, RUNNING, type Runs } from './runs.js';

/** Where a response is read from: storage, the recorded streams, the runs of this process. */
export interface Reading {
  readonly storage: StorageAdapter;
  readonly streams: StreamStore;
  readonly runs: Runs;
}

/** How often a reader of a response running on another instance, and not recorded, looks again (ms). */
const POLL_MS = 500;

const pause = (signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, POLL_MS);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** The stored response once it has ended; undefined while it runs; `not_found` when it is gone. */
async function ended(r: Reading, userId: string, id: string): Promise<ResponseResource | undefined> {
  const run = r.runs.get(userId, id);
  if (run) return run.done.then(() => structuredClone(run.resource));
  const record = await r.storage.responses.get(userId, id);
  if (!record) throw notFound(id);
  return RUNNING.includes(record.status) ? undefined : { ...(record.resource as ResponseResource), status: record.status };
}

/** The response once it has ended (waiting for it: at once in this process, looked at again across instances). */
export async function endedResponse(r: Reading, userId: string, id: string, signal: AbortSignal | undefined): Promise<ResponseResource> {
  for (;;) {
    const response = await ended(r, userId, id);
    if (response) return response;
    await pause(signal);
    signal?.throwIfAborted();
  }
}

/**
 * A response's events after sequence number `after`, live until it ends: as recorded (a
 * streamed or background response, on any instance), else made from the stored response once
 * it has ended (a response not streamed, or whose recording expired).
 */
export async function* followResponse(r: Reading, userId: string, id: string, after: number | undefined, signal: AbortSignal | undefined): AsyncGenerator<ResponseStreamEvent> {
  for (;;) {
    // A run here records from its start when asked (a streamed one begins after its first text).
    await r.runs.get(userId, id)?.recorder?.open();
    if (await isRecorded(r.streams, userId, id)) {
      yield* recordedEvents(r.streams, userId, id, after, signal);
      return;
    }
    const response = await ended(r, userId, id);
    if (response) {
      yield* storedEvents(response, after);
      return;
    }
    // Running on another instance, not recorded (yet): looked at again.
    await pause(signal);
    if (signal?.aborted) return;
  }
}
