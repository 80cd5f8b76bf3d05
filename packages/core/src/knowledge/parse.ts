import { Parser } from 'htmlparser2';
import { PlatformError } from '../errors.js';
import { fileTypeOf, type SupportedFileType, unsupportedFileMessage } from './file-types.js';

export interface Section {
  /** Heading text. */
  readonly heading: string;
  /** 1 for `#`/h1, 2 for `##`/h2, ... */
  readonly level: number;
  /** Offset of the heading in `text`. */
  readonly offset: number;
}

export interface ParsedDocument {
  readonly type: SupportedFileType;
  /** The whole readable text; pages are joined by blank lines. */
  readonly text: string;
  /** Headings, in order of their offsets. */
  readonly sections: readonly Section[];
  /** Start offset of each page in `text` (pdf), in page order; page n starts at `pageOffsets[n-1]`. */
  readonly pageOffsets?: readonly number[];
  readonly pageCount?: number;
  /** ISO 639-1 code when the text is long enough to tell, e.g. `en`. */
  readonly language?: string;
}

export interface ParseInput {
  readonly bytes: Uint8Array;
  readonly fileName: string;
  /** Extension (`pdf`), name (`markdown`) or MIME type; the file name's extension wins. */
  readonly fileType?: string;
}

const invalid = (message: string) => PlatformError.invalid(message);

/** Reads a document into text with its headings (and pages for pdf). */
export async function parseDocument(input: ParseInput): Promise<ParsedDocument> {
  const type = fileTypeOf(input.fileName, input.fileType) ?? (input.fileType ? fileTypeOf(`x.${input.fileType}`) : undefined);
  if (!type) throw invalid(unsupportedFileMessage(input.fileName));
  let parsed: ParsedDocument;
  switch (type) {
    case 'txt':
      parsed = { type, text: decodeText(input), sections: [] };
      break;
    case 'md':
      parsed = parseMarkdown(decodeText(input));
      break;
    case 'html':
      parsed = parseHtml(decodeText(input));
      break;
    case 'pdf':
      parsed = await parsePdf(input);
      break;
    case 'docx':
      parsed = await parseDocx(input);
      break;
  }
  const language = detectLanguage(parsed.text);
  return language ? { ...parsed, language } : parsed;
}

function decodeText(input: ParseInput): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(input.bytes).replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  } catch {
    throw invalid(`${input.fileName} is not UTF-8 text`);
  }
}

function parseMarkdown(text: string): ParsedDocument {
  const sections: Section[] = [];
  let offset = 0;
  let fence = false;
  for (const line of text.split('\n')) {
    if (/^\s{0,3}(```|~~~)/.test(line)) fence = !fence;
    const m = fence ? null : /^ {0,3}(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (m) sections.push({ heading: (m[2] as string).trim(), level: (m[1] as string).length, offset });
    offset += line.length + 1;
  }
  return { type: 'md', text, sections };
}

const BLOCK = new Set(['p', 'div', 'section', 'article', 'header', 'footer', 'li', 'ul', 'ol', 'table', 'tr', 'br', 'blockquote', 'pre', 'main', 'aside', 'nav', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'title', 'dd', 'dt', 'figcaption']);
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);

/** HTML to readable text: block elements become line breaks, h1-h6 become sections. */
export function parseHtml(html: string): ParsedDocument {
  let text = '';
  const sections: Section[] = [];
  let skipping = 0;
  let heading: { level: number; offset: number; text: string } | undefined;
  const newline = () => {
    if (text.length > 0 && !text.endsWith('\n\n')) text += text.endsWith('\n') ? '\n' : '\n\n';
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (SKIP.has(name)) skipping++;
        else if (BLOCK.has(name)) newline();
        const level = /^h([1-6])$/.exec(name);
        if (level && skipping === 0) heading = { level: Number(level[1]), offset: text.length, text: '' };
      },
      ontext(data) {
        if (skipping > 0) return;
        const clean = data.replace(/\s+/g, ' ');
        const piece = text.endsWith('\n') || text.length === 0 ? clean.trimStart() : clean;
        text += piece;
        if (heading) heading.text += piece;
      },
      onclosetag(name) {
        if (SKIP.has(name)) skipping = Math.max(0, skipping - 1);
        else if (BLOCK.has(name)) newline();
        if (heading && name === `h${heading.level}`) {
          const h = heading.text.trim();
          if (h) sections.push({ heading: h, level: heading.level, offset: heading.offset });
          heading = undefined;
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return { type: 'html', text: text.replace(/[ \t]+\n/g, '\n').trim(), sections };
}

async function parsePdf(input: ParseInput): Promise<ParsedDocument> {
  const head = new TextDecoder('latin1').decode(input.bytes.subarray(0, 1024));
  if (!head.includes('%PDF-')) throw invalid(`Invalid PDF file ${input.fileName}: it does not start with a PDF header`);
  const { extractText, getDocumentProxy } = await import('unpdf');
  let pages: string[];
  try {
    const pdf = await getDocumentProxy(new Uint8Array(input.bytes));
    pages = (await extractText(pdf, { mergePages: false })).text;
  } catch (error) {
    throw invalid(`Invalid PDF file ${input.fileName}: ${(error as Error).message}`);
  }
  const pageOffsets: number[] = [];
  let text = '';
  for (const page of pages) {
    if (text) text += '\n\n';
    pageOffsets.push(text.length);
    text += page.trim();
  }
  return { type: 'pdf', text, sections: [], pageOffsets, pageCount: pages.length };
}

async function parseDocx(input: ParseInput): Promise<ParsedDocument> {
  // A docx is a zip archive: "PK\x03\x04".
  const b = input.bytes;
  if (!(b[0] === 0x50 && b[1] === 0x4b && b[2] === 0x03 && b[3] === 0x04)) {
    throw invalid(`Invalid DOCX file ${input.fileName}: it is not a zip archive`);
  }
  const mammoth = await import('mammoth');
  let html: string;
  try {
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(b) })).value;
  } catch (error) {
    throw invalid(`Invalid DOCX file ${input.fileName}: ${(error as Error).message}`);
  }
  return { ...parseHtml(html), type: 'docx' };
}

/** The few most frequent function words of some languages; enough to tell them apart on a paragraph. */
const STOPWORDS: Record<string, readonly string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'it', 'for', 'with', 'are', 'this', 'on', 'be', 'as'],
  de: ['der', 'die', 'und', 'das', 'ist', 'nicht', 'ein', 'eine', 'zu', 'mit', 'den', 'von', 'sich', 'auf', 'für'],
  fr: ['le', 'la', 'les', 'et', 'des', 'est', 'une', 'un', 'du', 'que', 'pour', 'dans', 'pas', 'sur', 'avec'],
  es: ['el', 'la', 'los', 'las', 'y', 'que', 'de', 'es', 'en', 'un', 'una', 'por', 'con', 'para', 'del'],
  it: ['il', 'di', 'che', 'e', 'la', 'per', 'un', 'una', 'sono', 'non', 'con', 'del', 'della', 'gli', 'le'],
  nl: ['de', 'het', 'een', 'en', 'van', 'is', 'dat', 'niet', 'op', 'te', 'met', 'voor', 'zijn', 'die', 'ook'],
  pt: ['o', 'a', 'os', 'as', 'e', 'que', 'de', 'do', 'da', 'em', 'um', 'uma', 'não', 'para', 'com'],
};

/**
 * A cheap language guess from function words (Latin-script languages above) and scripts (zh,
 * ja, ko, ru, ar). Undefined for short or unclear text. Good enough for metadata, not for NLP.
 */
export function detectLanguage(text: string): string | undefined {
  const sample = text.slice(0, 5000);
  const count = (re: RegExp) => sample.match(re)?.length ?? 0;
  const letters = count(/\p{L}/gu);
  if (letters < 20) return undefined;
  if (count(/[\u3040-\u30ff]/g) / letters > 0.1) return 'ja';
  if (count(/[\uac00-\ud7af]/g) / letters > 0.3) return 'ko';
  if (count(/\p{Script=Han}/gu) / letters > 0.3) return 'zh';
  if (count(/\p{Script=Cyrillic}/gu) / letters > 0.5) return 'ru';
  if (count(/\p{Script=Arabic}/gu) / letters > 0.5) return 'ar';
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 8) return undefined;
  let best: string | undefined;
  let bestHits = 0;
  for (const [lang, stop] of Object.entries(STOPWORDS)) {
    const set = new Set(stop);
    const hits = words.filter((w) => set.has(w)).length;
    if (hits > bestHits) {
      best = lang;
      bestHits = hits;
    }
  }
  return bestHits / words.length >= 0.05 ? best : undefined;
}
