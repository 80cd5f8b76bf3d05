import type { z } from 'zod';
import type { Caller, PlatformContext } from '../context.js';
import { type ErrorCode, isPlatformError, PlatformError } from '../errors.js';
import { answerTooLargeIn } from '../net/bounded-body.js';
import { displayUrl } from '../net/display.js';
import { allowingUrls, type GuardedFetch } from '../net/guarded-fetch.js';
import { isUnresolvedHost } from '../net/unresolved-host.js';
import type { ByteLimit } from '../net/upstream-limits.js';
import type { DeleteLocalModelRequest, DeleteLocalModelResponse, ListLocalModelsQuery, ListLocalModelsResponse } from '../schemas/local-models.js';
import { ollamaRuntime } from './ollama.js';
import { defaultLocalModelBaseUrl, type LocalModelRuntime } from './runtime.js';

type ListQuery = z.output<typeof ListLocalModelsQuery>;
type DeleteBody = z.output<typeof DeleteLocalModelRequest>;

/*
 * The local model endpoints answer their failures with `error`, not `message`, as the spec says
 * (the server frames them so). A failure is a `PlatformError` whose message is that text and
 * whose code tells it apart (the server answers the code's status):
 *
 * | outcome | code | text |
 * |---|---|---|
 * | listed | | `models` (empty array when none) |
 * | deleted | | message `Model <name> deleted` |
 * | `baseUrl` refused by the outbound URL policy (nothing was sent) | invalid_request | `Refused to connect to <host> (<address>): <reason>; allow it with --allow-host` |
 * | model not installed (delete) | not_found | `Model not found` |
 * | runtime not running: nothing answers at `baseUrl` (list) | unavailable | `Local model runtime is not running at <baseUrl>` |
 * | runtime not running (delete) | unavailable | `Failed to delete model` |
 * | the host name of `baseUrl` does not resolve (list) | unavailable | `Local model runtime at <baseUrl> cannot be reached: host name '<host>' does not resolve` |
 * | the host name of `baseUrl` does not resolve (delete) | unavailable | `Failed to delete model: host name '<host>' does not resolve` |
 * | runtime did not answer in time | timeout | `Failed to list models` / `Failed to delete model` |
 * | runtime answered an error or garbage (or failed with any other code) | upstream_error | `Failed to list models` / `Failed to delete model` (never the runtime's own text) |
 * | runtime's answer past its byte limit | upstream_error | `Failed to list models: Local model runtime at <baseUrl> sent an answer larger than <n> bytes, the limit set by <setting>: ...` |
 * | anything else (a bug) | internal | `Failed to list models` / `Failed to delete model` |
 *
 * Invalid input (`baseUrl` not an http(s) URL, `modelName` missing or empty) is refused by the
 * parse before these run, `invalid_request` naming the field.
 */

export interface LocalModelServiceOptions {
  /** Used when the call gives no `baseUrl`. Default: `defaultLocalModelBaseUrl()` (OLLAMA_HOST, else http://127.0.0.1:11434). */
  readonly defaultBaseUrl?: string;
  /**
   * The runtime client of calls that give no `baseUrl`: the operator's address, reached by the
   * operator's policy (which allows it), while a `baseUrl` a caller gives goes through `runtime`
   * and the callers' policy. Default: `runtime`.
   */
  readonly defaultRuntime?: LocalModelRuntime;
}

/** The codes a runtime's failures have (`LocalModelRuntime`); any other is answered as `upstream_error`. */
const RUNTIME_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['invalid_request', 'not_found', 'upstream_error', 'unavailable', 'timeout']);

/** A `baseUrl` sent empty (`?baseUrl=`) means "the default", like an absent one (applied before the parse). */
export function withoutEmptyBaseUrl(input: unknown): unknown {
  if (typeof input === 'object' && input !== null && (input as { baseUrl?: unknown }).baseUrl === '') {
    const { baseUrl: _empty, ...rest } = input as Record<string, unknown>;
    return rest;
  }
  return input;
}

/** `host name 'x' does not resolve`, without the runtime's address the message starts with. */
function unresolvedReason(error: PlatformError): string {
  return error.message.slice(error.message.indexOf('host name '));
}

/** The failure's code and message; anything not a `PlatformError` is a bug (`internal`). */
function classify(error: unknown): { code: ErrorCode; message: string } {
  if (!isPlatformError(error)) return { code: 'internal', message: 'Internal error' };
  return { code: RUNTIME_CODES.has(error.code) ? error.code : 'upstream_error', message: error.message };
}

/** `GET /api/v1/localmodel/list-models`: the models of the runtime at `baseUrl` (else the default address). */
export async function listLocalModels(runtime: LocalModelRuntime, query: ListQuery, options: LocalModelServiceOptions = {}): Promise<ListLocalModelsResponse> {
  const baseUrl = query.baseUrl ?? options.defaultBaseUrl ?? defaultLocalModelBaseUrl();
  const client = query.baseUrl === undefined ? (options.defaultRuntime ?? runtime) : runtime;
  try {
    const models = await client.list(baseUrl);
    return { success: true, models };
  } catch (error) {
    const { code, message } = classify(error);
    const text =
      code === 'invalid_request' || isUnresolvedHost(error)
        ? message
        : code === 'unavailable'
          ? `Local model runtime is not running at ${displayUrl(baseUrl)}`
          : answerTooLargeIn(error)
            ? `Failed to list models: ${message}`
            : 'Failed to list models';
    throw new PlatformError(code, text, { cause: error });
  }
}

/** `DELETE /api/v1/localmodel/delete-model`: deletes one model of the runtime at `baseUrl` (else the default address). */
export async function deleteLocalModel(runtime: LocalModelRuntime, body: DeleteBody, options: LocalModelServiceOptions = {}): Promise<DeleteLocalModelResponse> {
  const baseUrl = body.baseUrl ?? options.defaultBaseUrl ?? defaultLocalModelBaseUrl();
  const { modelName } = body;
  const client = body.baseUrl === undefined ? (options.defaultRuntime ?? runtime) : runtime;
  try {
    await client.delete(baseUrl, modelName);
    return { success: true, message: `Model ${modelName} deleted` };
  } catch (error) {
    const { code, message } = classify(error);
    const text =
      code === 'invalid_request'
        ? message
        : code === 'not_found'
          ? 'Model not found'
          : isUnresolvedHost(error)
            ? `Failed to delete model: ${unresolvedReason(error)}`
            : answerTooLargeIn(error)
              ? `Failed to delete model: ${message}`
              : 'Failed to delete model';
    throw new PlatformError(code, text, { cause: error });
  }
}

/** What the local models service is built with besides the context (whose `fetch` the default runtime uses). */
export interface LocalModelsDeps {
  /** The runtime client, for every address. Default: Ollama over `ctx.fetch` (`operatorFetch` for the default address). */
  readonly runtime?: LocalModelRuntime;
  /** Most bytes of one answer of the default runtime client, and the setting that raises it. */
  readonly answerLimit?: ByteLimit;
  /** The address of calls that give none. Default: `defaultLocalModelBaseUrl()`. */
  readonly defaultBaseUrl?: string;
  /** The fetch of the default address. Default: `ctx.fetch` with that address (its host and port) allowed as well. */
  readonly operatorFetch?: GuardedFetch;
}

/** The local model runtime (Ollama) at an address a call gives, or the operator's. */
export class LocalModelsService {
  readonly #runtime: LocalModelRuntime;
  readonly #options: LocalModelServiceOptions;

  constructor(ctx: PlatformContext, deps: LocalModelsDeps) {
    const answerLimit = deps.answerLimit ? { answerLimit: deps.answerLimit } : {};
    this.#runtime = deps.runtime ?? ollamaRuntime({ fetch: ctx.fetch, ...answerLimit });
    const defaultRuntime = deps.runtime ?? ollamaRuntime({ fetch: deps.operatorFetch ?? allowingUrls(ctx.fetch, [deps.defaultBaseUrl ?? defaultLocalModelBaseUrl()]), ...answerLimit });
    this.#options = { defaultRuntime, ...(deps.defaultBaseUrl ? { defaultBaseUrl: deps.defaultBaseUrl } : {}) };
  }

  /** `GET /api/v1/localmodel/list-models`. */
  list(_caller: Caller, query: ListQuery): Promise<ListLocalModelsResponse> {
    return listLocalModels(this.#runtime, query, this.#options);
  }

  /** `DELETE /api/v1/localmodel/delete-model`. */
  delete(_caller: Caller, body: DeleteBody): Promise<DeleteLocalModelResponse> {
    return deleteLocalModel(this.#runtime, body, this.#options);
  }
}
