import { PlatformError } from '../errors.js';
import type { Notifier } from '../notify/notifier.js';
import type { ResponseResource } from '../schemas/response-objects.js';
import type { ResponseRecordStatus } from '../storage/types.js';
import type { EventRecorder } from './replay.js';

/** The statuses of a response that has not ended. */
export const RUNNING: readonly ResponseRecordStatus[] = ['queued', 'in_progress'];

export const notFound = (id: string, param = 'id') =>
  new PlatformError('not_found', `Response ${id} not found`, { issues: [{ path: [param], code: 'custom', message: 'no response of yours has this id' }] });

/** The channel on which a cancel reaches the instance running the response. */
export const CANCEL_CHANNEL = 'responses.cancel';

/** A response running in this process. */
export interface Run {
  readonly userId: string;
  /** The resource as it stands (updated as the run goes). */
  readonly resource: ResponseResource;
  /** Stops the run (the model call, the tools) where it is. */
  readonly controller: AbortController;
  /** Settles when the run has ended and its last state is written. */
  readonly done: Promise<void>;
  /** True once a cancel reached it. */
  cancelled: boolean;
  /** Records its events (a streamed or background response). */
  readonly recorder?: EventRecorder | undefined;
}

/**
 * The responses running in this process, by id, and the cancels that reach them: a cancel on
 * any instance is published on `CANCEL_CHANNEL` (the notifier reaches every instance of a
 * deployment: PostgreSQL's LISTEN/NOTIFY across instances), and the instance running it stops it.
 */
export class Runs {
  readonly #runs = new Map<string, Run>();
  readonly #notifier: Notifier;
  readonly #unsubscribe: () => void;

  constructor(notifier: Notifier) {
    this.#notifier = notifier;
    this.#unsubscribe = notifier.subscribe(CANCEL_CHANNEL, (payload) => {
      const { id, userId } = (payload ?? {}) as { id?: unknown; userId?: unknown };
      if (typeof id === 'string' && typeof userId === 'string') this.stop(userId, id);
    });
  }

  add(id: string, run: Run): void {
    this.#runs.set(id, run);
    void run.done.finally(() => {
      if (this.#runs.get(id) === run) this.#runs.delete(id);
    });
  }

  /** The user's run of that id in this process, if it runs here. */
  get(userId: string, id: string): Run | undefined {
    const run = this.#runs.get(id);
    return run?.userId === userId ? run : undefined;
  }

  /** Stops the user's run here, if it runs here; answers it. */
  stop(userId: string, id: string): Run | undefined {
    const run = this.get(userId, id);
    if (run && !run.cancelled) {
      run.cancelled = true;
      run.controller.abort(new Error('The response was cancelled'));
    }
    return run;
  }

  /** Stops the run wherever it runs: here at once, on other instances through the notifier. */
  async cancel(userId: string, id: string): Promise<Run | undefined> {
    const here = this.stop(userId, id);
    if (!here) await this.#notifier.publish(CANCEL_CHANNEL, { id, userId });
    return here;
  }

  /** Stops every run of this process (the platform closes) and stops listening. */
  async close(): Promise<void> {
    this.#unsubscribe();
    const runs = [...this.#runs.values()];
    for (const run of runs) run.controller.abort(new Error('The service is shutting down'));
    await Promise.allSettled(runs.map((r) => r.done));
  }
}
