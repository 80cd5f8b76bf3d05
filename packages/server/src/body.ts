import { PlatformError } from '@agent-platform/core';

/** Default JSON body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

function tooLarge(limit: number): PlatformError {
  return new PlatformError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
}

/**
 * Reads a JSON request body of at most `limit` bytes. Stops reading as soon as the limit is
 * passed (a client cannot make the server buffer more). An empty body reads as `{}`.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) throw tooLarge(limit);
  if (!request.body) return {};
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw PlatformError.invalid(`Malformed JSON body: ${(error as Error).message}`, [
      { path: [], code: 'invalid_json', message: (error as Error).message },
    ]);
  }
}

/**
 * Query parameters as an object: a parameter given once is a string, one given several times
 * is an array (which then fails validation naming the field, instead of silently taking one).
 */
export function queryObject(url: URL): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key);
    out[key] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}
