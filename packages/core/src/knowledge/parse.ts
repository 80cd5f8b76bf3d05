import { Parser } from 'htmlparser2';
import { isPlatformError, PlatformError } from '../errors.js';
import { ArchiveError, unpackDocx } from './docx-archive.js';
import { declaredFileType, fileTypeOf, SUPPORTED_FILE_TYPES, type SupportedFileType } from './file-types.js';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits, limitExceeded } from './limits.js';

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

const LABELS: Record<SupportedFileType, string> = { txt: 'text', md: 'Markdown', html: 'HTML', pdf: 'PDF', docx: 'DOCX' };

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
    throw new PlatformError(
      'invalid_request',
      `Unsupported file type of ${input.fileName}${claimed}: supported are ${SUPPORTED_FILE_TYPES.join(', ')}`,
      { details: { fileName: input.fileName, supported: [...SUPPORTED_FILE_TYPES] } },
    );
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

function checkTextLength(label: string, length: number, max: number): void {
  if (length > max) throw limitExceeded('maxTextLength', `the ${label} document has ${length} characters of text`, max);
}

/** Errors that are not about the file's format pass through a parser's catch-all as they are. */
const isLimit = (error: unknown) => isPlatformError(error) && error.code === 'payload_too_large';

function invalidFile(input: ParseInput, type: SupportedFileType, reason: string, cause?: unknown): PlatformError {
  return new PlatformError('invalid_request', `Invalid ${LABELS[type]} file ${input.fileName}: ${reason}`, {
    details: { fileName: input.fileName, fileType: type },
    ...(cause === undefined ? {} : { cause }),
  });
}

// ---- text ---------------------------------------------------------------------------------

/**
 * Text bytes to a string: UTF-8 (with or without BOM), UTF-16 with a BOM, else windows-1252
 * (legacy files). Line ends become `\n`. Bytes with NULs are binary, not text.
 */
function decodeText(input: ParseInput, type: SupportedFileType): string {
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

// ---- markdown -----------------------------------------------------------------------------

/** Most characters of a section heading: headings go into every chunk's metadata, so a "heading" of megabytes is cut. */
export const MAX_HEADING_CHARS = 256;

/** A heading as kept: whitespace collapsed, trimmed, at most MAX_HEADING_CHARS characters (cut at a word when one ends near). */
export function clipHeading(raw: string): string {
  const text = raw.slice(0, MAX_HEADING_CHARS * 4).replace(/\s+/g, ' ').trim();
  if (text.length <= MAX_HEADING_CHARS) return text;
  let cut = text.slice(0, MAX_HEADING_CHARS);
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  const space = cut.lastIndexOf(' ');
  return `${space > MAX_HEADING_CHARS * 0.8 ? cut.slice(0, space) : cut}…`;
}

/**
 * Heading text without inline markdown: links, images, code spans, emphasis. Each pattern is
 * linear (a link's text stops at the next bracket, not at the end of the line), and only the
 * first few MAX_HEADING_CHARS characters are read.
 */
function plainHeading(raw: string): string {
  const head = raw.slice(0, MAX_HEADING_CHARS * 4);
  if (!/[[`*_]/.test(head)) return clipHeading(head);
  return clipHeading(
    head
      .replace(/!?\[([^[\]]*)\]\([^()]*\)/g, '$1')
      .replace(/`([^`]*)`/g, '$1')
      .replace(/(\*\*|__)(.+?)\1/g, '$2')
      .replace(/(^|\W)[*_]([^*_]+)[*_](?=\W|$)/g, '$1$2'),
  );
}

const NOT_PARAGRAPH = /^ {0,3}([-*+]\s|\d{1,9}[.)]\s|>|\||#|```|~~~|<)/;

/** Markdown stays as it is (less YAML front matter, which goes to metadata); ATX (`#`) and setext (`===`, `---`) headings outside code fences become sections. */
function parseMarkdown(markdown: string): ParsedDocument {
  let text = markdown;
  const sections: DocumentSection[] = [];
  const metadata: Record<string, unknown> = {};
  // YAML front matter goes to metadata (its simple `key: value` lines), not into the text.
  const front = /^---\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/.exec(text.slice(0, 16384));
  // Only when it looks like YAML: a leading `---` may as well be a rule above a paragraph.
  if (front && (front[1] as string).split('\n').every((l) => /^([\w-]+:|\s|-|#|$)/.test(l))) {
    // Collected as entries: assigning `fields[key]` would set the object's prototype for a
    // `__proto__:` line instead of keeping it; `Object.fromEntries` defines every key as its own.
    const entries = new Map<string, string>();
    for (const line of (front[1] as string).split('\n')) {
      const m = /^([A-Za-z_][\w-]*):[ \t]*(['"]?)(.*?)\2[ \t]*$/.exec(line);
      if (m?.[3]) entries.set(m[1] as string, m[3]);
    }
    metadata.frontMatter = Object.fromEntries(entries);
    const title = entries.get('title');
    if (title) metadata.title = title;
    text = text.slice(front[0].length).replace(/^\n+/, '');
  }
  const lines = text.split('\n');
  let offset = 0;
  let fence: string | undefined;
  // The paragraph just above the current line, which a setext underline turns into a heading.
  let paragraph: { offset: number; text: string } | undefined;
  for (const line of lines) {
    const lineOffset = offset;
    offset += line.length + 1;
    if (fence) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line)?.[1];
      if (close && close[0] === fence[0] && close.length >= fence.length) fence = undefined;
      continue;
    }
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (open) {
      fence = open;
      paragraph = undefined;
      continue;
    }
    const atx = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) {
      const heading = plainHeading(atx[2] ?? '');
      if (heading) sections.push({ heading, level: (atx[1] as string).length, offset: lineOffset });
      paragraph = undefined;
      continue;
    }
    const underline = /^ {0,3}(=+|-+)[ \t]*$/.exec(line)?.[1];
    if (underline && paragraph) {
      const heading = plainHeading(paragraph.text);
      if (heading) sections.push({ heading, level: underline[0] === '=' ? 1 : 2, offset: paragraph.offset });
      paragraph = undefined;
      continue;
    }
    if (line.trim() === '' || NOT_PARAGRAPH.test(line) || /^( {4}|\t)/.test(line)) paragraph = undefined;
    // Only its start can become a heading: a paragraph of a million lines is not gathered.
    else if (!paragraph) paragraph = { offset: lineOffset, text: line.trim() };
    else if (paragraph.text.length < MAX_HEADING_CHARS * 4) paragraph = { offset: paragraph.offset, text: `${paragraph.text} ${line.trim()}` };
  }
  const title = metadata.title ?? sections.find((s) => s.level === 1)?.heading;
  return { type: 'md', text, sections, metadata: title ? { ...metadata, title } : metadata };
}

// ---- html ---------------------------------------------------------------------------------

/** Elements that make a paragraph break. */
const BLOCK = new Set([
  'p', 'div', 'section', 'article', 'header', 'footer', 'main', 'aside', 'nav', 'blockquote', 'pre', 'table', 'ul', 'ol',
  'dl', 'figure', 'figcaption', 'form', 'fieldset', 'details', 'summary', 'address', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
]);
/** Elements that make a line break. */
const LINE = new Set(['br', 'li', 'tr', 'dt', 'dd', 'caption', 'option']);
/** Table cells: separated by ` | ` on their row's line. */
const CELL = new Set(['td', 'th']);
/** Elements whose content is not readable text. */
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'head', 'iframe', 'object', 'canvas', 'select', 'nav']);

/** Builds readable text from inline pieces and breaks: whitespace collapsed, no space before a line end. */
class TextBuilder {
  readonly #parts: string[] = [];
  #length = 0;
  #newlines = 0;
  #space = false;

  get length(): number {
    return this.#length;
  }

  #push(s: string): void {
    this.#parts.push(s);
    this.#length += s.length;
  }

  /** Appends inline text, collapsing whitespace. Returns the offset of its first character, or -1 when it was only whitespace. */
  inline(data: string): number {
    const collapsed = data.replace(/\s+/g, ' ');
    const leading = collapsed.startsWith(' ');
    const trailing = collapsed.endsWith(' ');
    const core = collapsed.trim();
    if (leading && this.#length > 0 && this.#newlines === 0) this.#space = true;
    if (!core) return -1;
    if (this.#space) this.#push(' ');
    this.#space = trailing;
    const at = this.#length;
    this.#push(core);
    this.#newlines = 0;
    return at;
  }

  /** Appends preformatted text as it is. Returns the offset of its first non-space character, or -1. */
  raw(data: string): number {
    if (!data) return -1;
    if (this.#space) this.#push(' ');
    this.#space = false;
    const at = this.#length + (data.length - data.trimStart().length);
    this.#push(data);
    const trailing = /\n*$/.exec(data)?.[0].length ?? 0;
    this.#newlines = trailing === data.length ? this.#newlines + trailing : trailing;
    return data.trim() ? at : -1;
  }

  /** Ends the line (`1`) or the paragraph (`2`). */
  break(newlines: 1 | 2): void {
    this.#space = false;
    if (this.#length === 0) return;
    while (this.#newlines < newlines) {
      this.#push('\n');
      this.#newlines++;
    }
  }

  /** A separator between table cells: only between two cells of one line. */
  cell(): void {
    if (this.#length > 0 && this.#newlines === 0) this.inline(' | ');
  }

  /** A word break. */
  space(): void {
    if (this.#length > 0 && this.#newlines === 0) this.#space = true;
  }

  toString(): string {
    return this.#parts.join('').trimEnd();
  }
}

/**
 * HTML to readable text: block elements become paragraphs, h1-h6 sections; scripts, styles and
 * the head are dropped. Elements open deeper than `maxNesting` fail with `payload_too_large`
 * (limit `maxNesting`): htmlparser2 keeps its open elements in an array it shifts at the
 * front, so every tag costs as much as the nesting is deep (2.6 MB of unclosed `<div>` took
 * minutes); under the limit the cost per tag is bounded.
 */
export function parseHtml(
  html: string,
  maxNesting: number = DEFAULT_DOCUMENT_LIMITS.maxNesting,
  label = 'HTML',
): { text: string; sections: DocumentSection[]; title?: string; lang?: string } {
  const out = new TextBuilder();
  const sections: DocumentSection[] = [];
  // Open elements: every onopentag is matched by one onclosetag (void and implied closes included).
  let depth = 0;
  let skipping = 0;
  let pre = 0;
  let cells = 0;
  let heading: { level: number; offset: number; text: string } | undefined;
  let title: string | undefined;
  let inTitle = false;
  let lang: string | undefined;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (++depth > maxNesting) throw limitExceeded('maxNesting', `the ${label} nests elements ${depth} deep`, maxNesting);
        if (name === 'html' && attributes.lang) lang = attributes.lang;
        // The document's first <title> (an <svg> may hold more).
        if (name === 'title' && title === undefined) {
          inTitle = true;
          title = '';
        }
        if (SKIP.has(name)) skipping++;
        if (skipping > 0) return;
        if (CELL.has(name)) {
          out.cell();
          cells++;
        } else if (BLOCK.has(name)) {
          // Paragraphs inside a table cell (as docx tables have) stay on the row's line.
          if (cells > 0) out.space();
          else out.break(2);
        } else if (LINE.has(name)) out.break(1);
        if (name === 'pre') pre++;
        const level = /^h([1-6])$/.exec(name)?.[1];
        if (level && !heading) heading = { level: Number(level), offset: -1, text: '' };
      },
      ontext(data) {
        // A title or heading is clipped anyway: what is past its first few hundred characters is not gathered.
        if (inTitle && (title as string).length < MAX_HEADING_CHARS * 4) title += data;
        if (skipping > 0) return;
        const at = pre > 0 ? out.raw(data) : out.inline(data);
        if (heading) {
          if (heading.offset < 0 && at >= 0) heading.offset = at;
          if (heading.text.length < MAX_HEADING_CHARS * 4) heading.text += data;
        }
      },
      onclosetag(name) {
        depth--;
        if (name === 'title') inTitle = false;
        if (SKIP.has(name)) {
          skipping = Math.max(0, skipping - 1);
          return;
        }
        if (skipping > 0) return;
        if (name === 'pre') pre = Math.max(0, pre - 1);
        if (heading && name === `h${heading.level}`) {
          const text = clipHeading(heading.text);
          if (text && heading.offset >= 0) sections.push({ heading: text, level: heading.level, offset: heading.offset });
          heading = undefined;
        }
        if (CELL.has(name)) {
          cells = Math.max(0, cells - 1);
          out.space();
        } else if (BLOCK.has(name)) {
          if (cells > 0) out.space();
          else out.break(2);
        } else if (LINE.has(name) && name !== 'br') out.break(1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  const cleanTitle = (title === undefined ? '' : clipHeading(title)) || sections.find((s) => s.level === 1)?.heading;
  return { text: out.toString(), sections, ...(cleanTitle ? { title: cleanTitle } : {}), ...(lang ? { lang } : {}) };
}

// ---- pdf ----------------------------------------------------------------------------------

interface PdfTextItem {
  readonly str: string;
  readonly hasEOL: boolean;
  readonly transform: readonly number[];
  readonly height: number;
}

/**
 * The text of one page from pdf.js text items: lines in content order, a blank line where the
 * vertical gap to the previous line is clearly wider than a line (a new paragraph).
 */
function pageText(items: readonly unknown[]): string {
  const lines: { text: string; y: number; height: number }[] = [];
  let current: { text: string; y: number; height: number } | undefined;
  const end = () => {
    if (current) {
      const text = current.text.replace(/[ \t\u00a0]+/g, ' ').trim();
      if (text) lines.push({ ...current, text });
    }
    current = undefined;
  };
  for (const raw of items) {
    if (typeof raw !== 'object' || raw === null || !('str' in raw)) continue;
    const item = raw as PdfTextItem;
    const y = item.transform[5] ?? 0;
    if (item.str) {
      // A jump to another baseline without an end-of-line mark is a new line too.
      if (current && Math.abs(current.y - y) > Math.max(current.height, item.height, 1) * 0.5) end();
      if (current) current.text += item.str;
      else current = { text: item.str, y, height: item.height };
      current.height = Math.max(current.height, item.height);
    }
    if (item.hasEOL) end();
  }
  end();
  let text = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as { text: string; y: number; height: number };
    const prev = lines[i - 1];
    if (prev) {
      const gap = prev.y - line.y;
      text += gap < 0 || gap > Math.max(prev.height, line.height, 1) * 1.8 ? '\n\n' : '\n';
    }
    text += line.text;
  }
  return text;
}

/** A PDF date (`D:20260101120000Z`, `D:20260101120000+01'00'`) as ISO 8601, or undefined. */
function pdfDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?/.exec(value);
  if (!m) return undefined;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', zone] = m;
  const tz = !zone || zone === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.replace(/'/g, '').slice(3, 5) || '00'}`;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${tz}`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

const PDF_INFO: Record<string, string> = { Title: 'title', Author: 'author', Subject: 'subject', Keywords: 'keywords', Creator: 'creator', Producer: 'producer' };

interface OutlineNode {
  readonly title: string;
  readonly dest: string | readonly unknown[] | null;
  readonly items: readonly OutlineNode[];
}

async function parsePdf(input: ParseInput, maxPages: number, maxTextLength: number): Promise<ParsedDocument & { declaredLanguage?: string }> {
  const head = new TextDecoder('latin1').decode(input.bytes.subarray(0, 1024));
  if (!head.includes('%PDF-')) throw invalidFile(input, 'pdf', 'it does not start with a PDF header (%PDF-)');
  const { getDocumentProxy } = await import('unpdf');
  // pdf.js may take over (detach) the buffer it is given: it gets a copy.
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(input.bytes), { verbosity: 0, isEvalSupported: false, stopAtErrors: false });
  } catch (error) {
    const reason = (error as Error).name === 'PasswordException' ? 'it is protected by a password' : (error as Error).message;
    throw invalidFile(input, 'pdf', reason, error);
  }
  try {
    // Before any page is read: pdf.js finds a page by walking the page tree from its root, so
    // reading all pages of a flat tree costs the square of their number (2,000: 4 s; 8,000: 28 s).
    if (pdf.numPages > maxPages) throw limitExceeded('maxPages', `the PDF has ${pdf.numPages} pages`, maxPages);
    const pages: DocumentPage[] = [];
    let text = '';
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      const pageString = pageText(content.items);
      page.cleanup();
      if (n > 1) text += '\n\n';
      pages.push({ pageNumber: n, text: pageString, offset: text.length });
      text += pageString;
      checkTextLength('PDF', text.length, maxTextLength);
    }
    const metadata: Record<string, unknown> = {};
    let declaredLanguage: string | undefined;
    const info = (await pdf.getMetadata().catch(() => undefined))?.info as Record<string, unknown> | undefined;
    if (info) {
      for (const [key, name] of Object.entries(PDF_INFO)) {
        const value = info[key];
        if (typeof value === 'string' && value.trim()) metadata[name] = value.trim();
      }
      const created = pdfDate(info.CreationDate);
      const modified = pdfDate(info.ModDate);
      if (created) metadata.creationDate = created;
      if (modified) metadata.modificationDate = modified;
      if (typeof info.Language === 'string' && info.Language) declaredLanguage = info.Language;
    }
    const sections = await outlineSections(pdf, pages);
    return { type: 'pdf', text, pages, sections, pageCount: pdf.numPages, metadata, ...(declaredLanguage ? { declaredLanguage } : {}) };
  } catch (error) {
    if (isLimit(error)) throw error;
    throw invalidFile(input, 'pdf', (error as Error).message, error);
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}

/**
 * Sections of a pdf from its outline (bookmarks): each entry at the line of its page that
 * starts with its title, else at the start of its page. A pdf without an outline has none.
 * Entries nested deeper than the default nesting limit are left out (the outline is walked
 * recursively).
 */
async function outlineSections(
  pdf: {
    getOutline(): Promise<unknown>;
    getDestination(id: string): Promise<unknown>;
    getPageIndex(ref: never): Promise<number>;
  },
  pages: readonly DocumentPage[],
): Promise<DocumentSection[]> {
  const outline = ((await pdf.getOutline().catch(() => null)) ?? []) as readonly OutlineNode[];
  const sections: DocumentSection[] = [];
  const visit = async (nodes: readonly OutlineNode[], level: number) => {
    for (const node of nodes) {
      const heading = typeof node.title === 'string' ? clipHeading(node.title) : undefined;
      let pageIndex: number | undefined;
      try {
        const dest = typeof node.dest === 'string' ? await pdf.getDestination(node.dest) : node.dest;
        const ref = Array.isArray(dest) ? dest[0] : undefined;
        pageIndex = typeof ref === 'number' ? ref : ref ? await pdf.getPageIndex(ref as never) : undefined;
      } catch {
        pageIndex = undefined;
      }
      const page = pageIndex === undefined ? undefined : pages[pageIndex];
      if (heading && page) {
        const escaped = heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+');
        const found = new RegExp(`(^|\\n)[ \\t]*${escaped}`, 'i').exec(page.text);
        const at = found ? found.index + (found[1] as string).length : 0;
        sections.push({ heading, level, offset: page.offset + at });
      }
      if (node.items?.length && level < DEFAULT_DOCUMENT_LIMITS.maxNesting) await visit(node.items, level + 1);
    }
  };
  await visit(outline, 1);
  // In text order; entries at the same place keep their outline order.
  return sections.map((s, i) => [s, i] as const).sort((a, b) => a[0].offset - b[0].offset || a[1] - b[1]).map(([s]) => s);
}

// ---- docx ---------------------------------------------------------------------------------

/** Word styles that mammoth does not map by default; Heading 1-6 map to h1-h6 by default. */
const DOCX_STYLE_MAP = ["p[style-name='Title'] => h1:fresh", "p[style-name='Subtitle'] => h2:fresh"];

async function parseDocx(input: ParseInput, maxUnzippedBytes: number, maxNesting: number): Promise<ParsedDocument> {
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

// ---- language -----------------------------------------------------------------------------

/** The most frequent function words of some languages; enough to tell them apart on a paragraph. */
const STOPWORDS: Record<string, readonly string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'it', 'for', 'with', 'are', 'this', 'on', 'be', 'as', 'was', 'you', 'not'],
  de: ['der', 'die', 'und', 'das', 'ist', 'nicht', 'ein', 'eine', 'zu', 'mit', 'den', 'von', 'sich', 'auf', 'für', 'auch', 'wird', 'dem'],
  fr: ['le', 'la', 'les', 'et', 'des', 'est', 'une', 'un', 'du', 'que', 'pour', 'dans', 'pas', 'sur', 'avec', 'il', 'au', 'qui'],
  es: ['el', 'la', 'los', 'las', 'y', 'que', 'de', 'es', 'en', 'un', 'una', 'por', 'con', 'para', 'del', 'se', 'al', 'como'],
  it: ['il', 'di', 'che', 'e', 'la', 'per', 'un', 'una', 'sono', 'non', 'con', 'del', 'della', 'gli', 'le', 'è', 'nel', 'anche'],
  nl: ['de', 'het', 'een', 'en', 'van', 'is', 'dat', 'niet', 'op', 'te', 'met', 'voor', 'zijn', 'die', 'ook', 'wordt', 'aan', 'er'],
  pt: ['o', 'a', 'os', 'as', 'e', 'que', 'de', 'do', 'da', 'em', 'um', 'uma', 'não', 'para', 'com', 'no', 'na', 'por'],
  sv: ['och', 'att', 'det', 'som', 'en', 'är', 'av', 'för', 'med', 'till', 'den', 'har', 'inte', 'om', 'ett', 'på', 'jag', 'var'],
  pl: ['i', 'w', 'nie', 'na', 'się', 'z', 'jest', 'że', 'do', 'to', 'jak', 'ale', 'co', 'od', 'po', 'tak', 'przez', 'dla'],
};
const LANGUAGES = Object.keys(STOPWORDS);
/** Each function word with the languages (indexes into LANGUAGES) it belongs to: one lookup per word of a text. */
const STOPWORD_LANGUAGES = new Map<string, number[]>();
for (const [i, lang] of LANGUAGES.entries()) {
  for (const word of STOPWORDS[lang] as readonly string[]) STOPWORD_LANGUAGES.set(word, [...(STOPWORD_LANGUAGES.get(word) ?? []), i]);
}

/**
 * A cheap language guess, no model and no download: scripts tell zh, ja, ko, ru, uk, el, he,
 * ar, hi, th; function words tell en, de, fr, es, it, nl, pt, sv, pl apart. Undefined for
 * short or unclear text. Good enough for metadata, not for NLP.
 */
export function detectLanguage(text: string): string | undefined {
  const sample = text.slice(0, 8000);
  const count = (re: RegExp) => sample.match(re)?.length ?? 0;
  // ASCII text (most documents) has none of the scripts below: one pass instead of ten.
  let ascii = true;
  let asciiLetters = 0;
  for (let i = 0; i < sample.length; i++) {
    const code = sample.charCodeAt(i) | 32;
    if (code >= 128) {
      ascii = false;
      break;
    }
    if (code >= 97 && code <= 122) asciiLetters++;
  }
  const letters = ascii ? asciiLetters : count(/\p{L}/gu);
  if (letters < 20) return undefined;
  if (!ascii) return scriptLanguage(letters, count) ?? wordLanguage(sample);
  return wordLanguage(sample);
}

/** The language a sample's script tells (zh, ja, ko, ru, uk, el, he, ar, hi, th), if one does; `count` counts matches in the sample. */
function scriptLanguage(letters: number, count: (re: RegExp) => number): string | undefined {
  if (count(/[\u3040-\u30ff]/g) / letters > 0.1) return 'ja';
  if (count(/\p{Script=Hangul}/gu) / letters > 0.3) return 'ko';
  if (count(/\p{Script=Han}/gu) / letters > 0.3) return 'zh';
  const scripts: [RegExp, string][] = [
    [/\p{Script=Cyrillic}/gu, 'ru'],
    [/\p{Script=Greek}/gu, 'el'],
    [/\p{Script=Hebrew}/gu, 'he'],
    [/\p{Script=Arabic}/gu, 'ar'],
    [/\p{Script=Devanagari}/gu, 'hi'],
    [/\p{Script=Thai}/gu, 'th'],
  ];
  for (const [re, lang] of scripts) {
    if (count(re) / letters > 0.5) return lang === 'ru' && count(/[іїєґ]/giu) > 2 ? 'uk' : lang;
  }
  return undefined;
}

/** The language whose function words are most frequent in a sample (en, de, fr, es, it, nl, pt, sv, pl), if clear. */
function wordLanguage(sample: string): string | undefined {
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 8) return undefined;
  const hits = new Array<number>(LANGUAGES.length).fill(0);
  for (const w of words) for (const i of STOPWORD_LANGUAGES.get(w) ?? []) hits[i] = (hits[i] as number) + 1;
  // The first language with the most hits, as when they were counted one language after another.
  let best = 0;
  for (let i = 1; i < hits.length; i++) if ((hits[i] as number) > (hits[best] as number)) best = i;
  return (hits[best] as number) > 0 && (hits[best] as number) / words.length >= 0.08 ? LANGUAGES[best] : undefined;
}

/** `en-US` → `en`; undefined for anything that is not a language tag. */
function normalizeLanguageTag(tag: string | undefined): string | undefined {
  const m = tag ? /^([a-z]{2,3})(?:[-_]|$)/i.exec(tag.trim()) : null;
  return m?.[1]?.toLowerCase();
}
