import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { startLoopback, watchExchange } from './loopback.js';

/**
 * The plumbing of a loopback fake (`127.0.0.1`, a free port): it reads each request whole,
 * records it, tells how the exchange ended (the answer written in full, or the client closed the
 * connection first: what an abort test waits for), and closes every connection on `close()`.
 * Node built-ins only, so tests of other packages can import a fake by relative path.
 */

export interface RecordedRequest {
  readonly method: string;
  /** The path without the query, e.g. `/openai/deployments/gpt-4o/chat/completions`. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The raw body text. */
  readonly raw: string;
  /** The parsed JSON body (`{}` when it was not a JSON object). */
  readonly body: Record<string, unknown>;
  /** True when the body was not JSON at all. */
  readonly malformed: boolean;
  /** The HTTP status answered (0 while no answer was started). */
  status: number;
  /** How the exchange ended. */
  readonly ended: Promise<'completed' | 'client_closed'>;
}

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly record: RecordedRequest;
  /** The client has gone (stop writing). */
  closed(): boolean;
  /** Answers JSON with that status (and records it). */
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** Starts an event stream (200, `text/event-stream`), headers sent at once. */
  startStream(headers?: Record<string, string>): void;
}

export interface ExchangeServer {
  readonly origin: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Writes SSE records (`data: <json>`, or with `event:` lines), one per item, honouring a delay, a stall and a drop. */
export async function writeEvents(
  exchange: Exchange,
  records: readonly string[],
  options: { readonly delayMs?: number; readonly stallAfter?: number; readonly dropAfter?: number } = {},
): Promise<void> {
  for (let i = 0; i < records.length; i++) {
    if (i > 0 && options.delayMs) await sleep(options.delayMs);
    if (exchange.closed()) return;
    if (i === options.stallAfter) return;
    if (i === options.dropAfter) return void exchange.req.socket.destroy();
    exchange.res.write(records[i]);
  }
  exchange.res.end();
}

const serverError = (error: unknown) => ({ error: { message: String(error), type: 'server_error', param: null, code: null } });

export async function startExchangeServer(handle: (exchange: Exchange) => Promise<void> | void): Promise<ExchangeServer> {
  const requests: RecordedRequest[] = [];
  const answer = (res: ServerResponse, record: RecordedRequest | undefined, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (record) record.status = status;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const loopback = await startLoopback(
    async (req, res, body) => {
      const raw = body.toString('utf8');
      let parsed: unknown;
      let malformed = false;
      try {
        parsed = raw === '' ? {} : JSON.parse(raw);
      } catch {
        malformed = true;
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const watched = watchExchange(res);
      const record: RecordedRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        raw,
        body: typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {},
        malformed,
        status: 0,
        ended: watched.ended,
      };
      requests.push(record);
      const exchange: Exchange = {
        req,
        res,
        record,
        closed: watched.closed,
        json: (status, json, headers) => answer(res, record, status, json, headers),
        startStream(headers = {}) {
          record.status = 200;
          res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
          res.flushHeaders();
        },
      };
      try {
        await handle(exchange);
      } catch (error) {
        // Before the answer started: a 500 in OpenAI's error shape (after it, the loopback drops the connection).
        if (res.headersSent) throw error;
        exchange.json(500, serverError(error));
      }
    },
    (res, error) => answer(res, undefined, 500, serverError(error)),
  );
  return { origin: loopback.origin, port: loopback.port, requests, close: loopback.close };
}

/** What every scripted fake offers: the requests it got, the replies queued for the next ones, and closing. */
export interface ScriptedFake<R> {
  /** Every request, in order (rejected ones too). */
  readonly requests: RecordedRequest[];
  /** Queues replies for the next requests, in order. */
  script(...replies: R[]): void;
  lastRequest(): RecordedRequest | undefined;
  /** Drops the queued replies and the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

/** A queue of scripted replies: `next()` takes the first one (undefined when none is queued). */
export function replyQueue<R>(): { next(): R | undefined; controls(server: ExchangeServer): ScriptedFake<R> } {
  let queue: R[] = [];
  return {
    next: () => queue.shift(),
    controls: (loopback) => ({
      requests: loopback.requests,
      script: (...replies) => void queue.push(...replies),
      lastRequest: () => loopback.requests[loopback.requests.length - 1],
      reset: () => {
        queue = [];
        loopback.requests.length = 0;
      },
      close: () => loopback.close(),
    }),
  };
}
