import { randomUUID } from 'node:crypto';
import { type AgentPlatform, type Caller, PlatformError } from '@agent-platform/core';
import { type H3Event, H3, handleCors, getRouterParams } from 'h3';
import type { Logger } from 'pino';
import { z } from 'zod';
import { DEFAULT_BODY_LIMIT, DEFAULT_UPLOAD_LIMIT, queryObject, readJsonBody, readMultipartBody } from './body.js';
import { DOCS_HTML, docsAsset } from './docs.js';
import { toErrorResponse } from './errors.js';
import { buildOpenApi, type PublicRouteDoc } from './openapi.js';
import { type ApiRoute, apiRoutes, HealthResponse } from './routes.js';

export interface AppOptions {
  /** Request logs (one line per request) and errors. Omit for none. */
  readonly logger?: Logger;
  /** Largest JSON body accepted, in bytes (413 past it). Default 1 MiB. */
  readonly bodyLimit?: number;
  /** Largest body of the routes that take documents and files, in bytes. Default 16 MiB. */
  readonly uploadLimit?: number;
  /** Origins allowed to call the API from a browser; `['*']` for any. Default: none (no CORS headers). */
  readonly corsOrigins?: readonly string[];
}

const VERSION = '0.1.0';

/** Routes reachable without a key, as documented in /openapi.json. */
export const publicRoutes: readonly PublicRouteDoc[] = [
  { method: 'GET', path: '/health', summary: 'Liveness check', response: HealthResponse },
  { method: 'GET', path: '/openapi.json', summary: 'This OpenAPI document', response: { contentType: 'application/json' } },
  { method: 'GET', path: '/docs', summary: 'API reference page (swagger-ui, served locally)', response: { contentType: 'text/html' } },
  {
    method: 'GET',
    path: '/docs/{file}',
    summary: 'Static files of the reference page',
    params: z.object({ file: z.string() }),
    response: { contentType: 'application/octet-stream' },
  },
];

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } });

/** OpenAI's error object, so OpenAI clients show the error (chat completion routes). */
function openaiError(code: string, message: string) {
  const type =
    code === 'unauthorized'
      ? 'authentication_error'
      : code === 'not_found'
        ? 'not_found_error'
        : code === 'rate_limited'
          ? 'rate_limit_error'
          : code === 'invalid_request' || code === 'payload_too_large'
            ? 'invalid_request_error'
            : 'api_error';
  return { message, type, code };
}


const REQUEST_ID = /^[\w.:-]{1,128}$/;

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' };

/**
 * Server-Sent Events from an async iterable, each value written as it is produced (no
 * buffering). `frame` formats one value; `end` is written after the last one; a failure of the
 * iterable becomes the `failure` frame and ends the stream; a client that goes away stops the
 * iteration (which aborts whatever feeds it).
 */
function eventStream<T>(
  events: AsyncIterable<T>,
  frame: (value: T) => string,
  failure: (error: unknown) => string,
  end = '',
): Response {
  const encoder = new TextEncoder();
  const iterator = events[Symbol.asyncIterator]();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) {
          if (end) controller.enqueue(encoder.encode(end));
          return controller.close();
        }
        controller.enqueue(encoder.encode(frame(next.value)));
      } catch (error) {
        controller.enqueue(encoder.encode(failure(error)));
        controller.close();
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(stream, { headers: SSE_HEADERS });
}

const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

/** The message of a failure for a client, logging bugs with the request id. */
function failureMessage(error: unknown, event: H3Event, log: Logger | undefined): { code: string; message: string } {
  const { body, bug } = toErrorResponse(error);
  if (bug) log?.error({ reqId: event.context.requestId, err: error }, 'stream failed');
  return body;
}

/** Indexing progress: one `data:` JSON event each; a failure is a last `error` event. */
const sseResponse = (events: AsyncIterable<unknown>, event: H3Event, log: Logger | undefined) =>
  eventStream(events, data, (error) => data({ type: 'error', message: failureMessage(error, event, log).message }));

/** An OpenAI `{ error }` chunk for a failure mid-stream. */
const errorChunk = (error: unknown, event: H3Event, log: Logger | undefined) => {
  const { code, message } = failureMessage(error, event, log);
  return data({ error: openaiError(code, message) });
};

/** OpenAI's streaming format: `data: <chunk>` each, then `data: [DONE]`; a failure is an `{ error }` chunk. */
const openaiStream = (chunks: AsyncIterable<unknown>, event: H3Event, log: Logger | undefined) =>
  eventStream(chunks, data, (error) => errorChunk(error, event, log), 'data: [DONE]\n\n');

/** A recorded stream with event ids (so `Last-Event-ID` resumes it), ending `data: [DONE]`. */
const replayStream = (events: AsyncIterable<{ id: number; data: string }>, event: H3Event, log: Logger | undefined) =>
  eventStream(events, (e) => `id: ${e.id}\ndata: ${e.data}\n\n`, (error) => errorChunk(error, event, log), 'data: [DONE]\n\n');

/** The caller of a request with a valid `Authorization: Bearer <key>`, else undefined. */
async function authenticate(platform: AgentPlatform, event: H3Event): Promise<Caller | undefined> {
  const header = event.req.headers.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ? platform.authenticate(match[1]) : undefined;
}

/**
 * The HTTP app of a platform: every API route with bearer auth, validation and error mapping,
 * plus /health, /openapi.json and /docs. Serve it with `serve(app)` (h3) or call
 * `app.request(...)` / `app.fetch(...)` in-process.
 */
export function createApp(platform: AgentPlatform, options: AppOptions = {}): H3 {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const uploadLimit = options.uploadLimit ?? DEFAULT_UPLOAD_LIMIT;
  const log = options.logger;
  const started = new WeakMap<H3Event, number>();

  const app = new H3({
    onRequest(event) {
      const given = event.req.headers.get('x-request-id');
      const id = given && REQUEST_ID.test(given) ? given : randomUUID();
      event.context.requestId = id;
      event.res.headers.set('x-request-id', id);
      started.set(event, performance.now());
    },
    onResponse(response, event) {
      if (!log) return;
      const start = started.get(event);
      log.info(
        {
          reqId: event.context.requestId,
          method: event.req.method,
          path: event.url.pathname,
          status: response.status,
          ms: start === undefined ? undefined : Math.round((performance.now() - start) * 10) / 10,
        },
        'request',
      );
    },
    onError(error, event) {
      // Errors escaping our handlers are h3's own (e.g. a malformed URL): answer in our shape.
      const status = error.status ?? 500;
      if (status >= 500) log?.error({ reqId: event.context.requestId, err: error.cause ?? error }, 'unhandled error');
      return json(status, { success: false, message: status >= 500 ? 'Internal server error' : error.message, code: status >= 500 ? 'internal' : 'invalid_request' });
    },
  });

  if (options.corsOrigins && options.corsOrigins.length > 0) {
    const origins = options.corsOrigins;
    const origin = origins.includes('*') ? '*' : [...origins];
    app.use((event) => {
      const preflight = handleCors(event, {
        origin,
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        allowHeaders: ['authorization', 'content-type', 'x-request-id', 'last-event-id'],
        exposeHeaders: ['x-request-id'],
        maxAge: '600',
      });
      if (preflight !== false) return preflight;
    });
  }

  const fail = (event: H3Event, error: unknown, openaiShape = false) => {
    const { status, body, bug } = toErrorResponse(error);
    if (bug) log?.error({ reqId: event.context.requestId, err: error }, 'unhandled error');
    const headers: Record<string, string> = status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    return json(status, openaiShape ? { ...body, error: openaiError(body.code, body.message) } : body, headers);
  };

  // ---- public routes ------------------------------------------------------------------------
  let openapi: string | undefined;
  app.get('/health', () => json(200, { status: 'ok' }));
  app.get('/openapi.json', () => {
    openapi ??= JSON.stringify(buildOpenApi(apiRoutes, publicRoutes, { title: 'Agent Platform API', version: VERSION }));
    return new Response(openapi, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  });
  app.get('/docs', () => new Response(DOCS_HTML, { headers: { 'content-type': 'text/html; charset=utf-8' } }));
  app.get('/docs/:file', async (event) => {
    const asset = await docsAsset(getRouterParams(event).file ?? '');
    if (!asset) return fail(event, PlatformError.notFound('No such file'));
    // Cast: with lib.dom in the program (a dependency's types reference it), a
    // Uint8Array<ArrayBufferLike> is not one, though Node accepts it.
    return new Response(asset.body as ConstructorParameters<typeof Response>[0], { headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=3600' } });
  });

  // ---- API routes ---------------------------------------------------------------------------
  for (const route of apiRoutes) {
    app.on(route.method, route.path.replace(/\{(\w+)\}/g, ':$1'), (event) => handle(route, event));
  }

  async function handle(route: ApiRoute, event: H3Event): Promise<Response> {
    try {
      const caller = await authenticate(platform, event);
      if (!caller) throw new PlatformError('unauthorized', 'Unauthorized');
      const limit = route.bodyLimit === 'upload' ? uploadLimit : bodyLimit;
      const body = !route.body
        ? undefined
        : route.bodyKind === 'multipart'
          ? await readMultipartBody(event.req, limit)
          : await readJsonBody(event.req, limit);
      const result = await route.handler(platform, {
        caller,
        params: getRouterParams(event, { decode: true }) as Record<string, string>,
        query: route.query ? queryObject(event.url) : {},
        body,
        signal: event.req.signal,
        headers: event.req.headers,
      });
      if (route.errorShape) {
        const { status, body } = result as { status: number; body: unknown };
        return json(status, body);
      }
      if (route.openai) {
        const completion = result as { stream: false; body: unknown } | { stream: true; chunks: AsyncIterable<unknown> };
        return completion.stream ? openaiStream(completion.chunks, event, log) : json(200, completion.body);
      }
      if (route.sse) return sseResponse(result as AsyncIterable<unknown>, event, log);
      if (route.replay) return replayStream(result as AsyncIterable<{ id: number; data: string }>, event, log);
      return json(route.status ?? 200, result);
    } catch (error) {
      if (route.errorShape) {
        const { status, body, bug } = toErrorResponse(error);
        if (bug) log?.error({ reqId: event.context.requestId, err: error }, 'unhandled error');
        const { message, ...rest } = body;
        return json(status, { ...route.errorShape.extra, ...rest, error: message }, status === 401 ? { 'www-authenticate': 'Bearer' } : {});
      }
      return fail(event, error, route.openai === true);
    }
  }

  // Anything else: 404 in the API's error shape.
  app.all('/**', (event) => fail(event, PlatformError.notFound(`No route for ${event.req.method} ${event.url.pathname}`)));

  return app;
}
