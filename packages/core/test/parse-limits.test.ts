import { describe, expect, it } from 'vitest';
import { xmlDepthOver } from '../src/knowledge/docx-archive.js';
import { DEFAULT_DOCUMENT_LIMITS } from '../src/knowledge/limits.js';
import { MAX_HEADING_CHARS, parseDocument } from '../src/knowledge/parse/index.js';
import { deepDocx, docx, docxBomb, manyPagesPdf, repeated } from '../src/testing/bombs.js';

// The limits parseDocument applies itself (time and memory bound the process it runs in; see
// document-processes.test.ts). Each over-limit document fails with payload_too_large, a message
// that says what was found and the limit, and `details.limit` naming it.

const utf8 = (s: string) => new TextEncoder().encode(s);

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'expected a failure').toBeDefined();
  return error as { code: string; message: string; details: Record<string, unknown> };
}

/** CPU milliseconds of `fn` (this process only). */
async function cpuMs(fn: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

describe('DOCX: unpacked under a budget', () => {
  it('refuses a zip bomb (document.xml inflating to 100 MB) from the sizes it declares, before inflating anything', async () => {
    const bomb = docxBomb();
    expect(bomb.length).toBeLessThan(512 * 1024);
    let error: Awaited<ReturnType<typeof failure>> | undefined;
    const ms = await cpuMs(async () => {
      error = await failure(parseDocument({ bytes: bomb, fileName: 'bomb.docx' }));
    });
    expect(error).toMatchObject({
      code: 'payload_too_large',
      message: expect.stringMatching(/^the DOCX unpacks to 10\d{7} bytes, over the limit of 67108864$/),
      details: { limit: 'maxUnzippedBytes', max: 67_108_864 },
    });
    // Nothing was inflated: reading the zip's directory takes a small part of what inflating up
    // to the limit takes (the baseline: an archive that lies about its sizes is inflated until
    // its budget ends, then refused).
    const inflated = await cpuMs(() => failure(parseDocument({ bytes: docxBomb({ declaredSize: 1000 }), fileName: 'liar.docx' })));
    expect(ms / inflated).toBeLessThan(0.25);
  });

  it('stops inflating where the budget ends when the archive lies about its sizes', async () => {
    const liar = docxBomb({ declaredSize: 1000 });
    const error = await failure(parseDocument({ bytes: liar, fileName: 'liar.docx' }));
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'the DOCX unpacks to more than 67108864 bytes, over the limit of 67108864', details: { limit: 'maxUnzippedBytes' } });
    // The same file under a budget that fits it would be read.
    const small = docxBomb({ inflatedBytes: 200_000, declaredSize: 10 });
    const doc = await parseDocument({ bytes: small, fileName: 'small.docx' });
    expect(doc.text).toMatch(/^All work and no play makes Jack a dull boy\.\n\nAll work/);
    await expect(parseDocument({ bytes: small, fileName: 'small.docx' }, { maxUnzippedBytes: 100_000 })).rejects.toMatchObject({ details: { limit: 'maxUnzippedBytes' } });
  });

  it('refuses XML nested deeper than maxNesting (mammoth converts it recursively), reads it below', async () => {
    const error = await failure(parseDocument({ bytes: deepDocx(2000), fileName: 'deep.docx' }));
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'the DOCX part word/document.xml nests elements 513 deep, over the limit of 512', details: { limit: 'maxNesting' } });
    expect((await parseDocument({ bytes: deepDocx(400), fileName: 'ok.docx' })).text).toBe('Deep inside.');
    expect((await parseDocument({ bytes: deepDocx(400), fileName: 'ok.docx' }, { maxNesting: 100 }).catch((e) => e)).details).toEqual({ limit: 'maxNesting', max: 100 });
  });

  it('measures XML depth in one pass, not counting comments, CDATA, declarations, self-closing tags or > inside attributes', () => {
    const xml = (s: string) => Buffer.from(s);
    expect(xmlDepthOver(xml('<?xml version="1.0"?><a><b x="1>2"><c/><!-- <d><d><d> --><![CDATA[<e><e><e>]]></b></a>'), 2)).toBe(0);
    expect(xmlDepthOver(xml('<a><b><c/></b></a>'), 1)).toBe(2);
    expect(xmlDepthOver(xml('<a/><a/><a/><a><b></b></a>'), 2)).toBe(0);
  });

  it('still reads an ordinary docx, and an invalid one is an invalid file', async () => {
    const doc = await parseDocument({ bytes: docx('<w:p><w:r><w:t>Hello from a tiny docx.</w:t></w:r></w:p>'), fileName: 'tiny.docx' });
    expect(doc.text).toBe('Hello from a tiny docx.');
    const zipOfNothing = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]);
    expect(await failure(parseDocument({ bytes: zipOfNothing, fileName: 'x.docx' }))).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Invalid DOCX file x\.docx: /) });
  });
});

describe('PDF, HTML, markdown and text', () => {
  it('refuses a PDF of more pages than maxPages before reading any page', async () => {
    const error = await failure(parseDocument({ bytes: manyPagesPdf(3000), fileName: 'book.pdf' }));
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'the PDF has 3000 pages, over the limit of 2000', details: { limit: 'maxPages', max: 2000 } });
    const small = await parseDocument({ bytes: manyPagesPdf(3), fileName: 'three.pdf' }, { maxPages: 3 });
    expect(small.pages?.map((p) => p.text)).toEqual(['Page text.', 'Page text.', 'Page text.']);
  });

  it('refuses HTML nested deeper than maxNesting: 2.6 MB of <div> fails at once instead of taking minutes', async () => {
    const divs = repeated('<div>', 2.6e6);
    let error: Awaited<ReturnType<typeof failure>> | undefined;
    const ms = await cpuMs(async () => {
      error = await failure(parseDocument({ bytes: divs, fileName: 'divs.html' }));
    });
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'the HTML nests elements 513 deep, over the limit of 512', details: { limit: 'maxNesting' } });
    expect(ms).toBeLessThan(2000);
    // Closed elements do not add up, however many.
    expect((await parseDocument({ bytes: repeated('<div>a</div>', 1e5), fileName: 'flat.html' })).text.length).toBeGreaterThan(1000);
  });

  it('parses HTML and markdown in time linear in their length (4x the input, well under 16x the time)', async () => {
    // Elements 500 deep and then tags by the thousand (htmlparser2 shifts its array of open
    // elements at every tag); a heading of a million `[` (the link pattern scanned to the end of
    // the line from each one); a million one-letter headings.
    const inputs: [string, string, string][] = [
      ['deep.html', '<div>'.repeat(500), '<span>x</span>'],
      ['links.md', '# ', '['],
      ['headings.md', '', '# h\n'],
    ];
    for (const [fileName, head, unit] of inputs) {
      const run = (bytes: number) => cpuMs(() => parseDocument({ bytes: Buffer.concat([Buffer.from(head), repeated(unit, bytes)]), fileName }));
      await run(64 * 1024);
      const small = Math.min(await run(256 * 1024), await run(256 * 1024));
      const large = Math.min(await run(1024 * 1024), await run(1024 * 1024));
      expect(large / Math.max(small, 20), fileName).toBeLessThan(8);
    }
  });

  it('clips headings to a few hundred characters (they go into every chunk of their section)', async () => {
    const long = `# ${'word '.repeat(2000)}\n\nbody`;
    const doc = await parseDocument({ bytes: utf8(long), fileName: 'long.md' });
    expect(doc.sections[0]?.heading.length).toBeLessThanOrEqual(MAX_HEADING_CHARS + 1);
    expect(doc.sections[0]?.heading).toMatch(/^word word .*…$/);
    const html = await parseDocument({ bytes: utf8(`<h1>${'Title '.repeat(5000)}</h1><p>body</p>`), fileName: 'long.html' });
    expect(html.sections[0]?.heading.length).toBeLessThanOrEqual(MAX_HEADING_CHARS + 1);
  });

  it('refuses a document whose text is longer than maxTextLength', async () => {
    const error = await failure(parseDocument({ bytes: repeated('abc ', 4000), fileName: 'a.txt' }, { maxTextLength: 1000 }));
    expect(error).toMatchObject({ code: 'payload_too_large', message: 'the text document has 4000 characters of text, over the limit of 1000', details: { limit: 'maxTextLength' } });
    expect(DEFAULT_DOCUMENT_LIMITS.maxTextLength).toBe(32 * 1024 * 1024);
  });
});
