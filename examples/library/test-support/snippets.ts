/**
 * The TypeScript and JavaScript code blocks of Markdown files, to be type-checked as programs.
 *
 * A block fenced ```ts or ```typescript is a TypeScript module; ```js, ```javascript or ```mjs a
 * JavaScript module (checked with `checkJs`). Each must be a whole program: its imports, its
 * names, top-level await as in an ES module. A block that is an excerpt (not a whole program)
 * says so in its info string, ```ts fragment, and is not checked. Blocks in other languages
 * (sh, json, ...) are not code to check.
 */
export interface Snippet {
  /** The Markdown file, as given. */
  readonly file: string;
  /** Line of the block's first code line in the file, from 1. */
  readonly line: number;
  readonly language: 'ts' | 'js';
  /** An excerpt: not checked. */
  readonly fragment: boolean;
  readonly code: string;
}

const LANGUAGES: Record<string, 'ts' | 'js'> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js', mjs: 'js' };

export function extractSnippets(file: string, markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const [, indent = '', fence = '', info = '', rest = ''] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j] as string;
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') break;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    const language = LANGUAGES[info.toLowerCase()];
    if (language) snippets.push({ file, line: i + 2, language, fragment: rest.split(/\s+/).includes('fragment'), code: `${body.join('\n')}\n` });
    i = j;
  }
  return snippets;
}

/** A file name for the snippet that tells where it came from, e.g. `docs_API.md-L142.ts`. */
export function snippetFileName(snippet: Snippet): string {
  return `${snippet.file.replace(/[/\\]/g, '_')}-L${snippet.line}.${snippet.language === 'ts' ? 'ts' : 'mjs'}`;
}
