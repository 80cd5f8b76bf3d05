import { type ErrorCode, isPlatformError, type PlatformError } from '../errors.js';
import { answerTooLargeIn } from '../net/bounded-body.js';
import { displayUrl } from '../net/display.js';
import { isUnresolvedHost } from '../net/unresolved-host.js';
import {
  DeleteLocalModelRequest,
  type DeleteLocalModelResponse,
  ListLocalModelsQuery,
  type ListLocalModelsResponse,
} from '../schemas/local-models.js';
import { parseInput } from '../validation.js';
import { defaultLocalModelBaseUrl, type LocalModelRuntime } from './runtime.js';

/**
 * The answer of a local model endpoint: the HTTP status and the body to send as is. These
 * endpoints answer their failures themselves (with `error`, not `message`, as the spec says),
 * so the operations return instead of throwing:
 *
 * | outcome | status | code | body text |
 * |---|---|---|---|
 * | listed | 200 | | `models` (empty array when none) |
 * | deleted | 200 | | message `Model <name> deleted` |
 * | invalid input (`baseUrl` not an http(s) URL, `modelName` missing or empty) | 400 | invalid_request | error names the field |
 * | `baseUrl` refused by the outbound URL policy (nothing was sent) | 400 | invalid_request | error `Refused to connect to <host> (<address>): <reason>; allow it with --allow-host` |
 * | model not installed (delete) | 404 | not_found | error `Model not found` |
 * | runtime not running: nothing answers at `baseUrl` (list) | 503 | unavailable | error `Local model runtime is not running at <baseUrl>` |
 * | runtime not running (delete) | 503 | unavailable | error `Failed to delete model` |
 * | the host name of `baseUrl` does not resolve (list) | 503 | unavailable | error `Local model runtime at <baseUrl> cannot be reached: host name '<host>' does not resolve` |
 * | the host name of `baseUrl` does not resolve (delete) | 503 | unavailable | error `Failed to delete model: host name '<host>' does not resolve` |
 * | runtime did not answer in time | 504 | timeout | error `Failed to list models` / `Failed to delete model` |
 * | runtime answered an error or garbage | 502 | upstream_error | error `Failed to list models` / `Failed to delete model` (never the runtime's own text) |
 * | runtime's answer past its byte limit | 502 | upstream_error | error `Failed to list models: Local model runtime at <baseUrl> sent an answer larger than <n> bytes, the limit set by <setting>: ...` |
 * | anything else (a bug) | 500 | internal | error `Failed to list models` / `Failed to delete model` |
 *
 * Every list failure also carries `models: []`.
 */
export interface LocalModelResult<B> {
  readonly status: number;
  readonly body: B;
}

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

const STATUS: Partial<Record<ErrorCode, number>> = {
  invalid_request: 400,
  not_found: 404,
  upstream_error: 502,
  unavailable: 503,
  timeout: 504,
};

/** A `baseUrl` sent empty (`?baseUrl=`) means "the default", like an absent one. */
function withoutEmptyBaseUrl(input: unknown): unknown {
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

/** The failure's code and status; anything not a `PlatformError` is a bug (500). */
function classify(error: unknown): { code: ErrorCode; status: number; message: string } {
  if (!isPlatformError(error)) return { code: 'internal', status: 500, message: 'Internal error' };
  return { code: error.code, status: STATUS[error.code] ?? 502, message: error.message };
}

/** `GET /api/v1/localmodel/list-models`. */
export async function listLocalModels(
  runtime: LocalModelRuntime,
  query: unknown,
  options: LocalModelServiceOptions = {},
): Promise<LocalModelResult<ListLocalModelsResponse>> {
  let baseUrl: string;
  try {
    const q = parseInput(ListLocalModelsQuery, withoutEmptyBaseUrl(query ?? {}));
    baseUrl = q.baseUrl ?? options.defaultBaseUrl ?? defaultLocalModelBaseUrl();
    if (q.baseUrl === undefined) runtime = options.defaultRuntime ?? runtime;
  } catch (error) {
    const { code, status, message } = classify(error);
    return { status, body: { success: false, error: message, code, models: [] } };
  }
  try {
    const models = await runtime.list(baseUrl);
    return { status: 200, body: { success: true, models } };
  } catch (error) {
    const { code, status, message } = classify(error);
    const text =
      code === 'invalid_request' || isUnresolvedHost(error)
        ? message
        : code === 'unavailable'
          ? `Local model runtime is not running at ${displayUrl(baseUrl)}`
          : answerTooLargeIn(error)
            ? `Failed to list models: ${message}`
            : 'Failed to list models';
    return { status, body: { success: false, error: text, code, models: [] } };
  }
}

/** `DELETE /api/v1/localmodel/delete-model`. */
export async function deleteLocalModel(
  runtime: LocalModelRuntime,
  input: unknown,
  options: LocalModelServiceOptions = {},
): Promise<LocalModelResult<DeleteLocalModelResponse>> {
  let baseUrl: string;
  let modelName: string;
  try {
    const body = parseInput(DeleteLocalModelRequest, withoutEmptyBaseUrl(input ?? {}));
    baseUrl = body.baseUrl ?? options.defaultBaseUrl ?? defaultLocalModelBaseUrl();
    modelName = body.modelName;
    if (body.baseUrl === undefined) runtime = options.defaultRuntime ?? runtime;
  } catch (error) {
    const { code, status, message } = classify(error);
    return { status, body: { success: false, error: message, code } };
  }
  try {
    await runtime.delete(baseUrl, modelName);
    return { status: 200, body: { success: true, message: `Model ${modelName} deleted` } };
  } catch (error) {
    const { code, status, message } = classify(error);
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
    return { status, body: { success: false, error: text, code } };
  }
}
