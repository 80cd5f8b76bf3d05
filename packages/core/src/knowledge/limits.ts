import { PlatformError } from '../errors.js';

/**
 * Bounds on the work of reading one document (parsing and chunking), so that no upload can
 * hold a worker, its memory or the service for long. Every field has a default
 * ({@link DEFAULT_DOCUMENT_LIMITS}); a document over a limit ends `failed` with a message that
 * names the limit.
 */
export interface DocumentLimits {
  /** Most time one document's parsing and chunking may take, in ms; its worker is then stopped. Default 60,000. */
  readonly timeoutMs?: number;
  /** Heap of each document worker thread, in MB (`resourceLimits.maxOldGenerationSizeMb`); a worker that needs more is stopped. Default 1,024. */
  readonly memoryMb?: number;
  /** Most pages of a PDF, checked before any page is read. Default 2,000. */
  readonly maxPages?: number;
  /**
   * Most bytes unpacked from a DOCX archive, all its XML parts together: checked on the sizes
   * the archive declares before anything is inflated, and again while inflating (declared
   * sizes can lie). Default 64 MiB.
   */
  readonly maxUnzippedBytes?: number;
  /** Deepest nesting of elements in HTML and in a DOCX's XML. Default 512. */
  readonly maxNesting?: number;
  /** Most characters of text read from one document. Default 32 Mi (33,554,432). */
  readonly maxTextLength?: number;
  /** Most chunks made of one document. Default 20,000. */
  readonly maxChunks?: number;
}

export type DocumentLimitName = keyof DocumentLimits;

export const DEFAULT_DOCUMENT_LIMITS: Readonly<Required<DocumentLimits>> = {
  timeoutMs: 60_000,
  memoryMb: 1024,
  maxPages: 2000,
  maxUnzippedBytes: 64 * 1024 * 1024,
  maxNesting: 512,
  maxTextLength: 32 * 1024 * 1024,
  maxChunks: 20_000,
};

/** The limits with every field filled in from the defaults; throws `invalid_request` for one that is not a positive integer. */
export function resolveDocumentLimits(limits: DocumentLimits = {}): Required<DocumentLimits> {
  const resolved = { ...DEFAULT_DOCUMENT_LIMITS };
  for (const name of Object.keys(DEFAULT_DOCUMENT_LIMITS) as DocumentLimitName[]) {
    const value = limits[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) throw PlatformError.invalid(`knowledge.limits.${name} must be a positive integer, got ${value}`);
    resolved[name] = value;
  }
  return resolved;
}

/**
 * The error of a document over a limit: `payload_too_large`, with `details.limit` naming the
 * limit (so the service can add how an operator sets it) and a message such as "the PDF has
 * 100000 pages, over the limit of 2000".
 */
export function limitExceeded(limit: DocumentLimitName, what: string, max: number, unit = ''): PlatformError {
  return new PlatformError('payload_too_large', `${what}, over the limit of ${max}${unit}`, { details: { limit, max } });
}

/** The limit a `limitExceeded` error names, if it is one. */
export function exceededLimit(error: { details?: Record<string, unknown> | undefined }): DocumentLimitName | undefined {
  const limit = error.details?.limit;
  // Own keys only: `in` would also accept `constructor` or `toString` from Object.prototype.
  return typeof limit === 'string' && Object.hasOwn(DEFAULT_DOCUMENT_LIMITS, limit) ? (limit as DocumentLimitName) : undefined;
}
