import { DEFAULT_DOCUMENT_LIMITS, limitExceeded } from '../limits.js';
import { checkTextLength, clipHeading, type DocumentPage, type DocumentSection, invalidFile, isLimit, type ParsedDocument, type ParseInput } from './document.js';

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

export async function parsePdf(input: ParseInput, maxPages: number, maxTextLength: number): Promise<ParsedDocument & { declaredLanguage?: string }> {
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
  return sections
    .map((s, i) => [s, i] as const)
    .sort((a, b) => a[0].offset - b[0].offset || a[1] - b[1])
    .map(([s]) => s);
}
