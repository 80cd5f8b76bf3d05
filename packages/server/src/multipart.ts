import { PlatformError } from '@agent-platform/core';
import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import { bodyChunks, declaredLength } from './body.js';
import { ByteArena, ByteCollector } from './byte-collector.js';

/** Most parts (text fields and files together) of a multipart body. */
export const MAX_MULTIPART_PARTS = 100;
/** Largest text field of a multipart body, in bytes (as large as a JSON body by default). */
export const MAX_MULTIPART_FIELD_BYTES = 1024 * 1024;

/** A file part of a multipart body. */
export interface MultipartFile {
  /** The part's `filename`, as sent (a path in it is kept). */
  readonly name: string;
  /** The part's `Content-Type` without parameters, lowercased; `text/plain` when it has none. */
  readonly type: string;
  readonly bytes: Uint8Array;
}

const malformed = (reason: string) => PlatformError.invalid(`Malformed multipart body: ${reason}`);

/**
 * Reads a `multipart/form-data` body of at most `limit` bytes into its text fields (strings,
 * the last of a name wins) and `files` (every part with a `filename`, whatever its field name,
 * in order), on an object without a prototype (a field named `__proto__` or `constructor` is a
 * field like any other). A form cannot nest: its fields are strings and file bytes, never
 * parsed as JSON here, so the result is at most three levels deep.
 *
 * The body is parsed as it arrives (`@fastify/busboy`, fed each piece as `bodyChunks` reads
 * it), never held whole and parsed in one go: a file's bytes go into one buffer of the body's
 * declared size as they come (see `ByteArena`), so no step copies a whole upload at once, and
 * the event loop keeps turning (see `bodyChunks`). Refused: a body over `limit` (413, reading
 * stops there), more than `MAX_MULTIPART_PARTS` parts or a text field over
 * `MAX_MULTIPART_FIELD_BYTES` (413, naming the limit; reading stops there too), and a body that
 * is not well-formed multipart (400 naming the problem).
 */
export async function readMultipartBody(request: Request, limit: number): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw PlatformError.invalid('body: expected a multipart/form-data body (fields projectId and files)');
  }
  const declared = declaredLength(request, limit);
  // Every file together is smaller than the body: one buffer of its size holds them all.
  const arena = declared === undefined ? undefined : new ByteArena(declared);
  const out: Record<string, unknown> = Object.create(null);
  const files: { name: string; type: string; bytes: ByteCollector }[] = [];
  let failure: PlatformError | undefined;
  const fail = (error: PlatformError) => {
    failure ??= error;
  };
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: { 'content-type': type },
      // The name as the client sent it (as a browser's FormData gives it), not cut to its last segment.
      preservePath: true,
      // A file is a part with a filename, as the HTML standard reads a form (not any octet-stream part).
      isPartAFile: (_field, _type, fileName) => fileName !== undefined,
      limits: { parts: MAX_MULTIPART_PARTS, fieldSize: MAX_MULTIPART_FIELD_BYTES },
    });
  } catch (error) {
    throw malformed((error as Error).message);
  }
  parser.on('field', (name: string | undefined, value: string, _nameTruncated: boolean, valueTruncated: boolean) => {
    if (name === undefined) return fail(malformed('a field without a name'));
    if (valueTruncated) {
      return fail(new PlatformError('payload_too_large', `Multipart field "${name.slice(0, 100)}" is larger than the limit of ${MAX_MULTIPART_FIELD_BYTES} bytes`));
    }
    out[name] = value;
  });
  parser.on('file', (name: string | undefined, stream: BusboyFileStream, fileName: string, _encoding: string, mimeType: string) => {
    if (name === undefined) fail(malformed('a file without a field name'));
    const bytes = new ByteCollector(arena);
    files.push({ name: fileName, type: mimeType, bytes });
    stream.on('data', (chunk: Buffer) => bytes.push(chunk));
    stream.on('error', (error: Error) => fail(malformed(error.message)));
  });
  parser.on('partsLimit', () => fail(new PlatformError('payload_too_large', `Multipart body has more than ${MAX_MULTIPART_PARTS} parts (fields and files together), over the limit`)));
  const finished = new Promise<void>((resolve) => {
    parser.on('finish', resolve);
    parser.on('error', (error: Error) => {
      fail(malformed(error.message));
      resolve();
    });
  });
  // Resolves once the parser has handled the piece (its fields, files and errors emitted), or failed.
  const written = (chunk: Uint8Array) => Promise.race([new Promise<void>((resolve) => parser.write(chunk, () => resolve())), finished]);
  try {
    for await (const chunk of bodyChunks(request, limit)) {
      await written(chunk);
      if (failure) throw failure;
    }
  } catch (error) {
    parser.destroy();
    throw error;
  }
  parser.end();
  await finished;
  if (failure) throw failure;
  out.files = files.map((file) => ({ name: file.name, type: file.type, bytes: file.bytes.bytes() }));
  return out;
}
