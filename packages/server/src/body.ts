import { jsonExceedsNesting, nestingError, PlatformError } from '@agent-platform/core';

/** Default JSON body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Default limit of bodies that carry documents and files: 16 MiB. */
export const DEFAULT_UPLOAD_LIMIT = 16 * 1024 * 1024;

function tooLarge(limit: number): PlatformError {
  return new PlatformError('payload_too_large', `Request body is larger than the limit of ${limit} bytes`);
}

/**
 * Reads a request body of at most `limit` bytes. Stops reading as soon as the limit is passed
 * (a client cannot make the server buffer more).
 */
export async function readBody(request: Request, limit: number): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) throw tooLarge(limit);
  if (!request.body) return Buffer.alloc(0);
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
  return Buffer.concat(chunks);
}

/**
 * Reads a JSON body of at most `limit` bytes. An empty body reads as `{}`. A body nested deeper
 * than `MAX_NESTING_DEPTH` is refused (`body: nested deeper than 64 levels`) by a linear scan of
 * the text before it is parsed, so nothing recursive (not even `JSON.parse`) sees it.
 */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  const text = (await readBody(request, limit)).toString('utf8');
  if (text.trim() === '') return {};
  if (jsonExceedsNesting(text)) throw nestingError();
  try {
    return JSON.parse(text);
  } catch (error) {
    throw PlatformError.invalid(`Malformed JSON body: ${(error as Error).message}`, [
      { path: [], code: 'invalid_json', message: (error as Error).message },
    ]);
  }
}

/**
 * Reads a `multipart/form-data` body of at most `limit` bytes into its text fields (strings)
 * and `files` (every file part, whatever its field name). A form cannot nest: its fields are
 * strings and file bytes, never parsed as JSON here, so the result is at most three levels deep.
 */
export async function readMultipartBody(request: Request, limit: number): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw PlatformError.invalid('body: expected a multipart/form-data body (fields projectId and files)');
  }
  const bytes = await readBody(request, limit);
  let form: FormData;
  try {
    form = await new Response(bytes as unknown as ConstructorParameters<typeof Response>[0], { headers: { 'content-type': type } }).formData();
  } catch (error) {
    throw PlatformError.invalid(`Malformed multipart body: ${(error as Error).message}`);
  }
  const out: Record<string, unknown> = Object.create(null);
  const files: { name: string; type: string; bytes: Uint8Array }[] = [];
  for (const [name, value] of form) {
    if (typeof value === 'string') out[name] = value;
    else files.push({ name: value.name, type: value.type, bytes: new Uint8Array(await value.arrayBuffer()) });
  }
  out.files = files;
  return out;
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
