import { PlatformError } from '../../errors.js';
import { declaredFileType, fileTypeOf, SUPPORTED_FILE_TYPES, type SupportedFileType } from '../file-types.js';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from '../limits.js';
import { decodeText } from './decode.js';
import { checkTextLength, LABELS, type ParsedDocument, type ParseInput } from './document.js';
import { parseDocx } from './docx.js';
import { parseHtml } from './html.js';
import { detectLanguage, normalizeLanguageTag } from './language.js';
import { parseMarkdown } from './markdown.js';
import { parsePdf } from './pdf.js';

export { clipHeading, type DocumentPage, type DocumentSection, MAX_HEADING_CHARS, type ParsedDocument, type ParseInput } from './document.js';
export { parseHtml } from './html.js';
export { detectLanguage } from './language.js';

/**
 * The type of a file: by a supported extension of its name, else by `fileType`. (A text
 * document's `fileType` and name were checked to agree when it was posted:
 * `checkTextDocumentType`.)
 */
function detectType(fileName: string, fileType: string | undefined): SupportedFileType | undefined {
  return fileTypeOf(fileName) ?? (fileType ? declaredFileType(fileType) : undefined);
}

/** The limits `parseDocument` applies (see `DocumentLimits`; the others bound its worker). */
export type ParseLimits = Pick<DocumentLimits, 'maxPages' | 'maxUnzippedBytes' | 'maxNesting' | 'maxTextLength'>;

/**
 * Reads a document (txt, md, html, pdf, docx) into its text, headings (`sections`, as offsets
 * into the text), pages (pdf), a language guess and the file's own metadata.
 * Throws `invalid_request` for an unsupported type or bytes that are not what the type claims,
 * and `payload_too_large` (with `details.limit`) for a document over one of `limits` (each
 * defaults to `DEFAULT_DOCUMENT_LIMITS`): checked before the work it bounds where the file
 * tells (PDF pages, DOCX sizes), else as the work goes.
 */
export async function parseDocument(input: ParseInput, limits: ParseLimits = {}): Promise<ParsedDocument> {
  const { maxPages, maxUnzippedBytes, maxNesting, maxTextLength } = { ...DEFAULT_DOCUMENT_LIMITS, ...limits };
  const type = detectType(input.fileName, input.fileType);
  if (!type) {
    const claimed = input.fileType ? ` (${input.fileType})` : '';
    throw new PlatformError('invalid_request', `Unsupported file type of ${input.fileName}${claimed}: supported are ${SUPPORTED_FILE_TYPES.join(', ')}`, {
      details: { fileName: input.fileName, supported: [...SUPPORTED_FILE_TYPES] },
    });
  }
  let parsed: Omit<ParsedDocument, 'language'> & { declaredLanguage?: string | undefined };
  switch (type) {
    case 'txt':
      parsed = { type, text: decodeText(input, type), sections: [], metadata: {} };
      break;
    case 'md':
      parsed = parseMarkdown(decodeText(input, type));
      break;
    case 'html': {
      const html = parseHtml(decodeText(input, type), maxNesting);
      parsed = { type, text: html.text, sections: html.sections, metadata: html.title ? { title: html.title } : {}, declaredLanguage: html.lang };
      break;
    }
    case 'pdf':
      parsed = await parsePdf(input, maxPages, maxTextLength);
      break;
    case 'docx':
      parsed = await parseDocx(input, maxUnzippedBytes, maxNesting);
      break;
  }
  checkTextLength(LABELS[type], parsed.text.length, maxTextLength);
  const { declaredLanguage, ...doc } = parsed;
  const language = detectLanguage(doc.text) ?? normalizeLanguageTag(declaredLanguage);
  return language ? { ...doc, language } : doc;
}
