import type { AgentPlatform, Caller, ErrorCode, StreamEvent, StreamRecord } from '@agent-platform/core';
import type { ChatCompletionChunk, ResponseStreamEvent } from '@agent-platform/core/schemas';
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * How a route answers, and so what its handler returns:
 *
 * | kind | handler returns | sent as |
 * |---|---|---|
 * | `json` | the body | JSON with the route's `status` |
 * | `sse` | an `AsyncIterable` of events | Server-Sent Events, one `data:` JSON each |
 * | `openai` | `{ stream: false, body }` or `{ stream: true, chunks }` | JSON, or OpenAI's SSE ending `data: [DONE]`; errors also carry OpenAI's `error` object |
 * | `replay` | an `AsyncIterable` of `{ id, data }`, `data` a recorded chunk or failure | SSE with event ids (resumable with `Last-Event-ID`), framed as `openai` streams are, ending `data: [DONE]` |
 * | `raw` | the body | JSON, 200; errors put their message in `error`, not `message` (the Ollama-style local model routes) |
 * | `binary` | a `BinaryBody` (bytes, type, validator) | the bytes as they are, with the route's `media` headers; `If-None-Match` answered 304 |
 * | `web` | a web `Response` | as it is: a protocol that answers for itself (the MCP server's streamable HTTP transport); failures before it (401, 404, a bad body) in the API's error shape |
 * | `responses` | `{ stream: false, body }` or `{ stream: true, events }` | JSON, or the Open Responses SSE (`event:` the type, `data:` the event, ending `data: [DONE]`); errors carry the specification's `error` object (with `param`) |
 */
export type RouteKind = 'json' | 'sse' | 'openai' | 'replay' | 'raw' | 'binary' | 'web' | 'responses';

/** What a `binary` route's handler returns: stored bytes, served as they are. */
export interface BinaryBody {
  readonly bytes: Uint8Array;
  /** Their type, one of the route's `media.types`. */
  readonly contentType: string;
  /** A strong validator of exactly these bytes (e.g. their digest), without quotes: the `ETag`. */
  readonly etag: string;
}

/** How a `binary` route serves its bodies. */
export interface BinaryMedia {
  /** Every content type a body may have: the document lists each. */
  readonly types: readonly string[];
  /** How long the caller's own cache may keep a body, in seconds (`cache-control: private, max-age`). */
  readonly maxAgeSeconds: number;
  /** The file name a saved body gets, from the body (`content-disposition: inline; filename=...`). */
  readonly fileName: (body: BinaryBody) => string;
}

/** What a handler of each kind returns. */
export interface RouteResults {
  json: unknown;
  sse: AsyncIterable<unknown>;
  openai: { stream: false; body: unknown } | { stream: true; chunks: AsyncIterable<ChatCompletionChunk> };
  replay: AsyncIterable<StreamEvent<StreamRecord>>;
  raw: unknown;
  binary: BinaryBody;
  web: Response;
  /** `replay`: events of a response as it ran (not held: a failure is an event, as it was sent). */
  responses: { stream: false; body: unknown } | { stream: true; events: AsyncIterable<ResponseStreamEvent>; replay?: boolean };
}

/** The parsed value of an optional schema; `{}` when the route declares none. */
export type Parsed<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

/** What a handler gets: the authenticated caller and the request parts, parsed by the route's schemas. */
export interface RouteInput<P = unknown, Q = unknown, B = unknown> {
  readonly caller: Caller;
  readonly params: P;
  readonly query: Q;
  readonly body: B;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  readonly headers: Headers;
  /** The request itself, for `web` routes that hand it to a protocol's own handler. */
  readonly request: Request;
}

/**
 * The audit event a route that changes something records (docs/AUDIT.md): the server writes it
 * before the handler runs and settles it after (`audit.ts`), so no handler records by hand.
 */
export interface RouteAudit<I = RouteInput> {
  /** The kind of resource changed: `project`, `credential`, `key`, ... */
  readonly resource: string;
  /** `create`, `update`, `delete` or a named action; or the function of the parsed request that names it (a decision: approve or deny). */
  readonly action: string | ((input: I) => string);
  /**
   * Where the resource's id is: a path id (`params.id`), a member of the request's body
   * (`body.projectId`), or of the answer's body for a create (`result.project.id`). None: the
   * change names no one resource (an upload of several files).
   */
  readonly id?: `params.${string}` | `body.${string}` | `result.${string}`;
  /**
   * The names of the fields the change sets, never their values: the keys the request gave of
   * this object of its body (`body.data`), or these names. Default: the keys of the body.
   */
  readonly fields?: `body.${string}` | readonly string[];
  /** `server`: a change of the server itself, in no workspace (the local model runtime, shared by all). */
  readonly scope?: 'server';
}

/** A route that changes nothing kept (a search, a probe), or whose use is not a change (a completion): why it records no audit event. */
export interface NoAudit {
  readonly none: string;
}

/** What a route answers on success, as the document shows it: a schema, or for `binary` routes (which must say their kind) the bytes' media. */
type RouteAnswer<K extends RouteKind> = [K] extends ['binary']
  ? {
      readonly kind: 'binary';
      /** The types the bodies may have and how they are served. */
      readonly media: BinaryMedia;
      readonly response?: undefined;
    }
  : {
      /** The success body (`json`, `openai` without `stream`, `raw`), or the schema of each event's `data` (`sse`, `replay`). */
      readonly response: z.ZodType;
      readonly media?: undefined;
    };

/**
 * One API route. Its `params`, `query` and `body` schemas parse the request before the handler
 * runs (400 `invalid_request` naming the field, 413 past a size limit), type the handler's
 * input, and document the route in /openapi.json.
 */
export type RouteSpec<
  P extends z.ZodObject | undefined = z.ZodObject | undefined,
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  K extends RouteKind = RouteKind,
> = RouteBase<P, Q, B, K> & RouteAnswer<K>;

interface RouteBase<
  P extends z.ZodObject | undefined = z.ZodObject | undefined,
  Q extends z.ZodObject | undefined = z.ZodObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  K extends RouteKind = RouteKind,
> {
  readonly method: HttpMethod;
  /** OpenAPI-style path, e.g. `/api/v1/projects/{id}`. */
  readonly path: string;
  /** Plain text (no markdown): swagger-ui shows it literally. */
  readonly summary: string;
  readonly tag: string;
  readonly params?: P;
  readonly query?: Q;
  readonly body?: B;
  /** `openai` and `responses` routes: the schema of each streamed chunk or event (`stream: true`). */
  readonly events?: z.ZodType;
  /** How the route answers. Default `json`. */
  readonly kind?: K;
  /** Success status, 200 unless said. */
  readonly status?: number;
  /** `multipart`: the body is a form (files); `body` parses its fields and files. Default `json`. */
  readonly bodyKind?: 'json' | 'multipart';
  /** The body as the document shows it, when it differs from what `body` parses (a multipart form's files). */
  readonly bodyDoc?: z.ZodType;
  /**
   * `upload`: the body may be as large as the upload limit (documents, files) instead of the JSON
   * limit; `completion`: as the JSON limit plus the images a completion may carry.
   */
  readonly bodyLimit?: 'json' | 'upload' | 'completion';
  /**
   * Failures the route can answer besides those every route may (400 for bad input, 401, 413
   * with a body, 404 with path ids): each becomes a documented response.
   */
  readonly errors?: readonly ErrorCode[];
  /**
   * Members every failure body of this route carries at its top level, where the spec shows
   * them (its empty list on a failed list call, `document: null`); every other extra fact of an
   * error goes under `details`.
   */
  readonly failure?: Readonly<Record<string, unknown>>;
  /**
   * `true`: a request with an `Origin` that is not one of the CORS origins is refused with 403
   * before anything else, so no web page can call the route (one reached by DNS rebinding
   * included) unless the operator allows its origin. Default false.
   */
  readonly checkOrigin?: boolean;
  /**
   * Other methods on this path that a protocol names and the route refuses: each answers 405
   * with `Allow: <method>` (MCP's streamable HTTP names GET and DELETE; a stateless server
   * refuses both). They are no operations of the document; the route's summary tells.
   */
  readonly refusedMethods?: readonly HttpMethod[];
  /** Answers of a `web` route's protocol besides success and the API's errors, documented as they are: status and what it means. */
  readonly protocolAnswers?: Readonly<Record<number, string>>;
  /**
   * The audit event of a successful call (`RouteAudit`), or why there is none (`NoAudit`).
   * Every POST, PUT, PATCH and DELETE route must say one (the compiler and the route suite
   * check); a GET route says none and does no audit work.
   */
  readonly audit?: RouteAudit<RouteInput<Parsed<P>, Parsed<Q>, Parsed<B>>> | NoAudit;
  // A method, not a function property: the erased `ApiRoute` accepts every route's handler.
  handler(platform: AgentPlatform, input: RouteInput<Parsed<P>, Parsed<Q>, Parsed<B>>): Promise<RouteResults[K]>;
}

/** A route of one kind with its input types erased: what `createApp` and the document read. */
type ErasedRoute<K extends RouteKind> = Omit<RouteBase<z.ZodObject | undefined, z.ZodObject | undefined, z.ZodType | undefined, K>, 'handler'> &
  RouteAnswer<K> & {
    handler(platform: AgentPlatform, input: RouteInput): Promise<RouteResults[K]>;
  };

/** A route of the table; `kind` tells which (`undefined` is `json`). */
export type ApiRoute = { [K in RouteKind]: ErasedRoute<K> }[RouteKind];

/**
 * Declares a route, inferring the handler's input types from its schemas.
 *
 * @example
 * route({ method: 'GET', path: '/api/v1/projects/{id}', summary: 'Get a project', tag: 'Projects',
 *   params: IdParam, response: ProjectResponse, handler: (p, i) => p.getProject(i.caller, i.params.id) })
 */
export function route<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  K extends RouteKind = 'json',
  M extends HttpMethod = HttpMethod,
>(spec: RouteSpec<P, Q, B, K> & { readonly method: M } & (M extends 'GET' ? { readonly audit?: undefined } : { readonly audit: NonNullable<RouteSpec<P, Q, B, K>['audit']> })): ApiRoute {
  // The one place types are erased: createApp parses the input with these same schemas before
  // calling the handler, so the handler gets what its types say.
  return spec as unknown as ApiRoute;
}
