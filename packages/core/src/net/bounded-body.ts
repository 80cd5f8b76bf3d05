import { isPlatformError, PlatformError } from '../errors.js';
import { displayUrl } from './display.js';

/**
 * How much of an upstream's answer is read. The limits are counted on the bytes as they arrive
 * (after any `content-encoding` is undone, so a compressed bomb counts at its real size), and
 * the upstream is cut off as soon as one is passed: an answer is never held, or joined into
 * one string, beyond them.
 */
export interface BodyLimit {
  /** Most bytes of the whole body. Undefined: no bound on the whole (an event stream's events are still bounded by `maxEventBytes`). */
  readonly maxBytes?: number | undefined;
  /**
   * Most bytes of one event of an event stream (its lines up to the blank line that ends it),
   * hence of one line too, counted in any answer (an answer that is not `text/event-stream` may
   * still be read as one: the `openai` client reads every streamed completion so). The body is
   * then handed on a whole line at a time, so that a consumer that searches each chunk for a
   * line end from the start of the line it holds (the SSE parsers of the `openai` client and of
   * the MCP SDK) reads a long line once, not once per chunk.
   */
  readonly maxEventBytes?: number | undefined;
  /** Who sent it, for the message (e.g. `Model provider openai (http://host/v1)`). Default: the request's URL. */
  readonly subject?: string | undefined;
  /** The setting that raises the limit, named in the message (e.g. `--max-model-answer`). */
  readonly setting: string;
  /** Told the error when a limit is passed (before the body fails with it): for clients that report a broken stream only vaguely. */
  readonly onExceeded?: ((error: PlatformError) => void) | undefined;
}

/** The error of an answer past its limit: `upstream_error`, naming the limit and the setting that raises it. */
export function answerTooLarge(subject: string, what: string, limitBytes: number, setting: string): PlatformError {
  return new PlatformError('upstream_error', `${subject} sent ${what} larger than ${limitBytes} bytes, the limit set by ${setting}: it was cut off there and not used`, {
    details: { limitBytes, setting },
  });
}

/** The `answerTooLarge` error in `error`'s cause chain, if any. */
export function answerTooLargeIn(error: unknown): PlatformError | undefined {
  for (let e = error, depth = 0; e !== null && typeof e === 'object' && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    if (isPlatformError(e) && typeof e.details?.limitBytes === 'number') return e;
  }
  return undefined;
}

/** True for an answer whose `content-type` is `text/event-stream`. */
export const isEventStream = (response: Response): boolean => /^\s*text\/event-stream\s*(;|$)/i.test(response.headers.get('content-type') ?? '');

/** Bytes concatenated into one array. */
function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}

/**
 * Counts the bytes of an event stream's current event and line. An event ends at a blank line;
 * `\r\n`, `\n` and `\r` each end a line (as the SSE format says). Returns whether `chunk` ended
 * a line, or the limit that was passed.
 */
class EventCounter {
  #eventBytes = 0;
  #lineBytes = 0;
  #afterCR = false;

  constructor(readonly maxEventBytes: number) {}

  /** Feeds `chunk`: `true` when it ends at least one line, `false` when not, `'over'` when an event passed the limit. */
  feed(chunk: Uint8Array): boolean | 'over' {
    let ended = false;
    // The next \n and \r at or after a position, found natively (indexOf) and kept while still
    // ahead: a chunk is searched once for each, not byte by byte in JavaScript.
    let lf = -2;
    let cr = -2;
    const nextEnd = (from: number): number => {
      if (lf !== -1 && lf < from) lf = chunk.indexOf(10, from);
      if (cr !== -1 && cr < from) cr = chunk.indexOf(13, from);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      return end === -1 ? chunk.length : end;
    };
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (b === 10 || b === 13) {
        if (b === 10 && this.#afterCR) {
          this.#afterCR = false;
          continue; // the \n of \r\n: the same line end
        }
        this.#afterCR = b === 13;
        ended = true;
        if (this.#lineBytes === 0) this.#eventBytes = 0; // a blank line ends the event
        this.#lineBytes = 0;
        continue;
      }
      this.#afterCR = false;
      // A run of ordinary bytes up to the next line end is counted at once.
      const end = nextEnd(i + 1);
      this.#lineBytes += end - i;
      this.#eventBytes += end - i;
      if (this.#eventBytes > this.maxEventBytes) return 'over';
      i = end - 1;
    }
    return ended;
  }
}

/** Bytes of one answer read between two turns of the event loop (see `limitBody`). */
const TURN_BYTES = 256 * 1024;

/**
 * `response` with its body read under `limit` (see `BodyLimit`): the same status and headers,
 * and a body that fails with `answerTooLarge` at the first byte past a limit, after cancelling
 * the upstream's body (which closes its connection). A `content-length` already past
 * `maxBytes` fails at the first read, before anything is read.
 */
export function limitBody(response: Response, limit: BodyLimit, url: string): Response {
  const source = response.body;
  if (!source) return response;
  const subject = limit.subject ?? displayUrl(url);
  const events = limit.maxEventBytes !== undefined ? new EventCounter(limit.maxEventBytes) : undefined;
  const maxBytes = limit.maxBytes;
  const declared = Number(response.headers.get('content-length'));
  const reader = source.getReader();
  let total = 0;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let sinceTurn = 0;
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: PlatformError) => {
    pending = [];
    limit.onExceeded?.(error);
    reader.cancel(error).catch(() => undefined);
    controller.error(error);
  };
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (maxBytes !== undefined && Number.isFinite(declared) && declared > maxBytes) return fail(controller, answerTooLarge(subject, 'an answer', maxBytes, limit.setting));
        for (;;) {
          let next: Awaited<ReturnType<typeof reader.read>>;
          try {
            next = await reader.read();
          } catch (error) {
            controller.error(error);
            return;
          }
          if (next.done) {
            if (pendingBytes > 0) controller.enqueue(concat(pending, pendingBytes));
            pending = [];
            controller.close();
            return;
          }
          const chunk = next.value;
          total += chunk.byteLength;
          if (maxBytes !== undefined && total > maxBytes) return fail(controller, answerTooLarge(subject, 'an answer', maxBytes, limit.setting));
          // Reads that find data waiting resolve one after another as microtasks, never giving
          // the event loop a turn: a turn every TURN_BYTES, so that a fast upstream's answer,
          // however long, is not read (and counted, and held) in one stretch of the thread.
          sinceTurn += chunk.byteLength;
          if (sinceTurn >= TURN_BYTES) {
            sinceTurn = 0;
            await new Promise<void>((resolve) => setImmediate(resolve));
          }
          if (!events) {
            controller.enqueue(chunk);
            return;
          }
          const fed = events.feed(chunk);
          if (fed === 'over') return fail(controller, answerTooLarge(subject, 'an event', events.maxEventBytes, limit.setting));
          pending.push(chunk);
          pendingBytes += chunk.byteLength;
          if (fed) {
            // Handed on once a line is complete: everything held so far, as one chunk.
            controller.enqueue(concat(pending, pendingBytes));
            pending = [];
            pendingBytes = 0;
            return;
          }
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  const bounded = new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // What a new Response cannot be given: where the answer came from.
  Object.defineProperty(bounded, 'url', { value: response.url });
  Object.defineProperty(bounded, 'redirected', { value: response.redirected });
  return bounded;
}

/** A fetch's arguments, as `boundedFetch` hands them to a limit chooser. */
export interface BoundedRequest {
  readonly url: string;
  readonly method: string;
}

/** Any fetch-like function: one that takes a URL (and maybe a `Request`) and answers a `Response`. */
type AnyFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * `fetch` with every answer's body read under a limit (`limitBody`): `limit` itself, or the one
 * it chooses for each request and its answer (e.g. a whole-body bound for GETs, an event bound
 * for a streamed POST). Other properties of `fetch` (a guarded fetch's `check`) are kept.
 *
 * @example
 * const bounded = boundedFetch(fetch, { maxBytes: 1024 * 1024, setting: 'maxAnswerBytes' });
 * const text = await (await bounded('http://127.0.0.1:11434/api/tags')).text(); // at most 1 MiB read
 */
export function boundedFetch<F extends AnyFetch>(fetch: F, limit: BodyLimit | ((request: BoundedRequest, response: Response) => BodyLimit)): F {
  const bounded = async (input: Parameters<F>[0] | Request, init?: RequestInit): Promise<Response> => {
    const response = await (fetch as unknown as (input: unknown, init?: RequestInit) => Promise<Response>)(input, init);
    const url = response.url || (input instanceof Request ? input.url : String(input));
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    return limitBody(response, typeof limit === 'function' ? limit({ url, method }, response) : limit, url);
  };
  return Object.assign(bounded, fetch) as unknown as F;
}
