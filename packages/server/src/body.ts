import { PlatformError } from '@agent-platform/core';
import { createPacer, jsonExceedsNesting, nestingError } from '@agent-platform/core/internal';
import { ByteArena, ByteCollector } from './byte-collector.js';

/** Default JSON body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Default limit of bodies that carry documents and files: 16 MiB. */
export const DEFAULT_UPLOAD_LIMIT = 16 * 1024 * 1024;

/** The 413 of a body over `limit` bytes. */
export function tooLarge(limit: number): PlatformError {
  return new PlatformError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
}

/** Largest piece of a body handled in one go: a bigger chunk is handed on in views of this size. */
const BODY_SLICE = 256 * 1024;

/**
 * The request's declared `content-length`, or undefined. Over `limit`, the request is refused
 * before anything is read.
 */
export function declaredLength(request: Request, limit: number): number | undefined {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) throw tooLarge(limit);
  return Number.isSafeInteger(declared) && declared > 0 ? declared : undefined;
}

/**
 * The bytes of a request body of at most `limit` bytes, as they arrive. Throws 413 as soon as
 * the limit is passed and stops reading there (the rest is cancelled: a client cannot make the
 * server read or buffer more); stopping early (a consumer that fails) cancels the rest too.
 * A body cut off by the client (its connection closed mid-body) is 400, not a server error.
 * Each piece is handled by the consumer before the next is read; a chunk over 256 KB comes in
 * views of 256 KB, and the event loop gets a turn whenever 20 ms of this work went by without
 * one (`createPacer`): a body that is already buffered (a big in-process body, or chunks
 * queued while the server was busy) is read in microtasks only, which would hold every other
 * request, GET /health among them, until it is all handled.
 */
export async function* bodyChunks(request: Request, limit: number): AsyncGenerator<Uint8Array, void, undefined> {
  declaredLength(request, limit);
  if (!request.body) return;
  const reader = request.body.getReader();
  const pace = createPacer();
  let size = 0;
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read().catch((error: unknown) => {
        // The client closed the connection (or the stream broke) before the body ended: a
        // request that is not whole, not a fault of the server.
        throw PlatformError.invalid(`The request body ended before it was complete: ${(error as Error)?.message ?? String(error)}`);
      });
      if (done) {
        finished = true;
        return;
      }
      size += value.byteLength;
      if (size > limit) throw tooLarge(limit);
      for (let at = 0; at < value.byteLength; at += BODY_SLICE) {
        yield value.byteLength <= BODY_SLICE ? value : value.subarray(at, at + BODY_SLICE);
        await pace();
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}

/**
 * Reads a request body of at most `limit` bytes (see `bodyChunks`). A body of several chunks
 * with a `content-length` is copied into one buffer of that size as it arrives, so it is never
 * joined at the end (see `ByteArena`).
 */
export async function readBody(request: Request, limit: number): Promise<Buffer> {
  const declared = declaredLength(request, limit);
  const bytes = new ByteCollector(declared === undefined ? undefined : new ByteArena(declared));
  for await (const chunk of bodyChunks(request, limit)) bytes.push(chunk);
  return bytes.bytes();
}

/**
 * Reads a JSON body of at most `limit` bytes. An empty body reads as `{}`. A body nested deeper
 * than `MAX_NESTING_DEPTH` is refused (`body: nested deeper than 64 levels`) by a linear scan of
 * the text before it is parsed, so nothing recursive (not even `JSON.parse`) sees it. Between
 * the steps of a big body (decoding, the scan, parsing: each tens of ms for 4 MB here), the
 * event loop gets a turn once 20 ms went by without one.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const pace = createPacer();
  const bytes = await readBody(request, limit);
  await pace();
  const text = bytes.toString('utf8');
  await pace();
  if (text.trim() === '') return {};
  if (jsonExceedsNesting(text)) throw nestingError();
  await pace();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw PlatformError.invalid(`Malformed JSON body: ${(error as Error).message}`, [{ path: [], code: 'invalid_json', message: (error as Error).message }]);
  }
  await pace();
  return value;
}

/**
 * Query parameters as an object: a parameter given once is a string, one given several times
 * is an array (which then fails validation naming the field, instead of silently taking one).
 * A parameter given once and empty (`?baseUrl=`, as HTML forms send an empty field) is absent,
 * so it takes its default.
 */
export function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    if (values.length === 1 && values[0] === '') continue;
    out[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}
