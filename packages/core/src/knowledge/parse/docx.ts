import { ArchiveError, unpackDocx } from '../docx-archive.js';
import { invalidFile, type ParsedDocument, type ParseInput } from './document.js';
import { parseHtml } from './html.js';

/** Word styles that mammoth does not map by default; Heading 1-6 map to h1-h6 by default. */
const DOCX_STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"];

export async function parseDocx(input: ParseInput, maxUnzippedBytes: number, maxNesting: number): Promise<ParsedDocument> {
  const b = input.bytes;
  // A docx is a zip archive: "PK\x03\x04".
  if (!(b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04)) throw invalidFile(input, 'docx', 'it is not a zip archive');
  // mammoth (through JSZip) would inflate whatever the archive holds: it gets the XML parts
  // unpacked under the limits instead, as stored entries.
  let archive: Buffer;
  try {
    archive = unpackDocx(b, { maxUnzippedBytes, maxNesting });
  } catch (error) {
    if (error instanceof ArchiveError) throw invalidFile(input, 'docx', error.message, error);
    throw error;
  }
  const mammoth = (await import('mammoth')).default;
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: archive },
      // Images are left out (not read, not inlined as base64).
      { styleMap: DOCX_STYLE_MAP, convertImage: mammoth.images.imgElement(async () => ({ src: '' })) },
    );
    html = result.value;
  } catch (error) {
    throw invalidFile(input, 'docx', (error as Error).message, error);
  }
  const parsed = parseHtml(html, maxNesting, 'DOCX');
  return { type: 'docx', text: parsed.text, sections: parsed.sections, metadata: parsed.title ? { title: parsed.title } : {} };
}
