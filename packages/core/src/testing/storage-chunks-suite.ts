import { beforeEach, expect, it } from 'vitest';
import type { StorageAdapter } from '../storage/types.js';
import { at, chunk, document, type StorageUnderTest } from './storage-rows.js';

/**
 * Chunks of the storage suite, inside its `knowledge` block (projects `proj_000001` of `user_a`
 * and `proj_000002` of `user_b` exist): atomic replacement, reads scoped to the project and the
 * owner, paging, stored vectors per embedding model, and BM25 keyword search.
 */
export function describeChunks(suite: StorageUnderTest): void {
  let storage: StorageAdapter;
  beforeEach(() => {
    storage = suite.current();
  });

  it('stores chunks, replaces them atomically, and deletes them with their document', async () => {
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 1, 'b'), chunk('doc_000001', 'proj_000001', 0, 'a')]);
    expect((await storage.chunks.listByDocument('doc_000001')).map((c) => c.text)).toEqual(['a', 'b']);
    await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 0, 'only')]);
    const listed = await storage.chunks.listByDocument('doc_000001');
    expect(listed).toEqual([chunk('doc_000001', 'proj_000001', 0, 'only')]);
    expect(await storage.chunks.getMany('proj_000001', ['chunk_doc_000001_0', 'missing'])).toEqual(listed);
    await storage.jobs.insert({ id: 'job_1', kind: 'index_document', documentId: 'doc_000001', tenant: 'user_a', payload: { content: 'x' }, createdAt: at(1) });
    expect(await storage.documents.delete('user_b', 'doc_000001')).toBe(false);
    expect(await storage.documents.delete('user_a', 'doc_000001')).toBe(true);
    expect(await storage.chunks.listByDocument('doc_000001')).toEqual([]);
    expect(await storage.chunks.getMany('proj_000001', ['chunk_doc_000001_0'])).toEqual([]);
    expect(await storage.chunks.get('user_a', 'chunk_doc_000001_0')).toBeUndefined();
    expect(await storage.jobs.list()).toEqual([]);
  });

  it('reads chunks and their vectors by id only within the project, and one chunk only for its owner', async () => {
    const v = (...values: number[]) => Float32Array.from(values);
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.documents.insert(document('user_b', 'proj_000002', 2));
    const mine = chunk('doc_000001', 'proj_000001', 0, 'mine');
    const theirs = chunk('doc_000002', 'proj_000002', 0, 'theirs');
    await storage.chunks.replaceForDocument('doc_000001', [mine], { model: 'test:m1', vectors: [v(1, 0)] });
    await storage.chunks.replaceForDocument('doc_000002', [theirs], { model: 'test:m1', vectors: [v(0, 1)] });
    // The ids a vector store answers may name another project's chunks: they are skipped.
    expect(await storage.chunks.getMany('proj_000001', [theirs.id, mine.id])).toEqual([mine]);
    expect(await storage.chunks.getMany('proj_000002', [mine.id])).toEqual([]);
    expect(await storage.chunks.getMany('proj_000404', [mine.id, theirs.id])).toEqual([]);
    expect(await storage.chunks.embeddingsById('proj_000001', [theirs.id, mine.id], 'test:m1')).toEqual(new Map([[mine.id, v(1, 0)]]));
    expect(await storage.chunks.embeddingsById('proj_000002', [mine.id], 'test:m1')).toEqual(new Map());
    // One chunk by id (what a citation points at): its owner's only.
    expect(await storage.chunks.get('user_a', mine.id)).toEqual(mine);
    expect(await storage.chunks.get('user_a', theirs.id)).toBeUndefined();
    expect(await storage.chunks.get('user_b', mine.id)).toBeUndefined();
    expect(await storage.chunks.get('user_a', 'chunk_missing')).toBeUndefined();
  });

  it("pages a document's chunks in document order, with their total", async () => {
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.documents.insert(document('user_a', 'proj_000001', 2));
    const texts = ['a', 'b', 'c', 'd', 'e'];
    // Stored out of order: pages follow the chunks' index, not the order of insertion.
    await storage.chunks.replaceForDocument(
      'doc_000001',
      [...texts.keys()].reverse().map((i) => chunk('doc_000001', 'proj_000001', i, texts[i] as string)),
    );
    await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000001', 0, 'other')]);
    const first = await storage.chunks.pageByDocument({ documentId: 'doc_000001', limit: 2, offset: 0 });
    expect([first.items.map((c) => c.text), first.total, first.start]).toEqual([['a', 'b'], 5, 0]);
    expect(first.items[0]).toEqual(chunk('doc_000001', 'proj_000001', 0, 'a'));
    const last = await storage.chunks.pageByDocument({ documentId: 'doc_000001', limit: 2, offset: 4 });
    expect([last.items.map((c) => c.text), last.total, last.start]).toEqual([['e'], 5, 4]);
    const past = await storage.chunks.pageByDocument({ documentId: 'doc_000001', limit: 2, offset: 10 });
    expect([past.items, past.total]).toEqual([[], 5]);
    expect(await storage.chunks.pageByDocument({ documentId: 'doc_missing', limit: 2, offset: 0 })).toEqual({ items: [], total: 0, start: 0 });
  });

  it('keeps chunk vectors per embedding model, replaces them with the chunks, and deletes them with the document and the project', async () => {
    const v = (...values: number[]) => Float32Array.from(values);
    const c1 = (index: number, text: string) => chunk('doc_000001', 'proj_000001', index, text);
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.documents.insert(document('user_a', 'proj_000001', 2));
    const input = v(1, 0, 0.5);
    await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'a'), c1(1, 'b')], { model: 'test:m1', vectors: [input, v(0, 1, -0.25)] });
    await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000001', 0, 'a')], { model: 'test:m1', vectors: [v(9, 9, 9)] });
    input[0] = 7; // copied in
    const stored = await storage.chunks.embeddingsByText('doc_000001', 'test:m1');
    expect(stored).toEqual(
      new Map([
        ['a', v(1, 0, 0.5)],
        ['b', v(0, 1, -0.25)],
      ]),
    );
    (stored.get('a') as Float32Array)[0] = 7; // copied out
    expect((await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).get('a')).toEqual(v(1, 0, 0.5));
    expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m2')).toEqual(new Map());
    // By chunk id (MMR's keyword-only candidates): only that model's, unknown ids skipped.
    const byId = await storage.chunks.embeddingsById('proj_000001', [c1(1, 'b').id, 'chunk_missing', chunk('doc_000002', 'proj_000001', 0, 'a').id], 'test:m1');
    expect(byId).toEqual(
      new Map([
        [c1(1, 'b').id, v(0, 1, -0.25)],
        ['chunk_doc_000002_0', v(9, 9, 9)],
      ]),
    );
    expect(await storage.chunks.embeddingsById('proj_000001', [c1(1, 'b').id], 'test:m2')).toEqual(new Map());
    expect(await storage.chunks.embeddingsById('proj_000001', [], 'test:m1')).toEqual(new Map());
    // Chunk reads carry no vectors.
    expect(await storage.chunks.listByDocument('doc_000001')).toEqual([c1(0, 'a'), c1(1, 'b')]);
    expect(await storage.chunks.getMany('proj_000001', [c1(0, 'a').id])).toEqual([c1(0, 'a')]);
    expect(await storage.chunks.get('user_a', c1(0, 'a').id)).toEqual(c1(0, 'a'));

    await expect(storage.chunks.replaceForDocument('doc_000001', [c1(0, 'x')], { model: 'test:m1', vectors: [] })).rejects.toThrow();
    expect((await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).size).toBe(2);
    await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'b'), c1(1, 'c')], { model: 'test:m2', vectors: [v(2), v(3)] });
    expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).toEqual(new Map());
    expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m2')).toEqual(
      new Map([
        ['b', v(2)],
        ['c', v(3)],
      ]),
    );
    await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'c')]);
    expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m2')).toEqual(new Map());
    expect(await storage.chunks.embeddingsByText('doc_000002', 'test:m1')).toEqual(new Map([['a', v(9, 9, 9)]]));

    await storage.chunks.replaceForDocument('doc_000001', [c1(0, 'd')], { model: 'test:m1', vectors: [v(4)] });
    expect(await storage.documents.delete('user_a', 'doc_000001')).toBe(true);
    expect(await storage.chunks.embeddingsByText('doc_000001', 'test:m1')).toEqual(new Map());
    expect(await storage.projects.delete('user_a', 'proj_000001')).toBe(true);
    expect(await storage.chunks.embeddingsByText('doc_000002', 'test:m1')).toEqual(new Map());
  });

  it('tells whether a project has any chunk', async () => {
    expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.documents.insert(document('user_b', 'proj_000002', 2));
    expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
    await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000002', 0, 'elsewhere')]);
    expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
    await storage.chunks.replaceForDocument('doc_000001', [chunk('doc_000001', 'proj_000001', 0, 'here')]);
    expect(await storage.chunks.anyInProject('proj_000001')).toBe(true);
    await storage.chunks.replaceForDocument('doc_000001', []);
    expect(await storage.chunks.anyInProject('proj_000001')).toBe(false);
    expect(await storage.chunks.anyInProject('proj_000002')).toBe(true);
  });

  it('ranks keyword matches by BM25 within a project, ignoring query syntax', async () => {
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.documents.insert(document('user_b', 'proj_000002', 2));
    await storage.chunks.replaceForDocument('doc_000001', [
      chunk('doc_000001', 'proj_000001', 0, 'The error code E1234 means the pump overheated'),
      chunk('doc_000001', 'proj_000001', 1, 'Pump maintenance schedule: every pump is checked monthly, pump pump'),
      chunk('doc_000001', 'proj_000001', 2, 'Nothing relevant here at all'),
    ]);
    await storage.chunks.replaceForDocument('doc_000002', [chunk('doc_000002', 'proj_000002', 0, 'E1234 in another project')]);
    const code = await storage.chunks.keywordSearch('proj_000001', 'error E1234?', 10);
    expect(code.map((h) => h.id)).toEqual(['chunk_doc_000001_0']);
    expect(code[0]?.score).toBeGreaterThan(0);
    const pump = await storage.chunks.keywordSearch('proj_000001', 'pump', 10);
    expect(pump.map((h) => h.id)).toEqual(['chunk_doc_000001_1', 'chunk_doc_000001_0']);
    expect(await storage.chunks.keywordSearch('proj_000001', '"unbalanced AND (OR * NEAR', 10)).toEqual([]);
    expect(await storage.chunks.keywordSearch('proj_000001', '  ?! ', 10)).toEqual([]);
    expect(await storage.chunks.keywordSearch('proj_000001', 'pump', 1)).toHaveLength(1);
  });

  it('scores keyword matches in 0..1 against the best the query could score, the same match alike in every query', async () => {
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.chunks.replaceForDocument('doc_000001', [
      chunk('doc_000001', 'proj_000001', 0, 'The pump overheated and stopped'),
      chunk('doc_000001', 'proj_000001', 1, 'Garden tools and a watering can'),
      chunk('doc_000001', 'proj_000001', 2, 'Opening hours of the shop'),
    ]);
    const score = async (query: string) => (await storage.chunks.keywordSearch('proj_000001', query, 10)).find((h) => h.id === 'chunk_doc_000001_0')?.score as number;
    const pump = await score('pump');
    expect(pump).toBeGreaterThan(0.2);
    expect(pump).toBeLessThanOrEqual(1);
    // "garden" is another chunk's: the pump chunk answers half the question, and scores so.
    expect(await score('pump garden')).toBeLessThan(pump * 0.6);
    // A word no chunk holds cannot be matched: it changes nothing.
    expect(await score('pump zebra')).toBeCloseTo(pump, 9);
    // "a" is a stop word: it matches nothing, however many texts hold it.
    expect(await storage.chunks.keywordSearch('proj_000001', 'a', 10)).toEqual([]);
    for (const hit of await storage.chunks.keywordSearch('proj_000001', 'pump garden shop hours tools', 10)) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1);
    }
  });

  it('matches word forms (stems), ignores stop words and accents in keyword search', async () => {
    await storage.documents.insert(document('user_a', 'proj_000001', 1));
    await storage.chunks.replaceForDocument('doc_000001', [
      chunk('doc_000001', 'proj_000001', 0, 'Earlier studies showed that the kinase inhibitors were effective'),
      chunk('doc_000001', 'proj_000001', 1, 'The and of which were there, a the is'),
      chunk('doc_000001', 'proj_000001', 2, 'One study of pumps at the Café Zürich'),
    ]);
    const ids = async (query: string) => (await storage.chunks.keywordSearch('proj_000001', query, 10)).map((h) => h.id);
    // "studied" meets "studies" and "study"; "inhibitor" meets "inhibitors": chunk 0 has both.
    expect(await ids('studied inhibitor')).toEqual(['chunk_doc_000001_0', 'chunk_doc_000001_2']);
    expect(await ids('pump')).toEqual(['chunk_doc_000001_2']);
    expect(await ids('cafe zurich')).toEqual(['chunk_doc_000001_2']);
    // Only stop words: nothing to match (chunk 1 is all stop words and never matches).
    expect(await ids('the and of which')).toEqual([]);
  });
}
