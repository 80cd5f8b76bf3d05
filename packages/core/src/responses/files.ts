import type { Caller } from '../context.js';
import { isPlatformError, PlatformError } from '../errors.js';
import { decodeDataUrl, fetchBytes } from '../net/fetch-bytes.js';
import type { GuardedFetch } from '../net/guarded-fetch.js';
import type { InputItem } from '../schemas/response-inputs.js';

/** Reads a file into text as a knowledge document is read (the knowledge area). */
export interface FileTextReader {
  readFileText(caller: Caller, file: { bytes: Uint8Array; fileName: string; fileType?: string | undefined }, signal?: AbortSignal): Promise<string>;
}

/** Most bytes of one file given to a model: the server's default upload limit. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Time to fetch a `file_url`, ms. */
const FETCH_TIMEOUT_MS = 10_000;

type FilePart = Extract<Exclude<Extract<InputItem, { role: 'user' }>['content'], string>[number], { type: 'input_file' }>;

const refuse = (path: string, message: string, code: 'invalid_request' | 'payload_too_large' = 'invalid_request') =>
  new PlatformError(code, `${path}: ${message}`, { issues: [{ path: path.split('.'), code: 'custom', message }] });

/** The extension a data: URL's media type names, for a file given without a name. */
const EXTENSIONS: ReadonlyMap<string, string> = new Map([
  ['text/plain', 'txt'],
  ['text/markdown', 'md'],
  ['text/html', 'html'],
  ['application/pdf', 'pdf'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
]);

/** The bytes, name and declared type of a file part (decoded, or fetched through the outbound policy). */
async function fileOf(part: FilePart, path: string, fetch: GuardedFetch, signal: AbortSignal | undefined): Promise<{ bytes: Uint8Array; fileName: string; fileType?: string }> {
  const tooLarge = () => refuse(path, `the file is larger than ${MAX_FILE_BYTES} bytes, the limit of one file`, 'payload_too_large');
  if (part.file_id) throw refuse(`${path}.file_id`, 'there is no files API here: give the file itself as file_data (a data: URL) or file_url');
  if (part.file_url) {
    const bytes = await fetchBytes(part.file_url, `${path}.file_url`, { fetch, signal }, { maxBytes: MAX_FILE_BYTES, fetchTimeoutMs: FETCH_TIMEOUT_MS, what: 'file', accept: '*/*' }, tooLarge);
    const named = decodeURIComponent(new URL(part.file_url).pathname.split('/').pop() ?? '');
    return { bytes, fileName: part.filename ?? (named || 'file') };
  }
  const data = part.file_data ?? '';
  const at = `${path}.file_data`;
  let bytes: Uint8Array;
  let mediaType: string | undefined;
  if (/^data:/i.test(data)) {
    mediaType =
      data
        .slice(5, data.indexOf(',') >= 0 ? data.indexOf(',') : undefined)
        .split(';')[0]
        ?.trim()
        .toLowerCase() || undefined;
    bytes = decodeDataUrl(data, at);
  } else {
    if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(data)) throw refuse(at, 'not base64, nor a data: URL');
    bytes = Buffer.from(data, 'base64');
  }
  if (bytes.byteLength > MAX_FILE_BYTES) throw tooLarge();
  const extension = mediaType ? EXTENSIONS.get(mediaType) : undefined;
  const fileName = part.filename ?? (extension ? `file.${extension}` : undefined);
  if (!fileName) throw refuse(path, 'give a filename (its extension tells the type), or file_data as a data: URL with the media type');
  return { bytes, fileName, ...(mediaType ? { fileType: mediaType } : {}) };
}

/**
 * The input with each `input_file` part of a user message read into an `input_text` part
 * (`[file NAME]` then its text), one file at a time, by the knowledge area's document readers:
 * txt, md, html, pdf, docx, under the limits of uploaded documents. A file that cannot be read
 * (its type, its size, a broken file, a URL that does not answer) is a 4xx naming the part.
 */
export async function readInputFiles(
  reader: FileTextReader | undefined,
  fetch: GuardedFetch,
  caller: Caller,
  input: readonly InputItem[],
  signal: AbortSignal | undefined,
): Promise<readonly InputItem[]> {
  const hasFile = (item: InputItem) =>
    item.type !== undefined && item.type !== 'message' ? false : item.role === 'user' && Array.isArray(item.content) && item.content.some((p) => p.type === 'input_file');
  if (!input.some(hasFile)) return input;
  const out: InputItem[] = [];
  for (const [i, item] of input.entries()) {
    if (!hasFile(item) || (item.type !== undefined && item.type !== 'message') || item.role !== 'user' || typeof item.content === 'string') {
      out.push(item);
      continue;
    }
    const content: (typeof item.content)[number][] = [];
    for (const [j, part] of item.content.entries()) {
      if (part.type !== 'input_file') {
        content.push(part);
        continue;
      }
      const path = `input.${i}.content.${j}`;
      if (!reader) throw refuse(path, 'files are read by the knowledge base, which this service does not have');
      const file = await fileOf(part as FilePart, path, fetch, signal);
      let text: string;
      try {
        text = await reader.readFileText(caller, file, signal);
      } catch (error) {
        if (isPlatformError(error) && (error.code === 'invalid_request' || error.code === 'payload_too_large')) throw refuse(path, error.message, error.code);
        throw error;
      }
      if (!text.trim()) throw refuse(path, `the file ${file.fileName} has no text`);
      content.push({ type: 'input_text', text: `[file ${file.fileName}]\n${text}` });
    }
    out.push({ ...item, content });
  }
  return out;
}
