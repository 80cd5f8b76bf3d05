import { createHash } from 'node:crypto';
import type { Notifier } from '../notify/notifier.js';

/** The notifier's channel of cancelled runs: each payload is a run's key (a hash, never the caller's data). */
const CHANNEL = 'agent-mcp-cancel';

/** What names one run of a project's MCP server: its caller, project, MCP session (if any) and the client's request id. */
export interface RunKey {
  readonly userId: string;
  readonly projectId: string;
  /** The client's `Mcp-Session-Id`; undefined for a client without one. */
  readonly sessionId: string | undefined;
  /** The JSON-RPC id of the client's request. */
  readonly requestId: string | number;
}

/** One fixed-size key per run: the same on every instance, and nothing of the caller's in the message. */
const keyOf = (run: RunKey) =>
  createHash('sha256')
    .update(JSON.stringify([run.userId, run.projectId, run.sessionId ?? null, run.requestId]))
    .digest('base64url');

/**
 * The runs of projects' MCP servers under way on this instance, and their cancellation from any
 * instance: a client's `notifications/cancelled` may reach another instance than the one running
 * the request (every request of the streamable HTTP transport is its own HTTP request), so a
 * cancel is published on the notifier and each instance aborts its run of that key.
 */
export class RunCancellations {
  readonly #notifier: Notifier;
  readonly #runs = new Map<string, Set<AbortController>>();
  #unsubscribe: (() => void) | undefined;

  constructor(notifier: Notifier) {
    this.#notifier = notifier;
  }

  #abort(key: string): void {
    for (const controller of this.#runs.get(key) ?? []) controller.abort(new DOMException('Cancelled by the client', 'AbortError'));
  }

  /**
   * Registers a run: its signal aborts when `parent` does (the client went away) or when the run
   * is cancelled (`cancel`) on any instance. Call `release` when the run ends.
   */
  track(run: RunKey, parent?: AbortSignal): { signal: AbortSignal; release: () => void } {
    // Subscribed on the first run only: an instance that serves no MCP client listens to nothing.
    this.#unsubscribe ??= this.#notifier.subscribe(CHANNEL, (payload) => {
      if (typeof payload === 'string') this.#abort(payload);
    });
    const key = keyOf(run);
    const controller = new AbortController();
    const set = this.#runs.get(key) ?? new Set();
    this.#runs.set(key, set.add(controller));
    const onParent = () => controller.abort(parent?.reason);
    if (parent?.aborted) onParent();
    else parent?.addEventListener('abort', onParent, { once: true });
    return {
      signal: controller.signal,
      release: () => {
        parent?.removeEventListener('abort', onParent);
        set.delete(controller);
        if (set.size === 0 && this.#runs.get(key) === set) this.#runs.delete(key);
      },
    };
  }

  /** Cancels the run of that key wherever it runs (here at once, elsewhere through the notifier). */
  async cancel(run: RunKey): Promise<void> {
    const key = keyOf(run);
    this.#abort(key);
    await this.#notifier.publish(CHANNEL, key);
  }

  /** Stops listening. */
  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }
}
