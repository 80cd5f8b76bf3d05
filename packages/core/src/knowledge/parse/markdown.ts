import { clipHeading, type DocumentSection, MAX_HEADING_CHARS, type ParsedDocument } from './document.js';

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
export function parseMarkdown(markdown: string): ParsedDocument {
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
