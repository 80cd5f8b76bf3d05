import { type Chunk, chunkDocument, countTokens } from './chunk/index.js';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from './limits.js';
import { type ParseInput, parseDocument } from './parse/index.js';

/** How a document is chunked. */
export interface ReadOptions {
  readonly chunkSize: number;
  readonly chunkOverlap: number;
}

/** What indexing needs of a document: its chunks, and what goes into its metadata. */
export interface DocumentReading {
  readonly chunks: readonly Chunk[];
  /** Pages (pdf). */
  readonly pageCount?: number;
  /** ISO 639-1 code, when it can be told. */
  readonly language?: string;
}

/**
 * Parses and chunks one document under `limits` (pages, unpacked bytes, nesting, text length,
 * chunks; time and memory bound the process this runs in). `onParsed` is called between the
 * two steps. Throws what `parseDocument` and `chunkDocument` throw.
 */
export async function readDocument(input: ParseInput, options: ReadOptions, limits: DocumentLimits = {}, onParsed?: () => void): Promise<DocumentReading> {
  const all = { ...DEFAULT_DOCUMENT_LIMITS, ...limits };
  const parsed = await parseDocument(input, all);
  onParsed?.();
  const chunks = chunkDocument(parsed, { ...options, maxChunks: all.maxChunks });
  return {
    chunks,
    ...(parsed.pageCount !== undefined ? { pageCount: parsed.pageCount } : {}),
    ...(parsed.language ? { language: parsed.language } : {}),
  };
}

/** Loads what every document needs (the tokenizer: about 150 ms and 80 MB), so the first document does not wait for it. */
export function warmUp(): void {
  countTokens('warm up');
}

/** What a `DocumentReader` is told besides the document. */
export interface ReadHooks {
  readonly signal?: AbortSignal;
  /** Called when parsing ended, before chunking. */
  readonly onParsed?: () => void;
  /**
   * Whose share of the reader the document counts against (the owner key of its job): a reader
   * serves owners fairly, so one owner's slow documents do not hold back another's.
   */
  readonly owner?: string;
}

/**
 * Reads documents somewhere the service can stop: the default runs each in a child process
 * under the limits (see `DocumentProcesses`).
 */
export interface DocumentReader {
  /**
   * Parses and chunks one document. Rejects with `payload_too_large` (`details.limit` naming
   * the limit) for a document over a limit, `invalid_request` for a file that is not what its
   * type claims, `internal` when the reader crashed on it, and the signal's reason when aborted.
   */
  read(input: ParseInput, options: ReadOptions, hooks?: ReadHooks): Promise<DocumentReading>;
  /** Stops the reader; documents being read or waiting are rejected. */
  close(): Promise<void>;
}
