import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { detectLanguage, parseDocument } from '../src/knowledge/parse.js';

const fixture = async (name: string) => new Uint8Array(await readFile(new URL(`fixtures/${name}`, import.meta.url)));

describe('parseDocument', () => {
  it('reads a pdf made by pdfkit page by page', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.pdf'), fileName: 'manual.pdf' });
    expect(doc.type).toBe('pdf');
    expect(doc.pageCount).toBe(3);
    expect(doc.pageOffsets).toHaveLength(3);
    const page = (n: number) => doc.text.slice(doc.pageOffsets?.[n - 1], doc.pageOffsets?.[n]);
    expect(page(1)).toContain('install the pump');
    expect(page(2)).toContain('Error E1234 means the pump overheated');
    expect(page(3)).toContain('replace the filter every six months');
    expect(doc.language).toBe('en');
  });

  it('reads a docx made by the docx package, keeping headings as sections', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.docx'), fileName: 'guide.docx' });
    expect(doc.type).toBe('docx');
    expect(doc.sections.map((s) => [s.heading, s.level])).toEqual([
      ['Onboarding Guide', 1],
      ['Accounts', 2],
      ['Holidays', 2],
    ]);
    expect(doc.text).toContain('Ask the help desk for a VPN token.');
    const holidays = doc.sections[2]?.offset ?? -1;
    expect(doc.text.slice(holidays)).toMatch(/^Holidays\s+Everyone gets 28 days/);
  });

  it('reads markdown headings (not inside code fences)', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.md'), fileName: 'handbook.md' });
    expect(doc.sections.map((s) => s.heading)).toEqual(['Support handbook', 'Refunds', 'Shipping']);
    expect(doc.text.slice(doc.sections[1]?.offset)).toMatch(/^## Refunds/);
  });

  it('reads html as text without scripts and styles, headings as sections, entities decoded', async () => {
    const doc = await parseDocument({ bytes: await fixture('sample.html'), fileName: 'notes.html' });
    expect(doc.text).toContain('Version 2.4 adds dark mode & faster sync.');
    expect(doc.text).toContain('Login timeout raised to 60 seconds.');
    expect(doc.text).not.toContain('secret');
    expect(doc.text).not.toContain('color: red');
    expect(doc.sections.map((s) => s.heading)).toEqual(['Release notes', 'Fixes']);
  });

  it('takes the type from fileType when the name has no known extension', async () => {
    const doc = await parseDocument({ bytes: new TextEncoder().encode('# Title\n\nbody'), fileName: 'README', fileType: 'markdown' });
    expect(doc.sections.map((s) => s.heading)).toEqual(['Title']);
  });

  it('refuses a .pdf that is not a PDF, a .docx that is not a zip, binary text and unknown types', async () => {
    await expect(parseDocument({ bytes: new TextEncoder().encode('hello'), fileName: 'fake.pdf' })).rejects.toThrow(/Invalid PDF file fake.pdf/);
    await expect(parseDocument({ bytes: new TextEncoder().encode('%PDF-1.7 garbage'), fileName: 'broken.pdf' })).rejects.toThrow(/Invalid PDF file broken.pdf/);
    await expect(parseDocument({ bytes: new TextEncoder().encode('hello'), fileName: 'fake.docx' })).rejects.toThrow(/Invalid DOCX file fake.docx/);
    await expect(parseDocument({ bytes: new Uint8Array([0xff, 0xfe, 0x00, 0xd8]), fileName: 'x.txt' })).rejects.toThrow(/not UTF-8/);
    await expect(parseDocument({ bytes: new Uint8Array([1]), fileName: 'tool.exe' })).rejects.toThrow(/Unsupported file type of tool.exe: supported are txt, md, html, pdf, docx/);
  });
});

describe('detectLanguage', () => {
  it('tells common languages apart and stays quiet on short text', () => {
    expect(detectLanguage('The pump is in the basement and it is checked every month for leaks.')).toBe('en');
    expect(detectLanguage('Die Pumpe ist im Keller und wird jeden Monat auf Lecks geprüft, das ist nicht schwer.')).toBe('de');
    expect(detectLanguage('La pompe est dans la cave et elle est vérifiée tous les mois pour les fuites.')).toBe('fr');
    expect(detectLanguage('这是一个关于水泵维护的文档，每个月检查一次是否漏水。')).toBe('zh');
    expect(detectLanguage('ok')).toBeUndefined();
  });
});
