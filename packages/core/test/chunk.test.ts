import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chunkDocument, countTokens } from '../src/knowledge/chunk.js';
import { type ParsedDocument, parseDocument } from '../src/knowledge/parse.js';

const text = (t: string): ParsedDocument => ({ type: 'txt', text: t, sections: [] });
const sentences = (n: number, word = 'pump') =>
  Array.from({ length: n }, (_, i) => `Sentence ${i} talks about the ${word} number ${i} in some detail.`).join(' ');

describe('chunkDocument', () => {
  it('keeps every chunk within chunkSize tokens and covers all the text', () => {
    const doc = text(Array.from({ length: 30 }, (_, p) => sentences(8, `p${p}`)).join('\n\n'));
    const chunks = chunkDocument(doc, { chunkSize: 128, chunkOverlap: 16 });
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(128);
      expect(countTokens(c.text)).toBe(c.tokenCount);
    }
    expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
    for (let i = 0; i < 30; i++) expect(chunks.some((c) => c.text.includes(`p${i} number 7`))).toBe(true);
  });

  it('starts a chunk with the end of the previous one (overlap), at a sentence boundary', () => {
    const chunks = chunkDocument(text(sentences(60)), { chunkSize: 100, chunkOverlap: 30 });
    expect(chunks.length).toBeGreaterThan(3);
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1]?.text as string;
      const firstSentence = (chunks[i] as { text: string }).text.split(/(?<=\.)\s+/)[0] as string;
      expect(prev.endsWith(firstSentence) || prev.includes(firstSentence)).toBe(true);
      expect(firstSentence).toMatch(/^Sentence \d+/);
    }
  });

  it('without overlap, chunks do not repeat text', () => {
    const chunks = chunkDocument(text(sentences(60)), { chunkSize: 100, chunkOverlap: 0 });
    const joined = chunks.map((c) => c.text).join(' ');
    expect(joined.match(/Sentence 30 /g)).toHaveLength(1);
  });

  it('never crosses a heading, and records the section and the page', async () => {
    const md = await parseDocument({ bytes: await readFile(new URL('fixtures/sample.md', import.meta.url)), fileName: 'h.md' });
    const chunks = chunkDocument(md, { chunkSize: 512, chunkOverlap: 64 });
    expect(chunks.map((c) => c.section)).toEqual(['Support handbook', 'Refunds', 'Shipping']);
    expect(chunks[1]?.text).toMatch(/^## Refunds\n\nCustomers can ask for a refund/);

    const pdf = await parseDocument({ bytes: await readFile(new URL('fixtures/sample.pdf', import.meta.url)), fileName: 'm.pdf' });
    const small = chunkDocument(pdf, { chunkSize: 20, chunkOverlap: 0 });
    const pageOf = (needle: string) => small.find((c) => c.text.includes(needle))?.pageNumber;
    expect(pageOf('install the pump')).toBe(1);
    expect(pageOf('E1234')).toBe(2);
    expect(pageOf('six months')).toBe(3);
  });

  it('hard-cuts text without any break, still within the limit', () => {
    const chunks = chunkDocument(text('x'.repeat(20_000)), { chunkSize: 64, chunkOverlap: 8 });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(64);
  });

  it('chunks CJK text', () => {
    const cjk = '水泵需要每个月检查一次。'.repeat(200);
    const chunks = chunkDocument(text(cjk), { chunkSize: 64, chunkOverlap: 8 });
    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) expect(c.tokenCount).toBeLessThanOrEqual(64);
  });

  it('gives no chunks for empty text, and is deterministic', () => {
    expect(chunkDocument(text('  \n\n '), { chunkSize: 64, chunkOverlap: 8 })).toEqual([]);
    const doc = text(sentences(40));
    expect(chunkDocument(doc, { chunkSize: 80, chunkOverlap: 10 })).toEqual(chunkDocument(doc, { chunkSize: 80, chunkOverlap: 10 }));
  });

  it('refuses bad options', () => {
    expect(() => chunkDocument(text('a'), { chunkSize: 8, chunkOverlap: 0 })).toThrow(/chunkSize/);
    expect(() => chunkDocument(text('a'), { chunkSize: 64, chunkOverlap: 64 })).toThrow(/chunkOverlap/);
  });
});
