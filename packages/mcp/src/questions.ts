import { type ElicitationAnswer, type ElicitationRequest, PlatformError } from '@agent-platform/core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** A running call that can answer its server's questions. */
export type Asker = (question: ElicitationRequest) => Promise<ElicitationAnswer>;

/** The longest delay a timer takes (the SDK's own request timeout is then never the one that fires). */
const MAX_TIMER_MS = 2_147_483_647;

/** A time limit that stands still while paused: its signal aborts with `error()` once `ms` of running time have passed. */
function pausableTimeout(ms: number, error: () => PlatformError): { signal: AbortSignal; pause(): void; resume(): void; stop(): void } {
  const controller = new AbortController();
  let left = ms;
  let started = Date.now();
  let paused = 0;
  let timer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => controller.abort(error()), left);
  return {
    signal: controller.signal,
    pause() {
      if (paused++ > 0 || !timer) return;
      clearTimeout(timer);
      timer = undefined;
      left -= Date.now() - started;
    },
    resume() {
      if (--paused > 0 || controller.signal.aborted) return;
      started = Date.now();
      timer = setTimeout(() => controller.abort(error()), Math.max(1, left));
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * A tool call that may ask the person (`elicitation/create`): registered in `askers` while it
 * runs (the connection routes questions to the oldest), its time limit (`remaining` ms, then a
 * `timeout` naming `subject`) standing still while a question waits for `elicit`.
 */
export async function callAsking(
  client: Client,
  params: { name: string; arguments: Record<string, unknown> },
  remaining: number,
  signal: AbortSignal | undefined,
  options: { askers: Set<Asker>; elicit: Asker; subject: string; timeoutMs: number } | undefined,
): Promise<unknown> {
  // A call that asks nothing: the SDK's own time limit.
  if (!options) return client.callTool(params, undefined, { timeout: remaining, ...(signal ? { signal } : {}) });
  const late = () => new PlatformError('timeout', `${options.subject} did not answer within ${options.timeoutMs} ms`, { retryable: true, details: { timeoutMs: options.timeoutMs } });
  const clock = pausableTimeout(remaining, late);
  const ask: Asker = async (question) => {
    clock.pause();
    try {
      return await options.elicit(question);
    } finally {
      clock.resume();
    }
  };
  options.askers.add(ask);
  try {
    return await client.callTool(params, undefined, { timeout: MAX_TIMER_MS, signal: signal ? AbortSignal.any([signal, clock.signal]) : clock.signal });
  } finally {
    options.askers.delete(ask);
    clock.stop();
  }
}
