import { z } from 'zod';
import { isPlatformError, PlatformError } from '../errors.js';
import { boundedFetch } from '../net/bounded-body.js';
import { displayUrl } from '../net/display.js';
import { isUnresolvedHost, unreachableAs } from '../net/unresolved-host.js';
import { type ByteLimit, DEFAULT_UPSTREAM_LIMITS } from '../net/upstream-limits.js';
import type { LocalModel } from '../schemas/local-models.js';
import type { LocalModelRuntime } from './runtime.js';

/** The `fetch` the runtime calls: give the guarded fetch so caller-supplied base URLs obey the outbound policy. */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface OllamaRuntimeOptions {
  readonly fetch: FetchLike;
  /** How long one call to the runtime may take, answer included. Default 10 000 ms. */
  readonly timeoutMs?: number;
  /**
   * Most bytes of one answer of the runtime (its model list), enforced while reading: past it
   * the runtime is cut off and the call fails with `upstream_error` naming `setting`. Default
   * 1 MiB (`DEFAULT_UPSTREAM_LIMITS.runtimeAnswerBytes`).
   */
  readonly answerLimit?: ByteLimit;
}

/** `GET /api/tags` as Ollama documents it (only the members the service uses are required). */
const TagsResponse = z.object({
  models: z
    .array(
      z.object({
        name: z.string(),
        model: z.string().optional(),
        modified_at: z.string(),
        size: z.number(),
        digest: z.string(),
      }),
    )
    .nullish(),
});

/** `sha256:<hex>` for Ollama's bare hex digest; a digest that already names its algorithm is kept. */
export function normaliseDigest(digest: string): string {
  const trimmed = digest.trim();
  if (/^[0-9a-f]{64}$/i.test(trimmed)) return `sha256:${trimmed.toLowerCase()}`;
  const prefixed = /^([a-z0-9]+)[:-]([0-9a-f]+)$/i.exec(trimmed);
  if (prefixed) return `${prefixed[1]?.toLowerCase()}:${prefixed[2]?.toLowerCase()}`;
  return trimmed;
}

/** Ollama's times (nanosecond fractions, local offsets) as ISO 8601 UTC; kept as given when unreadable. */
function isoTime(value: string): string {
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : new Date(time).toISOString();
}

/** Closes an answer's body unread; resolves to undefined (no cause to keep). */
async function discard(response: Response): Promise<undefined> {
  await response.body?.cancel().catch(() => undefined);
  return undefined;
}

function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/**
 * An Ollama runtime over its HTTP API: `GET /api/tags` lists, `DELETE /api/delete` deletes
 * (body `{ model, name }`: `model` for current Ollama, `name` for older versions; 404 when the
 * model is not installed). Errors: see `LocalModelRuntime`.
 */
export function ollamaRuntime(options: OllamaRuntimeOptions): LocalModelRuntime {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const limit = options.answerLimit ?? { bytes: DEFAULT_UPSTREAM_LIMITS.runtimeAnswerBytes, setting: 'the answerLimit option of the runtime' };

  async function call(baseUrl: string, path: string, init: RequestInit): Promise<Response> {
    const fetch = boundedFetch(options.fetch, { maxBytes: limit.bytes, subject: `Local model runtime at ${displayUrl(baseUrl)}`, setting: limit.setting });
    try {
      return await fetch(endpoint(baseUrl, path), { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw failure(baseUrl, error);
    }
  }

  function failure(baseUrl: string, error: unknown): PlatformError {
    if (isUnresolvedHost(error)) return unreachableAs(`Local model runtime at ${displayUrl(baseUrl)} cannot be reached`, error);
    if (isPlatformError(error)) return error; // refused by the outbound policy, or an invalid URL
    if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
      return new PlatformError('timeout', `Local model runtime at ${displayUrl(baseUrl)} did not answer within ${timeoutMs} ms`, {
        details: { baseUrl: displayUrl(baseUrl) },
        retryable: true,
        cause: error,
      });
    }
    return new PlatformError('unavailable', `Local model runtime is not running at ${displayUrl(baseUrl)}`, {
      details: { baseUrl: displayUrl(baseUrl) },
      retryable: true,
      cause: error,
    });
  }

  function upstream(baseUrl: string, what: string, cause?: unknown): PlatformError {
    return new PlatformError('upstream_error', `Local model runtime at ${displayUrl(baseUrl)}: ${what}`, {
      details: { baseUrl: displayUrl(baseUrl) },
      retryable: true,
      ...(cause === undefined ? {} : { cause }),
    });
  }

  return {
    async list(baseUrl: string): Promise<LocalModel[]> {
      const response = await call(baseUrl, '/api/tags', { method: 'GET', headers: { accept: 'application/json' } });
      // The status, never the body: an address a caller chose may answer anything (another service's data).
      if (!response.ok) throw upstream(baseUrl, `GET /api/tags answered ${response.status}`, await discard(response));
      let json: unknown;
      try {
        json = await response.json();
      } catch (error) {
        if (isPlatformError(error)) throw error; // past the answer limit
        if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) throw failure(baseUrl, error);
        throw upstream(baseUrl, 'GET /api/tags did not answer JSON', error);
      }
      const parsed = TagsResponse.safeParse(json);
      if (!parsed.success) throw upstream(baseUrl, 'GET /api/tags answered an unexpected shape', parsed.error);
      return (parsed.data.models ?? []).map((m) => ({
        name: m.name,
        size: m.size,
        digest: normaliseDigest(m.digest),
        modified_at: isoTime(m.modified_at),
      }));
    },

    async delete(baseUrl: string, name: string): Promise<void> {
      const response = await call(baseUrl, '/api/delete', {
        method: 'DELETE',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ model: name, name }),
      });
      if (response.status === 404) {
        await response.body?.cancel().catch(() => undefined);
        throw new PlatformError('not_found', `Model ${name} not found`, { details: { baseUrl: displayUrl(baseUrl), model: name } });
      }
      if (!response.ok) throw upstream(baseUrl, `DELETE /api/delete answered ${response.status}`, await discard(response));
      await response.body?.cancel().catch(() => undefined);
    },
  };
}
