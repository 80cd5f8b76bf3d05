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

/** The lower-cased extension of a file name without the dot, or ''. */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
}

/** The supported type of a file by its extension, else by its declared type; undefined when neither is supported. */
export function fileTypeOf(fileName: string, declared?: string): SupportedFileType | undefined {
  return ALIASES.get(extensionOf(fileName)) ?? (declared ? ALIASES.get(declared.toLowerCase().split(';')[0]?.trim() ?? '') : undefined);
}

export const unsupportedFileMessage = (fileName: string) =>
  `Unsupported file type of ${fileName}: supported are ${SUPPORTED_FILE_TYPES.join(', ')}`;
