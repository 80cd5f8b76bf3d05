import type { ToolProgressListener } from '@agent-platform/core';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';

/** Sends a notification related to the request being answered (on its own response stream). */
export type SendNotification = (notification: ServerNotification) => Promise<void>;

/** Shortest interval between two progress notifications of streamed text, in ms. */
const TEXT_PROGRESS_MS = 200;

/**
 * The progress notifications of one tool call, when its client sent a `progressToken`: each
 * step (a tool round of the agent) is one, and the answer's text as it streams at most one per
 * 200 ms. `progress` counts the notifications sent, so it always increases; there is no total,
 * as the number of rounds is the model's choice.
 */
export function progressReporter(token: string | number | undefined, send: SendNotification) {
  let progress = 0;
  let lastText = 0;
  const notify = (message: string) => {
    if (token === undefined) return;
    progress += 1;
    // A client gone or a stream closed: progress is best effort, the result says the rest.
    send({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(() => {});
  };
  return {
    step: notify,
    /** The answer so far is `chars` characters long. */
    text(chars: number) {
      const now = performance.now();
      if (lastText !== 0 && now - lastText < TEXT_PROGRESS_MS) return;
      lastText = now;
      notify(`Answering: ${chars} characters`);
    },
  };
}

/**
 * A project tool's own progress (its code's `progress(done, total, message)`, coalesced by the
 * sandbox) as progress notifications, when the client sent a `progressToken`: `progress`,
 * `total` and `message` as the tool gave them. The protocol wants `progress` to increase with
 * each notification, so a report that does not go beyond the last one sent is dropped.
 */
export function toolProgressTo(token: string | number | undefined, send: SendNotification): ToolProgressListener | undefined {
  if (token === undefined) return undefined;
  let last = Number.NEGATIVE_INFINITY;
  return ({ progress, total, message }) => {
    if (progress <= last) return;
    last = progress;
    const params = { progressToken: token, progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) };
    send({ method: 'notifications/progress', params }).catch(() => {});
  };
}

/** Sends a log message (`notifications/message`) on the request's stream when the session's level `allows` it, best effort. */
export function logTo(send: SendNotification, allows: (level: 'info' | 'warning') => boolean) {
  return (level: 'info' | 'warning', data: string) => {
    if (!allows(level)) return;
    send({ method: 'notifications/message', params: { level, logger: 'agent', data } }).catch(() => {});
  };
}
