import { bm25Relative, keywordTerms } from '@agent-platform/core/internal';
import { sql } from 'kysely';
import { type KeywordIndex, keywordCeiling } from '../kysely/dialect.js';

const SLOTS = 16;
/** Which of keyword_stats' slots a document's chunks count in: a stable hash of its id. */
export function slotOf(documentId: string): number {
  let h = 0;
  for (let i = 0; i < documentId.length; i++) h = (h * 31 + documentId.charCodeAt(i)) | 0;
  return Math.abs(h) % SLOTS;
}

/**
 * The keyword index's rows of some chunks, as columns (one array per column, for `unnest`):
 * each chunk's length in terms (`chunk_lengths`), and its postings, one per distinct term with
 * its count (`chunk_terms`). Terms are core's analyzer's, the one SQLite's triggers call. Every
 * chunk has a length, also one of stop words only: it counts in N and the average length, as in
 * FTS5.
 */
export function keywordRows(chunks: readonly { readonly id: string; readonly text: string }[]) {
  const lengths = { ids: [] as string[], terms: [] as number[] };
  const postings = { ids: [] as string[], terms: [] as string[], frequencies: [] as number[] };
  for (const chunk of chunks) {
    const terms = keywordTerms(chunk.text);
    lengths.ids.push(chunk.id);
    lengths.terms.push(terms.length);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term, frequency] of counts) {
      postings.ids.push(chunk.id);
      postings.terms.push(term);
      postings.frequencies.push(frequency);
    }
  }
  return { lengths, postings };
}

/**
 * BM25 in SQL over terms computed here, in TypeScript, by core's analyzer (the one SQLite's
 * triggers call), with FTS5's formula and statistics so both databases rank alike: over the whole
 * index, N chunks of average length avgdl; a term in n of them has
 * idf = max(ln((N - n + 0.5) / (n + 0.5)), 1e-6); a chunk of length D with the term f times
 * scores idf · f · (k1 + 1) / (f + k1 · (1 - b + b · D / avgdl)), k1 1.2, b 0.75, summed over
 * the query's distinct terms, and is answered over the query's ceiling (`keywordCeiling`), as
 * SQLite's adapter does.
 */
export const postgresKeywordIndex: KeywordIndex = {
  async search(db, projectId, terms, limit) {
    const rows = await sql<{ id: string; score: number; total: number; frequencies: Record<string, number> }>`
      with stats as (
        select coalesce(sum(chunks), 0)::float8 as n, coalesce(sum(terms), 0)::float8 as total from keyword_stats
      ), hits as (
        select term, count(*)::float8 as n from chunk_terms where term = any(${terms}::text[]) group by term
      )
      select c.id,
        sum(
          greatest(ln((s.n - h.n + 0.5) / (h.n + 0.5)), 1e-6)
          * (t.frequency * 2.2) / (t.frequency + 1.2 * (0.25 + 0.75 * l.terms / (s.total / s.n)))
        ) as score,
        max(s.n) as total,
        (select coalesce(jsonb_object_agg(term, n), '{}'::jsonb) from hits) as frequencies
      from chunk_terms t
      join hits h on h.term = t.term
      join chunks c on c.row_id = t.chunk_row_id
      join chunk_lengths l on l.chunk_row_id = t.chunk_row_id
      cross join stats s
      where t.term = any(${terms}::text[]) and c.project_id = ${projectId}
      group by c.id
      order by score desc, c.id
      limit ${limit}`.execute(db);
    const first = rows.rows[0];
    if (!first) return [];
    const ceiling = keywordCeiling(terms, Number(first.total), first.frequencies);
    return rows.rows.map((r) => ({ id: r.id, score: bm25Relative(Number(r.score), ceiling) }));
  },
};
