import { type Issue, issueSentence, issuesOfMessage, partSentence } from '../components/error-text.js';
import type { paths } from './schema.js';

/** HTTP methods of the API, as the generated types name them. */
export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
/** The paths that have an operation for `M`. */
export type PathOf<M extends Method> = { [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never }[keyof paths];

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON request body of an operation. */
export type BodyOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { requestBody?: infer R } ? Json<NonNullable<R>> : never;
/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;
/** The path parameters of an operation. */
export type ParamsOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { path?: infer Q } } ? NonNullable<Q> : never;
/** The JSON body of an operation's success answer (200 or 201). */
export type ResultOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { responses: infer R } ? (R extends { 200: infer S } ? Json<S> : R extends { 201: infer S } ? Json<S> : never) : never;

export interface RequestOptions<P extends keyof paths, M extends Method> {
  readonly params?: ParamsOf<P, M>;
  readonly query?: QueryOf<P, M>;
  readonly body?: BodyOf<P, M>;
  readonly signal?: AbortSignal;
}

/**
 * A failed API call: `message` is the service's own message (shown to the user as is), `code`
 * its machine word (`invalid_request`, `not_found`, ...), `status` the HTTP status.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /**
   * The problems of invalid input, each with the path of its field, as the error body lists them
   * (`details.issues`); undefined when the body has none.
   */
  get issues(): Issue[] | undefined {
    const details = this.body.details;
    const list = details && typeof details === 'object' ? (details as Record<string, unknown>).issues : undefined;
    if (!Array.isArray(list) || list.length === 0) return undefined;
    const issues = list.filter((i): i is Issue => typeof i === 'object' && i !== null && Array.isArray((i as Issue).path) && typeof (i as Issue).message === 'string');
    return issues.length === list.length ? issues : undefined;
  }

  /**
   * What to show: for invalid input (400, 413), each problem as a sentence naming its field
   * ("Name is required"); otherwise the service's message as it worded it.
   */
  get text(): string {
    if (this.status !== 400 && this.status !== 413) return this.message;
    const issues = this.issues;
    return issues ? issues.map(issueSentence).join('; ') : issuesOfMessage(this.message).map(partSentence).join('; ');
  }
}

/** `/api/x/{id}` with `{ id }` filled in (each value URL-encoded). */
export function fillPath(template: string, params: Record<string, unknown> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name] ?? '')));
}

/** A query string (with its `?`) of the defined, non-empty values. */
export function queryString(query: Record<string, unknown> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** The ApiError of a failed answer, read from the service's error body. */
export async function errorOf(res: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {}
  const message = typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : `${res.status} ${res.statusText}`;
  return new ApiError(res.status, message, typeof body.code === 'string' ? body.code : 'http_error', body);
}

/**
 * The API with one key. Types come from the server's OpenAPI document (schema.d.ts), so a call
 * names a documented path and gets its documented body and answer. The key only ever travels
 * in the Authorization header.
 */
export class Api {
  constructor(
    private readonly key: string,
    /** Called on every 401 (a revoked key): the console signs out. */
    private readonly onUnauthorized: () => void = () => {},
  ) {}

  /**
   * Whether this is the key whose public start is `prefix` (the `prefix` a key list shows), so
   * the console can tell which listed key it is signed in with without exposing the key.
   */
  hasPrefix(prefix: string): boolean {
    return prefix.length > 0 && this.key.startsWith(prefix);
  }

  /** Headers of every call: the key, and JSON when there is a body. */
  headers(json: boolean): Record<string, string> {
    return { authorization: `Bearer ${this.key}`, ...(json ? { 'content-type': 'application/json' } : {}) };
  }

  /** The raw answer of a call (for streams); throws ApiError on a non-2xx status. */
  async fetch(method: Method, path: string, init: { body?: unknown; signal?: AbortSignal | undefined; headers?: Record<string, string> } = {}): Promise<Response> {
    const res = await fetch(path, {
      method: method.toUpperCase(),
      headers: { ...this.headers(init.body !== undefined), ...init.headers },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
    });
    if (res.status === 401) this.onUnauthorized();
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  /** A typed JSON call: `api.call('get', '/api/v1/projects/{id}', { params: { id } })`. */
  async call<M extends Method, P extends PathOf<M>>(method: M, path: P, options: RequestOptions<P, M> = {}): Promise<ResultOf<P, M>> {
    const url = fillPath(path, options.params as Record<string, unknown>) + queryString(options.query as Record<string, unknown>);
    const res = await this.fetch(method, url, { body: options.body, signal: options.signal });
    return (await res.json()) as ResultOf<P, M>;
  }

  /**
   * A multipart upload with the browser's upload progress (`fetch` reports none): `onProgress`
   * gets the fraction of bytes sent. Resolves with the JSON answer; rejects with ApiError.
   */
  upload<T>(path: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', path);
      xhr.setRequestHeader('authorization', `Bearer ${this.key}`);
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
      xhr.onerror = () => reject(new ApiError(0, 'The server could not be reached', 'network'));
      xhr.onload = () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(xhr.responseText) as Record<string, unknown>;
        } catch {}
        if (xhr.status === 401) this.onUnauthorized();
        if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
        else reject(new ApiError(xhr.status, typeof body.message === 'string' ? body.message : `${xhr.status}`, typeof body.code === 'string' ? body.code : 'http_error', body));
      };
      xhr.send(form);
    });
  }
}

/** The message to show for anything a call threw. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.text;
  if (error instanceof DOMException && error.name === 'AbortError') return 'Stopped';
  if (error instanceof TypeError) return 'The server could not be reached';
  return error instanceof Error ? error.message : String(error);
}
