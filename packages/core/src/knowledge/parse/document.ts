// What a parsed document is, and what the parsers of each type share: their errors and how a heading is kept.
import { isPlatformError, PlatformError } from '../../errors.js';
import type { SupportedFileType } from '../file-types.js';
import { limitExceeded } from '../limits.js';

/** A heading of a document. */
export interface DocumentSection {
  /** Heading text, without markup. */
  readonly heading: string;
  /** 1 for `#`/h1/Heading 1, 2 for `##`/h2, ... */
  readonly level: number;
  /** Offset of the heading in `ParsedDocument.text`. */
  readonly offset: number;
}

/** One page of a paged document (pdf). */
export interface DocumentPage {
  /** From 1. */
  readonly pageNumber: number;
  readonly text: string;
  /** Offset of the page's text in `ParsedDocument.text`: `text.slice(offset, offset + page.text.length) === page.text`. */
  readonly offset: number;
}

export interface ParsedDocument {
  readonly type: SupportedFileType;
  /** The whole readable text (markdown is kept as markdown). Pages are joined by a blank line. */
  readonly text: string;
  /** The pages, in order (pdf only). */
  readonly pages?: readonly DocumentPage[];
  /** Headings, in order of their offsets into `text`. */
  readonly sections: readonly DocumentSection[];
  readonly pageCount?: number;
  /** ISO 639-1 code when it can be told (see `detectLanguage`), else the one the file declares, e.g. `en`. */
  readonly language?: string;
  /** What the file says about itself, e.g. `title`, `author`, `creationDate` (pdf). */
  readonly metadata: Record<string, unknown>;
}

export interface ParseInput {
  readonly bytes: Uint8Array;
  readonly fileName: string;
  /** Extension (`pdf`, `.pdf`), name (`markdown`) or MIME type. The file name's extension wins when it is a supported one. */
  readonly fileType?: string;
}

/** Each type as messages name it. */
export const LABELS: Record<SupportedFileType, string> = { txt: 'text', md: 'Markdown', html: 'HTML', pdf: 'PDF', docx: 'DOCX' };

/** Refuses text over `maxTextLength` (`payload_too_large`). */
export function checkTextLength(label: string, length: number, max: number): void {
  if (length > max) throw limitExceeded('maxTextLength', `the ${label} document has ${length} characters of text`, max);
}

/** Errors that are not about the file's format pass through a parser's catch-all as they are. */
export const isLimit = (error: unknown) => isPlatformError(error) && error.code === 'payload_too_large';

/** The `invalid_request` for bytes that are not what their type claims. */
export function invalidFile(input: ParseInput, type: SupportedFileType, reason: string, cause?: unknown): PlatformError {
  return new PlatformError('invalid_request', `Invalid ${LABELS[type]} file ${input.fileName}: ${reason}`, {
    details: { fileName: input.fileName, fileType: type },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Most characters of a section heading: headings go into every chunk's metadata, so a "heading" of megabytes is cut. */
export const MAX_HEADING_CHARS = 256;

/** A heading as kept: whitespace collapsed, trimmed, at most MAX_HEADING_CHARS characters (cut at a word when one ends near). */
export function clipHeading(raw: string): string {
  const text = raw
    .slice(0, MAX_HEADING_CHARS * 4)
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length <= MAX_HEADING_CHARS) return text;
  let cut = text.slice(0, MAX_HEADING_CHARS);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const space = cut.lastIndexOf(' ');
  return `${space > MAX_HEADING_CHARS * 0.8 ? cut.slice(0, space) : cut}…`;
}
