import { createPacer } from '@agent-platform/core/internal';
import { sql } from 'kysely';
import { type ChunkWrite, chunkRow, vectorBytes } from '../kysely/chunk-writes.js';
import type { Db } from '../kysely/dialect.js';
import { keywordRows, slotOf } from './keyword-index.js';

/**
 * Chunks per statement: a document of up to this many chunks is written in one round trip. Its
 * arrays go as 12 parameters whatever their length; the bound keeps one statement's text and
 * the memory it takes on both sides within a few megabytes (~100 postings per chunk).
 */
const CHUNKS_PER_STATEMENT = 500;

/**
 * PostgreSQL's chunk writer: one statement per {@link CHUNKS_PER_STATEMENT} chunks, which deletes
 * the document's old rows (the first statement only) and inserts the chunk rows, their lengths
 * and postings (the keyword index, see keyword-index.ts) and their vectors, all from arrays
 * (`unnest`). Every statement is a round trip to the server and one more for its reply; the
 * per-table inserts this replaces were five (six with vectors) per 100 chunks, and their row
 * lists made each statement's text (and kysely's compiling of it) grow with the chunk.
 *
 * Order inside the statement: the old rows' delete runs to completion before the new rows are
 * read (the insert's rows wait on a count of what it deleted), so a chunk id the document had
 * before can be used again: PostgreSQL's unique check passes over rows this transaction
 * deleted. Their index entries and vectors go by the foreign keys' cascades at the end of the
 * statement, and touch only the old rows.
 */
export async function replacePostgresChunks(tx: Db, { documentId, chunks, embeddings }: ChunkWrite): Promise<void> {
  const pace = createPacer();
  const slot = slotOf(documentId);
  for (let start = 0; start === 0 || start < chunks.length; start += CHUNKS_PER_STATEMENT) {
    if (start > 0) await pace();
    const batch = chunks.slice(start, start + CHUNKS_PER_STATEMENT);
    const rows = batch.map((c) => chunkRow(c, documentId));
    const { lengths, postings } = keywordRows(batch);
    const vectors = embeddings ? embeddings.vectors.slice(start, start + batch.length).map((v) => vectorBytes(v)) : [];
    // The first statement also deletes the rows the document had; later ones add to its new rows.
    const gone = start === 0 ? sql`delete from chunks where document_id = ${documentId} returning 1` : sql`select 1 where false`;
    await sql`
      with gone as (${gone}),
      new_rows as (
        select r.* from unnest(
          ${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.project_id)}::text[], ${rows.map((r) => r.chunk_index)}::int[],
          ${rows.map((r) => r.text)}::text[], ${rows.map((r) => r.token_count)}::int[], ${rows.map((r) => r.metadata)}::json[]
        ) as r(id, project_id, chunk_index, text, token_count, metadata)
        where (select count(*) from gone) >= 0
      ),
      inserted as (
        insert into chunks (id, document_id, project_id, chunk_index, text, token_count, metadata)
        select id, ${documentId}, project_id, chunk_index, text, token_count, metadata from new_rows
        returning row_id, id
      ),
      lengths as (
        insert into chunk_lengths (chunk_row_id, slot, terms)
        select i.row_id, ${slot}, l.terms
        from unnest(${lengths.ids}::text[], ${lengths.terms}::int[]) as l(id, terms) join inserted i using (id)
      ),
      postings as (
        insert into chunk_terms (term, chunk_row_id, frequency)
        select p.term, i.row_id, p.frequency
        from unnest(${postings.ids}::text[], ${postings.terms}::text[], ${postings.frequencies}::int[]) as p(id, term, frequency) join inserted i using (id)
      )
      insert into chunk_embeddings (chunk_row_id, model, embedding)
      select i.row_id, ${embeddings?.model ?? ''}, e.embedding
      from unnest(${embeddings ? rows.map((r) => r.id) : []}::text[], ${vectors}::bytea[]) as e(id, embedding) join inserted i using (id)
    `.execute(tx);
  }
}
