import { Parser } from 'htmlparser2';
import { DEFAULT_DOCUMENT_LIMITS, limitExceeded } from '../limits.js';
import { clipHeading, type DocumentSection, MAX_HEADING_CHARS } from './document.js';

/** Elements that make a paragraph break. */
const BLOCK = new Set([
  'p',
  'div',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'nav',
  'blockquote',
  'pre',
  'table',
  'ul',
  'ol',
  'dl',
  'figure',
  'figcaption',
  'form',
  'fieldset',
  'details',
  'summary',
  'address',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
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
export function parseHtml(html: string, maxNesting: number = DEFAULT_DOCUMENT_LIMITS.maxNesting, label = 'HTML'): { text: string; sections: DocumentSection[]; title?: string; lang?: string } {
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
