import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { isPlatformError } from '../src/errors.js';
import { detectLanguage, type ParsedDocument, parseDocument } from '../src/knowledge/parse/index.js';

const fixture = async (name: string) => new Uint8Array(await readFile(new URL(`fixtures/${name}`, import.meta.url)));
const utf8 = (s: string) => new TextEncoder().encode(s);

/** Each section's offset points at its heading in the text. */
function expectSectionsInText(doc: ParsedDocument) {
  for (const s of doc.sections)
    expect(
      doc.text
        .slice(s.offset)
        .replace(/^#+\s*/, '')
        .startsWith(s.heading),
    ).toBe(true);
}

async function invalid(promise: Promise<unknown>): Promise<{ code: string; message: string; details: unknown }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isPlatformError(error)).toBe(true);
  return error as { code: string; message: string; details: unknown };
}

describe('parseDocument: fixtures made by real tools', () => {
  it('reads a pdf made by pdfkit page by page, with its outline as sections and its info as metadata', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.pdf'), fileName: 'manual.pdf' });
    expect(doc.type).toBe('pdf');
    expect(doc.pageCount).toBe(3);
    expect(doc.pages?.map((p) => p.pageNumber)).toEqual([1, 2, 3]);
    const pages = doc.pages ?? [];
    expect(pages[0]?.text).toContain('install the pump on a flat surface');
    expect(pages[1]?.text).toContain('Error E1234 means the pump overheated');
    expect(pages[2]?.text).toContain('replace the filter every six months');
    expect(pages[0]?.text).not.toContain('E1234');
    for (const page of pages) expect(doc.text.slice(page.offset, page.offset + page.text.length)).toBe(page.text);
    // Paragraphs (a wider gap between lines) become blank lines.
    expect(pages[1]?.text).toMatch(/^Error codes\n\nPage two/);
    expect(doc.sections.map((s) => [s.heading, s.level])).toEqual([
      ['Installation', 1],
      ['Error codes', 1],
      ['Maintenance', 1],
    ]);
    expect(doc.sections.map((s) => s.offset)).toEqual(pages.map((p) => p.offset));
    expect(doc.metadata).toMatchObject({ title: 'Pump manual', author: 'ACME Pumps', creationDate: '2026-01-01T00:00:00.000Z' });
    expect(doc.language).toBe('en');
  });

  it('reads a docx made by the docx package: headings as sections, runs, lists and table rows', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.docx'), fileName: 'guide.docx' });
    expect(doc.type).toBe('docx');
    expect(doc.pages).toBeUndefined();
    expect(doc.sections.map((s) => [s.heading, s.level])).toEqual([
      ['Onboarding Guide', 1],
      ['Accounts', 2],
      ['Holidays', 2],
      ['Public holidays', 3],
    ]);
    expectSectionsInText(doc);
    expect(doc.text).toContain('Your laptop arrives on Monday. Ask the help desk for a VPN token.');
    expect(doc.text).toContain('Install the password manager.\nEnable two-factor authentication.');
    expect(doc.text).toContain("1 January | New Year's Day");
    const holidays = doc.sections[2]?.offset ?? -1;
    expect(doc.text.slice(holidays)).toMatch(/^Holidays\n\nEveryone gets 28 days of paid leave/);
    expect(doc.metadata).toEqual({ title: 'Onboarding Guide' });
    expect(doc.language).toBe('en');
  });

  it('keeps markdown as markdown; ATX and setext headings are sections, not inside code fences; front matter is metadata', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.md'), fileName: 'handbook.md' });
    expect(doc.type).toBe('md');
    expect(doc.sections.map((s) => [s.heading, s.level])).toEqual([
      ['Support handbook', 1],
      ['Refunds', 2],
      ['Shipping', 2],
      ['Contact', 2],
    ]);
    expect(doc.text.slice(doc.sections[1]?.offset)).toMatch(/^## Refunds\n\nCustomers can ask/);
    expect(doc.text.slice(doc.sections[3]?.offset)).toMatch(/^Contact\n-------/);
    expect(doc.text).toContain('# not a heading inside a code fence');
    expect(doc.text).toContain('Write to **support@example.com**');
    expect(doc.text.startsWith('# Support handbook')).toBe(true);
    expect(doc.metadata).toEqual({ title: 'Support handbook', frontMatter: { title: 'Support handbook', owner: 'support-team' } });
    expect(doc.language).toBe('en');
  });

  it('keeps front matter keys named like members of Object.prototype as plain fields', async () => {
    const doc = await parseDocument({ bytes: utf8('---\n__proto__: polluted\nconstructor: c\ntoString: t\ntitle: T\n---\n# Body\n'), fileName: 'a.md' });
    const front = doc.metadata.frontMatter as Record<string, unknown>;
    expect(Object.getPrototypeOf(front)).toBe(Object.prototype);
    expect(Object.keys(front)).toEqual(['__proto__', 'constructor', 'toString', 'title']);
    expect(Object.getOwnPropertyDescriptor(front, '__proto__')?.value).toBe('polluted');
    expect(JSON.parse(JSON.stringify(doc.metadata))).toEqual({ title: 'T', frontMatter: JSON.parse('{"__proto__":"polluted","constructor":"c","toString":"t","title":"T"}') });
  });

  it('reads html as readable text: no head, scripts, styles or nav; entities decoded; pre and tables kept', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.html'), fileName: 'notes.html' });
    expect(doc.type).toBe('html');
    expect(doc.text).toMatch(/^Release notes\n\nVersion 2\.4 adds dark mode & faster sync\.\n\nFixes/);
    expect(doc.text).toContain('Crash on startup fixed.\nLogin timeout raised to 60 seconds.');
    expect(doc.text).toContain('sync:\n  interval: 30s');
    expect(doc.text).toContain('Setting | Default\ntheme | dark');
    for (const dropped of ['secret', 'color: red', 'also dropped', 'Home', 'Release notes 2.4']) expect(doc.text).not.toContain(dropped);
    expect(doc.sections.map((s) => [s.heading, s.level])).toEqual([
      ['Release notes', 1],
      ['Fixes', 2],
      ['Configuration', 2],
    ]);
    expectSectionsInText(doc);
    expect(doc.metadata).toEqual({ title: 'Release notes 2.4' });
  });
});

describe('parseDocument: types and text', () => {
  it('reads plain text: UTF-8 with BOM, UTF-16 with BOM, windows-1252, CRLF', async () => {
    const txt = await parseDocument({ bytes: new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('caf\u00e9\r\nline two')]), fileName: 'a.txt' });
    expect(txt).toMatchObject({ type: 'txt', text: 'caf\u00e9\nline two', sections: [], metadata: {} });
    const utf16 = new Uint8Array([0xff, 0xfe, ...Buffer.from('na\u00efve', 'utf16le')]);
    expect((await parseDocument({ bytes: utf16, fileName: 'b.txt' })).text).toBe('na\u00efve');
    expect((await parseDocument({ bytes: new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x93, 0x41, 0x94]), fileName: 'c.txt' })).text).toBe('caf\u00e9 \u20ac\u201cA\u201d');
  });

  it('takes the type from fileType (extension, MIME or name) when the file name has no known extension', async () => {
    const md = utf8('# Title\n\nbody');
    expect((await parseDocument({ bytes: md, fileName: 'README', fileType: 'markdown' })).sections.map((s) => s.heading)).toEqual(['Title']);
    expect((await parseDocument({ bytes: md, fileName: 'README', fileType: 'text/markdown; charset=utf-8' })).type).toBe('md');
    expect((await parseDocument({ bytes: md, fileName: 'README', fileType: '.md' })).type).toBe('md');
    expect((await parseDocument({ bytes: md, fileName: 'notes.txt', fileType: 'text/markdown' })).type).toBe('txt');
    const pdf = await parseDocument({ bytes: await fixture('sample.pdf'), fileName: 'download', fileType: 'application/pdf' });
    expect(pdf.pageCount).toBe(3);
  });

  it('falls back to the language the file declares when the text is too short to tell', async () => {
    const doc = await parseDocument({ bytes: utf8('<html lang="de-AT"><body><p>Hallo</p></body></html>'), fileName: 'x.html' });
    expect(doc.language).toBe('de');
    expect((await parseDocument({ bytes: utf8('ok'), fileName: 'x.txt' })).language).toBeUndefined();
  });

  it('gives empty text for an empty file', async () => {
    expect(await parseDocument({ bytes: new Uint8Array(), fileName: 'empty.md' })).toMatchObject({ text: '', sections: [] });
  });
});

describe('parseDocument: files that are not what they claim', () => {
  it('refuses a .pdf that is not a PDF, or a broken one, naming the file', async () => {
    const fake = await invalid(parseDocument({ bytes: utf8('hello'), fileName: 'fake.pdf' }));
    expect(fake.code).toBe('invalid_request');
    expect(fake.message).toMatch(/^Invalid PDF file fake\.pdf: it does not start with a PDF header/);
    expect(fake.details).toEqual({ fileName: 'fake.pdf', fileType: 'pdf' });
    const docxAsPdf = await invalid(parseDocument({ bytes: await fixture('sample.docx'), fileName: 'report', fileType: 'application/pdf' }));
    expect(docxAsPdf.message).toMatch(/^Invalid PDF file report:/);
    const broken = await invalid(parseDocument({ bytes: utf8('%PDF-1.7 garbage'), fileName: 'broken.pdf' }));
    expect(broken).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Invalid PDF file broken\.pdf: /) });
  });

  it('refuses a .docx that is not a zip, or a zip that is not a docx', async () => {
    const fake = await invalid(parseDocument({ bytes: await fixture('sample.pdf'), fileName: 'fake.docx' }));
    expect(fake).toMatchObject({ code: 'invalid_request', message: 'Invalid DOCX file fake.docx: it is not a zip archive' });
    const truncated = (await fixture('sample.docx')).subarray(0, 200);
    const cut = await invalid(parseDocument({ bytes: truncated, fileName: 'cut.docx' }));
    expect(cut).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^Invalid DOCX file cut\.docx: /) });
  });

  it('refuses binary data claimed as text', async () => {
    const error = await invalid(parseDocument({ bytes: await fixture('sample.docx'), fileName: 'notes.md' }));
    expect(error).toMatchObject({ code: 'invalid_request', message: 'Invalid Markdown file notes.md: it holds binary data, not text' });
    await expect(parseDocument({ bytes: await fixture('sample.pdf'), fileName: 'x.txt' })).rejects.toThrow(/^Invalid text file x\.txt/);
  });

  it('refuses unsupported types, listing the supported ones', async () => {
    const error = await invalid(parseDocument({ bytes: new Uint8Array([1]), fileName: 'tool.exe' }));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toBe('Unsupported file type of tool.exe: supported are txt, md, html, pdf, docx');
    await expect(parseDocument({ bytes: new Uint8Array([1]), fileName: 'sheet', fileType: 'application/vnd.ms-excel' })).rejects.toThrow(
      /^Unsupported file type of sheet \(application\/vnd\.ms-excel\): supported are txt, md, html, pdf, docx$/,
    );
  });
});

describe('detectLanguage', () => {
  it('tells common languages apart by function words or script, and stays quiet on short text', () => {
    expect(detectLanguage('The pump is in the basement and it is checked every month for leaks.')).toBe('en');
    expect(detectLanguage('Die Pumpe ist im Keller und wird jeden Monat auf Lecks geprüft, das ist nicht schwer.')).toBe('de');
    expect(detectLanguage('La pompe est dans la cave et elle est vérifiée tous les mois pour les fuites.')).toBe('fr');
    expect(detectLanguage('La bomba está en el sótano y se revisa cada mes para ver si hay fugas con el equipo.')).toBe('es');
    expect(detectLanguage('这是一个关于水泵维护的文档，每个月检查一次是否漏水。')).toBe('zh');
    expect(detectLanguage('このポンプは毎月点検されます。漏れがないか確認してください。')).toBe('ja');
    expect(detectLanguage('Насос находится в подвале и проверяется каждый месяц на утечки.')).toBe('ru');
    expect(detectLanguage('ok')).toBeUndefined();
    expect(detectLanguage('1234 5678 90 12 34 56 78 90 12 34 56 78')).toBeUndefined();
  });
});
