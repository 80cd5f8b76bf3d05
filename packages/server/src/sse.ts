import type { ErrorCode, StreamRecord } from '@agent-platform/core';
import type { ResponseStreamEvent } from '@agent-platform/core/schemas';
import { openaiError, responsesError } from './errors.js';

/** Default interval of the keep-alive comment of every SSE response: 15 s. */
export const DEFAULT_SSE_KEEP_ALIVE_MS = 15_000;

/**
 * Default time a completion's stream waits for the run's first event before its headers go out:
 * 5 s. A model that refuses (a bad key, a 429, an unknown model) does so well within it.
 */
export const DEFAULT_STREAM_HOLD_MS = 5_000;

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  // A reverse proxy (nginx and those that honour it) must pass events on as they come.
  'x-accel-buffering': 'no',
};

/** The first bytes of every SSE response: a comment, so headers and a body start at once. */
export const SSE_OPENING = ': ok\n\n';
/** The periodic comment that keeps idle connections (and proxies' timers) alive. */
export const SSE_KEEP_ALIVE = ': keep-alive\n\n';

export interface EventStreamOptions<T> {
  /** Formats one value as one or more complete SSE lines ending with a blank line. */
  readonly frame: (value: T) => string;
  /** The frame sent for a failure of the iterable; the stream then ends. */
  readonly failure: (error: unknown) => string;
  /** Written after the last value (e.g. `data: [DONE]`). */
  readonly end?: string;
  /** Interval of the keep-alive comment, in ms. */
  readonly keepAliveMs: number;
  /** Told once when the client goes away (closes, reloads) before the stream ended: a normal event. */
  readonly onClientGone?: () => void;
  /**
   * A failure of the iterable after the client went away, when no failure frame can reach
   * anyone (an abort caused by the client leaving, or a bug worth logging).
   */
  readonly onFailureAfterClientGone?: (error: unknown) => void;
}

/** One `data:` line of JSON. */
export const dataFrame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/**
 * One event of a chat completion's stream: a chunk, or the failure that ended it as OpenAI's
 * error object (`openaiError`); with its event id when the stream is recorded (so
 * `Last-Event-ID` resumes it). Live and replayed streams are framed by this one function, so a
 * failure reads the same in both.
 */
export function completionFrame(record: StreamRecord, id?: number): string {
  const data = record.type === 'chunk' ? record.chunk : { error: openaiError(record.code, record.message, record.details) };
  return id === undefined ? dataFrame(data) : `id: ${id}\n${dataFrame(data)}`;
}

/**
 * One event of a response's stream, as the Open Responses specification frames it: `event:`
 * its type, `data:` the event. A failure (`error`) carries the specification's error object:
 * the core error code becomes its `type` and `code` as on the completions route.
 */
export function responseFrame(event: ResponseStreamEvent): string {
  if (event.type !== 'error') return `event: ${event.type}\n${dataFrame(event)}`;
  const { code, message, details } = (event as unknown as { error: { code: ErrorCode; message: string; details?: Record<string, unknown> } }).error;
  const param = (event as unknown as { error: { param: string | null } }).error.param;
  return `event: error\n${dataFrame({ type: 'error', sequence_number: event.sequence_number, error: { ...responsesError(code, message, details), param } })}`;
}

/** The last event of a chat completion's stream. */
export const COMPLETION_END = 'data: [DONE]\n\n';

/**
 * Server-Sent Events from an async iterable, each value written as it is produced (no
 * buffering). The headers and an opening comment go out at once, before the first value: a
 * Node response sends its headers with the first body bytes, so a stream with nothing to say
 * yet would otherwise leave clients waiting for headers (and an `EventSource` unable to tell it
 * is open). A comment follows every `keepAliveMs` while the stream lasts. A client that goes
 * away stops the iteration (which aborts whatever feeds it).
 */
export function eventStream<T>(events: AsyncIterable<T>, options: EventStreamOptions<T>): Response {
  const encoder = new TextEncoder();
  const iterator = events[Symbol.asyncIterator]();
  let timer: ReturnType<typeof setInterval> | undefined;
  /**
   * Set when the client went away. A `pull` may be waiting for the next value then: the
   * controller is closed by the time it arrives, so the value (or failure) goes nowhere.
   */
  let gone = false;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(SSE_OPENING));
      timer = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(SSE_KEEP_ALIVE));
        } catch {
          stop(); // closed in between
        }
      }, options.keepAliveMs);
      timer.unref?.();
    },
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (gone) return;
        if (next.done) {
          stop();
          if (options.end) controller.enqueue(encoder.encode(options.end));
          return controller.close();
        }
        controller.enqueue(encoder.encode(options.frame(next.value)));
      } catch (error) {
        stop();
        if (gone) return options.onFailureAfterClientGone?.(error);
        controller.enqueue(encoder.encode(options.failure(error)));
        controller.close();
      }
    },
    async cancel() {
      gone = true;
      stop();
      options.onClientGone?.();
      await iterator.return?.().catch((error: unknown) => options.onFailureAfterClientGone?.(error));
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}

/**
 * `events` once its first value or failure came, or `holdMs` passed: a completion's stream holds
 * its response (status and headers) until the run has something to say, so a run that fails
 * before its first event (the model refused the key, a 429, an unknown model) is answered with
 * the status of that failure, as the same request without `stream` is: this throws it. After
 * `holdMs`, what the run has not yet said is streamed as it comes (headers and keep-alives go
 * out, so a slow model never leaves a client without headers), and a later failure is the
 * stream's last event.
 */
export async function afterFirstEvent<T>(events: AsyncIterable<T>, holdMs: number): Promise<AsyncIterable<T>> {
  return (await afterOpening(events, holdMs, () => false)).events;
}

/**
 * `afterFirstEvent` for a stream that opens with events of its own before the run says anything
 * (a response's `response.created` and `response.in_progress`): those (`opening`) are held
 * with the run's first event, so the caller can answer a failure the run reports as its first
 * event with that failure's status. Answers the held events (`head`, the last one the first
 * that is not opening, unless the run ended or `holdMs` passed first) and the whole stream.
 */
export async function afterOpening<T>(events: AsyncIterable<T>, holdMs: number, opening: (event: T) => boolean): Promise<{ head: readonly T[]; events: AsyncIterable<T> }> {
  const iterator = events[Symbol.asyncIterator]();
  const head: T[] = [];
  let pending: Promise<IteratorResult<T>> | undefined;
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const held = new Promise<'held'>((resolve) => {
    timer = setTimeout(() => resolve('held'), holdMs);
  });
  try {
    for (;;) {
      pending = iterator.next();
      const next = await Promise.race([pending, held]);
      if (next === 'held') break;
      pending = undefined;
      if (next.done) {
        ended = true;
        break;
      }
      head.push(next.value);
      if (!opening(next.value)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  let at = 0;
  const rest: AsyncIterator<T> = {
    next: () => {
      if (at < head.length) return Promise.resolve({ done: false, value: head[at++] as T });
      if (ended) return Promise.resolve({ done: true, value: undefined });
      const next = pending ?? iterator.next();
      pending = undefined;
      return next;
    },
    return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
  };
  return { head, events: { [Symbol.asyncIterator]: () => rest } };
}
