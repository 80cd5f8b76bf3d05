import type { SupportedFileType } from '../file-types.js';
import { invalidFile, type ParseInput } from './document.js';

/**
 * Text bytes to a string: UTF-8 (with or without BOM), UTF-16 with a BOM, else windows-1252
 * (legacy files). Line ends become `\n`. Bytes with NULs are binary, not text.
 */
export function decodeText(input: ParseInput, type: SupportedFileType): string {
  const b = input.bytes;
  let text: string;
  if (b[0] === 0xff && b[1] === 0xfe) text = new TextDecoder('utf-16le').decode(b.subarray(2));
  else if (b[0] === 0xfe && b[1] === 0xff) text = new TextDecoder('utf-16be').decode(b.subarray(2));
  else {
    if (b.subarray(0, 65536).includes(0)) throw invalidFile(input, type, 'it holds binary data, not text');
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(b);
    } catch {
      text = decodeWindows1252(b);
    }
  }
  return text.replace(/\r\n?/g, '\n');
}

/** Unicode of windows-1252 bytes 0x80-0x9f (the rest are Latin-1); Node's decoder without full ICU reads them as C1 controls. */
const CP1252 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(bytes: Uint8Array): string {
  const parts: string[] = [];
  for (let at = 0; at < bytes.length; at += 8192) {
    const codes = Array.from(bytes.subarray(at, at + 8192), (byte) => (byte >= 0x80 && byte <= 0x9f ? CP1252.charCodeAt(byte - 0x80) : byte));
    parts.push(String.fromCharCode(...codes));
  }
  return parts.join('');
}
