import { PlatformError } from '../errors.js';

/** File types the ingestion pipeline reads, by extension, and the MIME types that mean them. */
export const SUPPORTED_FILE_TYPES = ['txt', 'md', 'html', 'pdf', 'docx'] as const;
export type SupportedFileType = (typeof SUPPORTED_FILE_TYPES)[number];

/**
 * Extensions and MIME types, lower-cased, to the type they mean. A Map, not an object: the key
 * is a client's file name or declared type, and an object would also find `constructor` or
 * `__proto__` through its prototype and hand that on as a file type.
 */
const ALIASES: ReadonlyMap<string, SupportedFileType> = new Map([
  ['txt', 'txt'],
  ['text', 'txt'],
  ['text/plain', 'txt'],
  ['md', 'md'],
  ['markdown', 'md'],
  ['text/markdown', 'md'],
  ['html', 'html'],
  ['htm', 'html'],
  ['text/html', 'html'],
  ['pdf', 'pdf'],
  ['application/pdf', 'pdf'],
  ['docx', 'docx'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'docx'],
]);

/** The supported type a declared `fileType` names (extension with or without its dot, name or MIME type), if any. */
export function declaredFileType(fileType: string): SupportedFileType | undefined {
  const declared = fileType.trim().toLowerCase().split(';')[0]?.trim().replace(/^\./, '') ?? '';
  return ALIASES.get(declared) ?? ALIASES.get(extensionOf(declared));
}

/** The lower-cased extension of a file name without the dot, or ''. */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
}

/** The supported type of a file by its extension, else by its declared type; undefined when neither is supported. */
export function fileTypeOf(fileName: string, declared?: string): SupportedFileType | undefined {
  return ALIASES.get(extensionOf(fileName)) ?? (declared ? ALIASES.get(declared.toLowerCase().split(';')[0]?.trim() ?? '') : undefined);
}

export const unsupportedFileMessage = (fileName: string) => `Unsupported file type of ${fileName}: supported are ${SUPPORTED_FILE_TYPES.join(', ')}`;

/**
 * Checks the `fileType` of a text document (posted `content`) against its file name, before it
 * is stored: the type that parses it is `fileType` when that names a supported type, and a file
 * name whose extension names another supported type contradicts it (`invalid_request` naming
 * both, `details: { fileName, fileType, fileNameType }`). A `fileType` that names no supported
 * type leaves the choice to the file name as before (the document fails if neither is one).
 */
export function checkTextDocumentType(fileName: string, fileType: string): void {
  const declared = declaredFileType(fileType);
  const named = ALIASES.get(extensionOf(fileName));
  if (declared && named && declared !== named) {
    throw new PlatformError(
      'invalid_request',
      `fileType: "${fileType}" contradicts the file name ${fileName}, whose extension says ${named}: give a fileType and a file name that agree (or a name without a supported extension, and the fileType decides)`,
      { details: { fileName, fileType, fileNameType: named }, issues: [{ path: ['fileType'], code: 'custom', message: `contradicts the file name ${fileName} (${named})` }] },
    );
  }
}
