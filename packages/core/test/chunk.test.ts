import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { type Chunk, chunkDocument, countTokens } from '../src/knowledge/chunk/index.js';
import { type ParsedDocument, parseDocument } from '../src/knowledge/parse/index.js';
import { unbrokenText } from '../src/testing/bombs.js';

type Doc = Pick<ParsedDocument, 'text' | 'sections' | 'pages'>;
const plain = (text: string): Doc => ({ text, sections: [] });
const fixture = async (name: string) => parseDocument({ bytes: new Uint8Array(await readFile(new URL(`fixtures/${name}`, import.meta.url))), fileName: name });
const sentences = (n: number, word = 'pump') => Array.from({ length: n }, (_, i) => `Sentence ${i} talks about the ${word} number ${i} in some detail.`).join(' ');

/** What holds for every chunking: limits, exact counts, slices of the text, order, and every non-space character covered. */
function expectValid(doc: Doc, chunks: Chunk[], chunkSize: number) {
  const covered = new Uint8Array(doc.text.length);
  chunks.forEach((c, i) => {
    expect(c.index).toBe(i);
    expect(c.text.trim()).not.toBe('');
    expect(c.text).toBe(c.text.trim());
    expect(c.tokenCount).toBe(countTokens(c.text));
    expect(c.tokenCount).toBeLessThanOrEqual(chunkSize);
    expect(doc.text.slice(c.startOffset, c.startOffset + c.text.length)).toBe(c.text);
    // No half of a surrogate pair at either end.
    expect(c.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    covered.fill(1, c.startOffset, c.startOffset + c.text.length);
    if (i > 0) expect(c.startOffset).toBeGreaterThan((chunks[i - 1] as Chunk).startOffset);
  });
  for (let at = 0; at < doc.text.length; at++) {
    if (!covered[at] && /\S/.test(doc.text[at] as string)) throw new Error(`character ${at} is in no chunk`);
  }
}

const end = (c: Chunk) => c.startOffset + c.text.length;

describe('countTokens', () => {
  it('counts o200k_base tokens, text that spells a special token included', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(3);
  });
});

describe('chunkDocument', () => {
  it('packs paragraphs greedily within chunkSize and covers all the text', () => {
    const doc = plain(Array.from({ length: 30 }, (_, p) => sentences(8, `p${p}`)).join('\n\n'));
    const chunks = chunkDocument(doc, { chunkSize: 128, chunkOverlap: 16 });
    expect(chunks.length).toBeGreaterThan(10);
    expectValid(doc, chunks, 128);
    // Greedy packing fills chunks: most are more than half full.
    const filled = chunks.filter((c) => c.tokenCount > 64).length;
    expect(filled).toBeGreaterThan(chunks.length * 0.8);
  });

  it('keeps whole paragraphs together when they fit', () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) => sentences(2, `topic${p}`));
    const doc = plain(paragraphs.join('\n\n'));
    const chunks = chunkDocument(doc, { chunkSize: 100, chunkOverlap: 0 });
    expectValid(doc, chunks, 100);
    for (const c of chunks) for (const part of c.text.split('\n\n')) expect(paragraphs).toContain(part);
  });

  it('starts the next chunk with the last ~chunkOverlap tokens of the previous one, at a sentence start', () => {
    const doc = plain(sentences(60));
    const chunks = chunkDocument(doc, { chunkSize: 100, chunkOverlap: 30 });
    expect(chunks.length).toBeGreaterThan(3);
    expectValid(doc, chunks, 100);
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1] as Chunk;
      const c = chunks[i] as Chunk;
      expect(c.startOffset).toBeLessThan(end(prev));
      const overlap = doc.text.slice(c.startOffset, end(prev));
      expect(countTokens(overlap)).toBeLessThanOrEqual(30);
      expect(countTokens(overlap)).toBeGreaterThan(10);
      expect(c.text).toMatch(/^Sentence \d+ /);
      expect(doc.text.slice(c.startOffset - 2, c.startOffset)).toBe('. ');
    }
  });

  it('without overlap, chunks do not repeat text', () => {
    const doc = plain(sentences(60));
    const chunks = chunkDocument(doc, { chunkSize: 100, chunkOverlap: 0 });
    expectValid(doc, chunks, 100);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]?.startOffset).toBeGreaterThanOrEqual(end(chunks[i - 1] as Chunk));
    expect(chunks.map((c) => c.text).join(' ')).toBe(doc.text);
  });

  it('never crosses a heading nor carries overlap over one, and records the nearest heading', async () => {
    const md = await fixture('sample.md');
    const chunks = chunkDocument(md, { chunkSize: 512, chunkOverlap: 64 });
    expectValid(md, chunks, 512);
    expect(chunks.map((c) => c.section)).toEqual(['Support handbook', 'Refunds', 'Shipping', 'Contact']);
    expect(chunks[1]?.text).toMatch(/^## Refunds\n\nCustomers can ask for a refund/);
    expect(chunks.every((c) => c.pageNumber === undefined)).toBe(true);

    const long = `# Alpha\n\n${sentences(40, 'alpha')}\n\n## Beta\n\n${sentences(40, 'beta')}`;
    const doc: Doc = {
      text: long,
      sections: [
        { heading: 'Alpha', level: 1, offset: 0 },
        { heading: 'Beta', level: 2, offset: long.indexOf('## Beta') },
      ],
    };
    const small = chunkDocument(doc, { chunkSize: 64, chunkOverlap: 20 });
    expectValid(doc, small, 64);
    for (const c of small) {
      expect(c.text.includes('alpha') && c.text.includes('beta')).toBe(false);
      expect(c.section).toBe(c.text.includes('alpha') ? 'Alpha' : 'Beta');
    }
    const firstBeta = small.find((c) => c.section === 'Beta');
    expect(firstBeta?.text).toMatch(/^## Beta/);
  });

  it('joins a heading with nothing under it to the next section; text before the first heading has no section', () => {
    const text = 'Preface line.\n\n# Guide\n\n## Setup\n\nRun the installer.';
    const doc: Doc = {
      text,
      sections: [
        { heading: 'Guide', level: 1, offset: text.indexOf('# Guide') },
        { heading: 'Setup', level: 2, offset: text.indexOf('## Setup') },
      ],
    };
    const chunks = chunkDocument(doc, { chunkSize: 64, chunkOverlap: 8 });
    expect(chunks.map((c) => [c.section, c.text])).toEqual([
      [undefined, 'Preface line.'],
      ['Setup', '# Guide\n\n## Setup\n\nRun the installer.'],
    ]);
  });

  it('records the pages where each chunk starts and ends (pdf), also for chunks that run over a page end', async () => {
    const pdf = await fixture('sample.pdf');
    const small = chunkDocument(pdf, { chunkSize: 20, chunkOverlap: 0 });
    expectValid(pdf, small, 20);
    const pageOf = (needle: string) => small.find((c) => c.text.includes(needle))?.pageNumber;
    expect(pageOf('install the pump')).toBe(1);
    expect(pageOf('E1234')).toBe(2);
    expect(pageOf('six months')).toBe(3);
    expect(small.find((c) => c.text.includes('E1234'))?.section).toBe('Error codes');

    // Without outline sections a chunk may span pages; it carries the pages it starts and ends on.
    const pages = ['First page text. '.repeat(10).trim(), 'Second page text. '.repeat(10).trim(), 'Third page text. '.repeat(10).trim()];
    let text = '';
    const pageList = pages.map((t, i) => {
      if (i > 0) text += '\n\n';
      const page = { pageNumber: i + 1, text: t, offset: text.length };
      text += t;
      return page;
    });
    const doc: Doc = { text, sections: [], pages: pageList };
    const chunks = chunkDocument(doc, { chunkSize: 64, chunkOverlap: 10 });
    expectValid(doc, chunks, 64);
    const pageAt = (offset: number) => pageList.filter((p) => p.offset <= offset).at(-1)?.pageNumber;
    for (const c of chunks) {
      expect(c.pageNumber).toBe(pageAt(c.startOffset));
      // And the page it ends on: the one holding its last character.
      expect(c.pageEnd).toBe(pageAt(c.startOffset + c.text.length - 1));
    }
    const spanning = chunks.find((c) => c.text.includes('First') && c.text.includes('Second'));
    expect(spanning).toMatchObject({ pageNumber: 1, pageEnd: 2 });
    expect(chunks.filter((c) => c.pageEnd === c.pageNumber).length).toBeGreaterThan(0);
    // Documents without pages have neither.
    expect(chunkDocument({ text, sections: [] }, { chunkSize: 64, chunkOverlap: 10 }).every((c) => c.pageNumber === undefined && c.pageEnd === undefined)).toBe(true);
  });

  it('chunks a long document without headings, line breaks or punctuation within the limit, cutting between words', () => {
    const words = ['pump', 'valve', 'filter', 'pressure', 'seal', 'motor', 'inlet', 'outlet'];
    const text = Array.from({ length: 40_000 }, (_, i) => `${words[i % 8]}${i % 97}`).join(' ');
    const doc = plain(text);
    const started = performance.now();
    const chunks = chunkDocument(doc, { chunkSize: 256, chunkOverlap: 32 });
    expect(performance.now() - started).toBeLessThan(5000);
    expectValid(doc, chunks, 256);
    expect(chunks.length).toBeGreaterThan(100);
    for (const c of chunks) {
      // Whole words at both ends.
      expect(text[c.startOffset - 1] ?? ' ').toBe(' ');
      expect(text[end(c)] ?? ' ').toBe(' ');
      expect(c.tokenCount).toBeGreaterThan(150);
    }
  });

  it('hard-cuts text without any whitespace, still within the limit, quickly', () => {
    const doc = plain(`Intro words. ${'x'.repeat(300_000)}`);
    const started = performance.now();
    const chunks = chunkDocument(doc, { chunkSize: 64, chunkOverlap: 8 });
    expect(performance.now() - started).toBeLessThan(5000);
    expectValid(doc, chunks, 64);
    expect(chunks.length).toBeGreaterThan(300);
  });

  it('chunks CJK text, with and without sentence punctuation, keeping surrogate pairs whole', () => {
    const withPunctuation = plain('水泵需要每个月检查一次。如果发现漏水，请立即关闭电源！'.repeat(120));
    const a = chunkDocument(withPunctuation, { chunkSize: 64, chunkOverlap: 16 });
    expect(a.length).toBeGreaterThan(10);
    expectValid(withPunctuation, a, 64);
    // Chunks and overlaps start at a sentence start.
    for (const c of a.slice(1)) expect(c.text).toMatch(/^(水泵|如果)/);
    expect(a[1]?.startOffset).toBeLessThan(end(a[0] as Chunk));

    const emoji = plain('日本語のテキスト😀と絵文字🎉'.repeat(300));
    const b = chunkDocument(emoji, { chunkSize: 32, chunkOverlap: 8 });
    expect(b.length).toBeGreaterThan(10);
    expectValid(emoji, b, 32);
  });

  it('gives no chunks for empty or blank text, and is deterministic', () => {
    expect(chunkDocument(plain(''), { chunkSize: 64, chunkOverlap: 8 })).toEqual([]);
    expect(chunkDocument(plain('  \n\n \t'), { chunkSize: 64, chunkOverlap: 8 })).toEqual([]);
    const doc = plain(`${sentences(40)}\n\n${'字'.repeat(500)}`);
    expect(chunkDocument(doc, { chunkSize: 80, chunkOverlap: 10 })).toEqual(chunkDocument(doc, { chunkSize: 80, chunkOverlap: 10 }));
  });

  it('holds the limit on the real fixtures at many sizes', async () => {
    for (const name of ['sample.md', 'sample.html', 'sample.pdf', 'sample.docx']) {
      const doc = await fixture(name);
      for (const [chunkSize, chunkOverlap] of [
        [16, 0],
        [16, 15],
        [24, 8],
        [512, 64],
      ] as const) {
        expectValid(doc, chunkDocument(doc, { chunkSize, chunkOverlap }), chunkSize);
      }
    }
  });

  it('refuses bad options with invalid_request', () => {
    const bad = [
      { chunkSize: 8, chunkOverlap: 0 },
      { chunkSize: 15, chunkOverlap: 0 },
      { chunkSize: 64.5, chunkOverlap: 0 },
      { chunkSize: 64, chunkOverlap: 64 },
      { chunkSize: 64, chunkOverlap: -1 },
      { chunkSize: 64, chunkOverlap: Number.NaN },
    ];
    for (const options of bad) {
      let error: unknown;
      try {
        chunkDocument(plain('a'), options);
      } catch (e) {
        error = e;
      }
      expect(isPlatformError(error) && error.code).toBe('invalid_request');
    }
    expect(() => chunkDocument(plain('a'), { chunkSize: 8, chunkOverlap: 0 })).toThrow(/chunkSize/);
    expect(() => chunkDocument(plain('a'), { chunkSize: 64, chunkOverlap: 64 })).toThrow(/chunkOverlap/);
    expect(chunkDocument(plain('a'), { chunkSize: 16, chunkOverlap: 15 })).toHaveLength(1);
  });
});

describe('chunkDocument on hostile text', () => {
  /** CPU milliseconds of `fn` (this process; other processes on the machine do not count). */
  const cpuMs = (fn: () => void) => {
    const before = process.cpuUsage();
    fn();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  };
  const md = (unit: string, bytes: number): Doc => ({ text: unit.repeat(Math.ceil(bytes / unit.length)), sections: [] });

  // What a security review sent: 4 MB of each took 5-6 s of the server's main thread, `#` ended
  // in "Maximum call stack size exceeded" (a hard cut re-split itself forever), and a long run
  // of spaces went to the tokenizer whole (byte-pair merging is quadratic in a run's length).
  it.each([
    ['`# h\\n` lines', '# h\n'],
    ['`. `', '. '],
    ['`#`', '#'],
    ['a word and 100,000 spaces', `word${' '.repeat(100_000)}`],
  ])('takes time linear in the length of %s: 4x the text, well under 16x the time', (_name, unit) => {
    countTokens('warm up the tokenizer');
    const small = md(unit, 256 * 1024);
    const large = md(unit, 1024 * 1024);
    let chunks: Chunk[] = [];
    // The best of two runs of each: a scheduler blip on this shared machine is not the algorithm.
    const smallMs = Math.min(
      cpuMs(() => (chunks = chunkDocument(small, { chunkSize: 512, chunkOverlap: 64 }))),
      cpuMs(() => chunkDocument(small, { chunkSize: 512, chunkOverlap: 64 })),
    );
    expectValid(small, chunks, 512);
    const largeMs = Math.min(
      cpuMs(() => chunkDocument(large, { chunkSize: 512, chunkOverlap: 64 })),
      cpuMs(() => chunkDocument(large, { chunkSize: 512, chunkOverlap: 64 })),
    );
    // Linear is 4; quadratic would be 16. Tolerant of noise and of small sizes' fixed costs.
    expect(largeMs / Math.max(smallMs, 20)).toBeLessThan(8);
  });

  // Six million characters without whitespace (under every documented limit) ended in "Maximum
  // call stack size exceeded" when one kind of character ran on for more than about 5.6 million:
  // the long runs were found by a regular expression that keeps one backtracking entry per
  // character of a run. They are now found in one pass (long-runs.ts).
  const UNBROKEN = ['word', 'zeros-base64', 'bundle', 'base64', 'minified'] as const;
  it.each(UNBROKEN)(
    'chunks 6 million characters of %s text without whitespace, every chunk within the limit',
    (kind) => {
      const doc = plain(unbrokenText(kind, 6_000_000));
      const chunks = chunkDocument(doc, { chunkSize: 512, chunkOverlap: 64 });
      expectValid(doc, chunks, 512);
      // At most 512 tokens of text a chunk, and never fewer than ~1 character a token.
      expect(chunks.length).toBeGreaterThan(6_000_000 / (512 * 128));
    },
    240_000,
  );

  it.each(UNBROKEN)(
    'takes time linear in the length of %s text without whitespace: 4x the text, well under 16x the time',
    (kind) => {
      countTokens('warm up the tokenizer');
      const small = plain(unbrokenText(kind, 375_000));
      const large = plain(unbrokenText(kind, 1_500_000));
      const options = { chunkSize: 512, chunkOverlap: 64 };
      const smallMs = Math.min(
        cpuMs(() => chunkDocument(small, options)),
        cpuMs(() => chunkDocument(small, options)),
      );
      const largeMs = Math.min(
        cpuMs(() => chunkDocument(large, options)),
        cpuMs(() => chunkDocument(large, options)),
      );
      expect(largeMs / Math.max(smallMs, 20)).toBeLessThan(8);
    },
    120_000,
  );

  it('cuts a run of one kind of character every 512 characters, and no chunk joins two such pieces', () => {
    const run = 'z'.repeat(2000);
    const doc = plain(`Before the run. ${run} after the run.`);
    const chunks = chunkDocument(doc, { chunkSize: 8192, chunkOverlap: 100 });
    expectValid(doc, chunks, 8192);
    // The run's pieces end chunks: none holds more than 512 of its characters.
    for (const c of chunks) expect(/z{513}/.test(c.text)).toBe(false);
    expect(chunks.map((c) => c.text.length)).toEqual([16 + 512, 512, 512, 464 + 15]);
  });

  it('fails a document that makes more than maxChunks chunks, naming the limit', () => {
    const doc = plain(sentences(400));
    let error: unknown;
    try {
      chunkDocument(doc, { chunkSize: 32, chunkOverlap: 0, maxChunks: 50 });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'the document makes more than 50 chunks of 32 tokens, over the limit of 50', details: { limit: 'maxChunks' } });
    expect(chunkDocument(doc, { chunkSize: 32, chunkOverlap: 0, maxChunks: 1000 }).length).toBeGreaterThan(50);
  });
});
