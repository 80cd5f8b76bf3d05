import { randomUUID } from 'node:crypto';
import { type AgentPlatform, DEFAULT_IMAGE_LIMITS, PlatformError } from '@agent-platform/core';
import { getRouterParams, H3, type H3Event, handleCors } from 'h3';
import type { Logger } from 'pino';
import { z } from 'zod';
import { DEFAULT_BODY_LIMIT, DEFAULT_UPLOAD_LIMIT } from './body.js';
import { CONSOLE_ASSET_CACHE, CONSOLE_PAGE_HEADERS, type ConsoleFiles, consoleRouteDocs, DOCS_CSP, pageSecurityHeaders, readConsole } from './console.js';
import { DOCS_HTML, docsAsset } from './docs.js';
import { STATUS_BY_CODE, toErrorResponse } from './errors.js';
import { createRouteHandler, json } from './handle-route.js';
import { buildOpenApi, type PublicRouteDoc } from './openapi.js';
import { apiRoutes, HealthResponse } from './routes/index.js';
import { DEFAULT_SSE_KEEP_ALIVE_MS, DEFAULT_STREAM_HOLD_MS } from './sse.js';

export interface AppOptions {
  /** Request logs (one line per request) and errors. Omit for none. */
  readonly logger?: Logger;
  /** Largest JSON body accepted, in bytes (413 past it). Default 1 MiB. */
  readonly bodyLimit?: number;
  /** Largest body of the routes that take documents and files, in bytes. Default 16 MiB. */
  readonly uploadLimit?: number;
  /** Largest body of the chat completion routes (JSON and its images as data: URLs). Default: the JSON limit plus `DEFAULT_IMAGE_LIMITS.maxRequestBytes` as base64. */
  readonly completionBodyLimit?: number;
  /** Origins allowed to call the API from a browser; `['*']` for any. Default: none (no CORS headers). */
  readonly corsOrigins?: readonly string[];
  /** Interval of the keep-alive comment of every Server-Sent Events response, in ms. Default 15000. */
  readonly sseKeepAliveMs?: number;
  /**
   * How long a streamed chat completion waits for the run's first event (the model's first
   * output, or its failure) before sending its headers, in ms. Default 5000. A failure within it
   * is answered with its HTTP status, as without `stream`; after it, the headers go out and a
   * failure is the stream's last event.
   */
  readonly streamHoldMs?: number;
  /**
   * The folder of a built web console (`@agent-platform/console`'s dist/, see `builtConsoleDir`)
   * to serve at /console/, with `/` redirecting there. Default: none (API only).
   */
  readonly consoleDir?: string;
}

/** The document's info: title, version and license of the service. */
const OPENAPI_INFO = {
  title: 'Agent Platform API',
  version: '0.1.0',
  description: 'Projects (agents) with knowledge, tools and MCP servers, and OpenAI-compatible chat completions. Every route but the Service ones needs an API key as a bearer token.',
  license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
};

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
    errors: ['not_found'],
  },
];

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The HTTP app of a platform: every API route with bearer auth, validation and error mapping,
 * plus /health, /openapi.json and /docs. Serve it with `serve(app)` (h3) or call
 * `app.request(...)` / `app.fetch(...)` in-process.
 */
export function createApp(platform: AgentPlatform, options: AppOptions = {}): H3 {
  const log = options.logger;
  const started = new WeakMap<H3Event, number>();

  const app = new H3({
    onRequest(event) {
      const given = event.req.headers.get('x-request-id');
      const id = given && REQUEST_ID.test(given) ? given : randomUUID();
      event.context.requestId = id;
      started.set(event, performance.now());
    },
    onResponse(response, event) {
      // Set here, not on `event.res.headers` in onRequest: prepared headers make h3 rebuild the
      // response around its body stream, which sends a string body chunked through a reader.
      response.headers.set('x-request-id', event.context.requestId as string);
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
        allowHeaders: ['authorization', 'content-type', 'x-request-id', 'last-event-id', 'mcp-session-id', 'mcp-protocol-version'],
        exposeHeaders: ['x-request-id', 'mcp-session-id'],
        maxAge: '600',
      });
      if (preflight !== false) return preflight;
    });
  }

  const fail = (error: PlatformError) => json(STATUS_BY_CODE[error.code], toErrorResponse(error).body);

  // ---- public routes ------------------------------------------------------------------------
  const consoleFiles = options.consoleDir ? readConsole(options.consoleDir) : undefined;
  if (consoleFiles) serveConsole(app, consoleFiles, fail);
  const documented = consoleFiles ? [...publicRoutes, ...consoleRouteDocs] : publicRoutes;
  let openapi: string | undefined;
  app.get('/health', () => json(200, { status: 'ok' }));
  app.get('/openapi.json', () => {
    openapi ??= JSON.stringify(buildOpenApi(apiRoutes, documented, OPENAPI_INFO));
    return new Response(openapi, { headers: { 'content-type': 'application/json; charset=utf-8' } });
  });
  // /docs is a page of this origin where an API key is typed in, as the console is: the same headers.
  const docsHeaders = pageSecurityHeaders(DOCS_CSP);
  app.get('/docs', () => new Response(DOCS_HTML, { headers: { 'content-type': 'text/html; charset=utf-8', ...docsHeaders } }));
  app.get('/docs/:file', async (event) => {
    const asset = await docsAsset(getRouterParams(event).file ?? '');
    if (!asset) return fail(PlatformError.notFound('No such file'));
    // Cast: with lib.dom in the program (a dependency's types reference it), a
    // Uint8Array<ArrayBufferLike> is not one, though Node accepts it.
    return new Response(asset.body as ConstructorParameters<typeof Response>[0], {
      headers: { 'content-type': asset.type, 'cache-control': 'public, max-age=3600', ...docsHeaders },
    });
  });

  // ---- API routes ---------------------------------------------------------------------------
  const handle = createRouteHandler(platform, {
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    uploadLimit: options.uploadLimit ?? DEFAULT_UPLOAD_LIMIT,
    completionLimit: options.completionBodyLimit ?? (options.bodyLimit ?? DEFAULT_BODY_LIMIT) + Math.ceil(DEFAULT_IMAGE_LIMITS.maxRequestBytes / 3) * 4,
    keepAliveMs: options.sseKeepAliveMs ?? DEFAULT_SSE_KEEP_ALIVE_MS,
    streamHoldMs: options.streamHoldMs ?? DEFAULT_STREAM_HOLD_MS,
    logger: log,
    corsOrigins: options.corsOrigins,
  });
  for (const route of apiRoutes) {
    const path = route.path.replace(/\{(\w+)\}/g, ':$1');
    app.on(route.method, path, (event) => handle(route, event));
    for (const method of route.refusedMethods ?? []) {
      app.on(method, path, () => json(405, toErrorResponse(new PlatformError('method_not_allowed', `Method not allowed: ${route.method} only`)).body, { allow: route.method }));
    }
  }

  // Anything else: 404 in the API's error shape.
  app.all('/**', (event) => fail(PlatformError.notFound(`No route for ${event.req.method} ${event.url.pathname}`)));

  return app;
}

/** The console: `/` redirects to `/console/`, the page (at `/console` and `/console/`) under its CSP, the hashed assets. */
function serveConsole(app: H3, files: ConsoleFiles, fail: (error: PlatformError) => Response): void {
  const redirect = () => new Response(null, { status: 302, headers: { location: '/console/' } });
  app.get('/', redirect);
  // The router takes /console and /console/ as one path: both answer the page (its asset URLs are absolute).
  app.get('/console', () => new Response(files.page, { headers: CONSOLE_PAGE_HEADERS }));
  app.get('/console/assets/:file', (event) => {
    const asset = files.assets.get(getRouterParams(event).file ?? '');
    if (!asset) return fail(PlatformError.notFound('No such file'));
    return new Response(asset.body as ConstructorParameters<typeof Response>[0], {
      headers: { 'content-type': asset.type, 'cache-control': CONSOLE_ASSET_CACHE, 'x-content-type-options': 'nosniff' },
    });
  });
}
