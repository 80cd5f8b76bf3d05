import { isPlatformError, PlatformError } from '../errors.js';
import { displayUrl } from './display.js';
import type { GuardedFetch } from './guarded-fetch.js';

/** A 400 naming the member at `path`. */
const refuse = (path: string, message: string) => PlatformError.invalid(`${path}: ${message}`, [{ path: path.split('.'), code: 'custom', message }]);

/** The bytes of a `data:` URL (base64 or percent-encoded). */
export function decodeDataUrl(url: string, path: string): Uint8Array {
  const comma = url.indexOf(',');
  if (comma < 0) throw refuse(path, 'a data: URL needs a comma before its data');
  const header = url.slice(5, comma);
  const data = url.slice(comma + 1);
  if (/;base64$/i.test(header)) {
    if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(data)) throw refuse(path, 'the data of a ;base64 data: URL is not base64');
    return Buffer.from(data, 'base64');
  }
  try {
    return Buffer.from(decodeURIComponent(data), 'latin1');
  } catch {
    throw refuse(path, 'the data of the data: URL is not percent-encoded');
  }
}

/** The answer of an image URL, read up to `max` bytes (past them: the 413). */
async function readBody(response: Response, max: number, tooLarge: () => PlatformError): Promise<Uint8Array> {
  if (Number(response.headers.get('content-length')) > max) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}

/**
 * The bytes at an `https:`/`http:` URL, through the guarded fetch, up to `maxBytes` (past them:
 * `tooLarge`); a URL that cannot be read is a 400 naming `path` and the `what` it was to be.
 */
export async function fetchBytes(
  url: string,
  path: string,
  options: { fetch: GuardedFetch; signal?: AbortSignal | undefined },
  limits: { maxBytes: number; fetchTimeoutMs: number; what: string; accept: string },
  tooLarge: () => PlatformError,
): Promise<Uint8Array> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse(path, 'not a URL: give an https: URL or a data: URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw refuse(path, `${parsed.protocol} URLs are not taken: give an https: URL or a data: URL`);
  const shown = displayUrl(url);
  const timeout = AbortSignal.timeout(limits.fetchTimeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const response = await options.fetch(parsed, { signal, headers: { accept: limits.accept } });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw refuse(path, `the ${limits.what} at ${shown} could not be fetched: it answered HTTP ${response.status}`);
    }
    return await readBody(response, limits.maxBytes, tooLarge);
  } catch (error) {
    options.signal?.throwIfAborted();
    // The outbound policy's refusal (a 400 naming the address), our own 400/413: as they are.
    if (isPlatformError(error) && (error.code === 'invalid_request' || error.code === 'payload_too_large')) throw error;
    const why = timeout.aborted
      ? `it did not answer within ${limits.fetchTimeoutMs} ms`
      : isPlatformError(error)
        ? error.message
        : (((error as Error).cause as Error | undefined)?.message ?? String(error));
    throw refuse(path, `the ${limits.what} at ${shown} could not be fetched: ${why}`);
  }
}
