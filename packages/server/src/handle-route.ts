import { type AgentPlatform, type Caller, PlatformError } from '@agent-platform/core';
import { parseInput, responseFailure } from '@agent-platform/core/internal';
import { getRouterParams, type H3Event } from 'h3';
import type { Logger } from 'pino';
import { FastResponse } from 'srvx';
import { auditOf, beginAudit } from './audit.js';
import { binaryResponse } from './binary.js';
import { queryObject, readJsonBody } from './body.js';
import { failureHeaders, openaiError, responsesError, toErrorResponse } from './errors.js';
import { readMultipartBody } from './multipart.js';
import type { ApiRoute, RouteAudit, RouteInput } from './route.js';
import { afterFirstEvent, afterOpening, COMPLETION_END, completionFrame, dataFrame, eventStream, responseFrame } from './sse.js';

export interface RouteHandlerOptions {
  /** Largest JSON body, in bytes. */
  readonly bodyLimit: number;
  /** Largest body of the routes with `bodyLimit: 'upload'`, in bytes. */
  readonly uploadLimit: number;
  /** Largest body of the routes with `bodyLimit: 'completion'` (the JSON limit and the request's images), in bytes. */
  readonly completionLimit: number;
  /** Interval of the SSE keep-alive comment, in ms. */
  readonly keepAliveMs: number;
  /** How long a completion's stream waits for the run's first event before sending its headers, in ms (`afterFirstEvent`). */
  readonly streamHoldMs: number;
  readonly logger?: Logger | undefined;
  /** Origins allowed besides the server's own on routes with `checkOrigin`; `'*'` for any. */
  readonly corsOrigins?: readonly string[] | undefined;
}

/**
 * A JSON response. srvx's `FastResponse` with a string body is written to the socket as it is,
 * with its `content-length`, in one write; a web `Response` would be read back through its
 * `ReadableStream` and sent chunked (the largest cost of a small answer in the list route's
 * profile: docs/BENCHMARKS.md, projects).
 */
export const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new FastResponse(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });

/** The caller of a request with a valid `Authorization: Bearer <key>`, else undefined. */
async function authenticate(platform: AgentPlatform, event: H3Event): Promise<Caller | undefined> {
  const header = event.req.headers.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ? platform.authenticate(match[1]) : undefined;
}

/** The request's own abort (the client went away), as fetch and AbortSignal raise it. */
const isAbort = (error: unknown) => (error as { name?: unknown } | null)?.name === 'AbortError';

/**
 * The answer of an API route to a request: authenticates, reads the body within the route's
 * byte limit (413 before anything is parsed), parses params, query and body with the route's
 * schemas (400 naming the field; 413 past a field's size limit), runs the handler and sends
 * its result as the route's `kind` says. Every failure is answered in the route's error shape.
 */
export function createRouteHandler(platform: AgentPlatform, options: RouteHandlerOptions) {
  const log = options.logger;

  /** The message of a failure mid-stream, logging bugs with the request id. */
  const streamFailure = (error: unknown, event: H3Event) => {
    const { body, bug } = toErrorResponse(error);
    if (bug) log?.error({ reqId: event.context.requestId, err: error }, 'stream failed');
    return body;
  };
  /** The failure event that ends a chat completion's stream, live or replayed. */
  const completionFailure = (error: unknown, event: H3Event) => {
    const { code, message, details } = streamFailure(error, event);
    return completionFrame({ type: 'error', code, message, ...(details ? { details } : {}) });
  };
  /**
   * What a stream logs when its client goes away before the end (a closed tab, a reload, a
   * stopped answer): one info line, as nothing failed. A failure that follows is logged only
   * when it is a bug; its answer, an abort or an upstream's error, has no one left to read it.
   */
  const clientGone = (event: H3Event) => ({
    onClientGone: () => log?.info({ reqId: event.context.requestId }, 'the client went away before the stream ended'),
    onFailureAfterClientGone: (error: unknown) => {
      if (toErrorResponse(error).bug && !isAbort(error)) log?.error({ reqId: event.context.requestId, err: error }, 'stream failed after its client went away');
    },
  });

  /** The request's parts parsed by the route's schemas, and its body as the client sent it (`raw`, for the audit's field names). */
  async function readInput(route: ApiRoute, event: H3Event, caller: Caller): Promise<{ input: RouteInput; raw: unknown }> {
    // The body first: its size is checked against the route's byte limit before any parsing.
    const limit = route.bodyLimit === 'upload' ? options.uploadLimit : route.bodyLimit === 'completion' ? options.completionLimit : options.bodyLimit;
    const raw = !route.body ? undefined : route.bodyKind === 'multipart' ? await readMultipartBody(event.req, limit) : await readJsonBody(event.req, limit);
    const input: RouteInput = {
      caller,
      params: route.params ? parseInput(route.params, getRouterParams(event, { decode: true })) : {},
      query: route.query ? parseInput(route.query, queryObject(event.url)) : {},
      body: route.body ? parseInput(route.body, raw) : undefined,
      signal: event.req.signal,
      headers: event.req.headers,
      request: event.req,
    };
    return { input, raw };
  }

  /**
   * Answers a call to a route that changes something (`RouteAudit`): its audit event is written
   * first and settled with the handler's outcome (`beginAudit`). An event that cannot be settled
   * (the database gone meanwhile) stays pending, which is true: the answer is the change's.
   */
  async function answerAudited(route: ApiRoute, audit: RouteAudit, input: RouteInput, raw: unknown, event: H3Event): Promise<Response> {
    const ticket = await beginAudit(platform, audit, route, input, raw, event);
    const unsettled = (err: unknown) => log?.error({ reqId: event.context.requestId, err }, 'the audit event could not be settled');
    let result: unknown;
    const seen = { ...route, handler: (p: AgentPlatform, i: RouteInput) => route.handler(p, i).then((r: unknown) => (result = r)) } as ApiRoute;
    let response: Response;
    try {
      response = await answer(seen, input, event);
    } catch (error) {
      await ticket.failed().catch(unsettled);
      throw error;
    }
    await ticket.succeeded(result).catch(unsettled);
    return response;
  }

  async function answer(route: ApiRoute, input: RouteInput, event: H3Event): Promise<Response> {
    const keepAliveMs = options.keepAliveMs;
    switch (route.kind) {
      case 'openai': {
        const completion = await route.handler(platform, input);
        if (!completion.stream) return json(200, completion.body);
        // A failure before the run's first event throws here: answered with its status, as without `stream`.
        return eventStream(await afterFirstEvent(completion.chunks, options.streamHoldMs), {
          frame: (chunk) => completionFrame({ type: 'chunk', chunk }),
          failure: (e) => completionFailure(e, event),
          end: COMPLETION_END,
          keepAliveMs,
          ...clientGone(event),
        });
      }
      case 'responses': {
        // The Open Responses stream: its failures are events of the stream itself (an `error`,
        // then `response.failed`); a failure outside it (a bug) ends it with an `error` event.
        const result = await route.handler(platform, input);
        if (!result.stream) return json(200, result.body);
        // Held as a completion's stream is: a run that fails before its first event is answered
        // with the failure's status, as without `stream` (the response is kept failed all the same).
        // A replay is sent as it is.
        const held = result.replay
          ? { head: [], events: result.events }
          : await afterOpening(result.events, options.streamHoldMs, (e) => e.type === 'response.created' || e.type === 'response.in_progress');
        const first = held.head.at(-1);
        const failed = first && responseFailure(first);
        if (failed) {
          // The rest (response.failed) read to the end, so the run ends and keeps the response failed.
          for await (const _ of held.events);
          throw failed;
        }
        return eventStream(held.events, {
          frame: responseFrame,
          failure: (e) => {
            const { code, message, details } = streamFailure(e, event);
            return responseFrame({ type: 'error', sequence_number: -1, error: { code, message, param: null, ...(details ? { details } : {}) } });
          },
          end: COMPLETION_END,
          keepAliveMs,
          ...clientGone(event),
        });
      }
      case 'sse':
        // Indexing progress: one `data:` JSON event each; a failure is a last `error` event.
        return eventStream(await route.handler(platform, input), {
          frame: dataFrame,
          failure: (e) => dataFrame({ type: 'error', message: streamFailure(e, event).message }),
          keepAliveMs,
          ...clientGone(event),
        });
      case 'replay':
        // A recorded stream with event ids (so `Last-Event-ID` resumes it), ending `data: [DONE]`:
        // framed as the live completion is, its recorded failure too.
        return eventStream(await route.handler(platform, input), {
          frame: (e) => completionFrame(e.data, e.id),
          failure: (e) => completionFailure(e, event),
          end: COMPLETION_END,
          keepAliveMs,
          ...clientGone(event),
        });
      case 'binary':
        return binaryResponse(await route.handler(platform, input), route.media, input.headers);
      case 'web':
        return route.handler(platform, input);
      default:
        // `json`, and `raw`, whose failures alone differ (see `failure`).
        return json(route.status ?? 200, await route.handler(platform, input));
    }
  }

  /** A failure in the route's shape: `error` instead of `message` on `raw` routes, OpenAI's `error` object too on `openai` ones. */
  function failure(route: ApiRoute, error: unknown, event: H3Event): Response {
    const { status, body, bug } = toErrorResponse(error);
    if (bug) log?.error({ reqId: event.context.requestId, err: error }, 'unhandled error');
    const headers: Record<string, string> = status === 401 ? { 'www-authenticate': 'Bearer' } : failureHeaders(error);
    const extra = route.failure ?? {};
    if (route.kind === 'raw') {
      const { message, ...rest } = body;
      return json(status, { ...extra, ...rest, error: message }, headers);
    }
    if (route.kind === 'openai') return json(status, { ...extra, ...body, error: openaiError(body.code, body.message, body.details) }, headers);
    if (route.kind === 'responses') return json(status, { ...extra, ...body, error: responsesError(body.code, body.message, body.details) }, headers);
    return json(status, { ...extra, ...body }, headers);
  }

  /**
   * Whether a request may come from its `Origin`: none (not a browser's), or one of the CORS
   * origins. Not the server's own either: a page reached by DNS rebinding has that origin too.
   */
  const allowedOrigin = (event: H3Event): boolean => {
    const origin = event.req.headers.get('origin');
    return origin === null || options.corsOrigins?.includes('*') === true || options.corsOrigins?.includes(origin) === true;
  };

  return async function handle(route: ApiRoute, event: H3Event): Promise<Response> {
    try {
      if (route.checkOrigin && !allowedOrigin(event)) throw new PlatformError('forbidden', 'Forbidden: requests from this Origin are not accepted');
      const caller = await authenticate(platform, event);
      if (!caller) throw new PlatformError('unauthorized', 'Unauthorized');
      const { input, raw } = await readInput(route, event, caller);
      const audit = auditOf(route);
      return await (audit ? answerAudited(route, audit, input, raw, event) : answer(route, input, event));
    } catch (error) {
      return failure(route, error, event);
    }
  };
}
