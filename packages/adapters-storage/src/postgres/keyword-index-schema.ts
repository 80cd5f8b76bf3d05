import { type Kysely, sql } from 'kysely';

/**
 * The keyword index: each chunk's analyzed terms with their counts (`chunk_terms`, the posting
 * lists BM25 reads), its length in terms (`chunk_lengths`), and the index's totals
 * (`keyword_stats`: chunks and terms, which give BM25's row count and average length). Rows go
 * with their chunk (cascade); the totals follow `chunk_lengths` by statement triggers. Totals
 * are kept in 16 slots (a document's chunks all count in one, chosen from its id) so that
 * instances indexing different documents rarely wait on the same row.
 */
export async function createKeywordIndex(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chunk_terms')
    .addColumn('term', 'text', (c) => c.notNull())
    .addColumn('chunk_row_id', 'bigint', (c) => c.notNull().references('chunks.row_id').onDelete('cascade'))
    .addColumn('frequency', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('chunk_terms_pk', ['term', 'chunk_row_id'])
    .execute();
  await db.schema.createIndex('chunk_terms_chunk').on('chunk_terms').column('chunk_row_id').execute();
  await db.schema
    .createTable('chunk_lengths')
    .addColumn('chunk_row_id', 'bigint', (c) => c.primaryKey().references('chunks.row_id').onDelete('cascade'))
    .addColumn('slot', 'smallint', (c) => c.notNull())
    .addColumn('terms', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('keyword_stats')
    .addColumn('slot', 'smallint', (c) => c.primaryKey())
    .addColumn('chunks', 'bigint', (c) => c.notNull())
    .addColumn('terms', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create function keyword_stats_add() returns trigger language plpgsql as $$
    begin
      insert into keyword_stats (slot, chunks, terms)
        select slot, count(*), sum(terms) from added group by slot order by slot
      on conflict (slot) do update set chunks = keyword_stats.chunks + excluded.chunks, terms = keyword_stats.terms + excluded.terms;
      return null;
    end $$`.execute(db);
  await sql`create function keyword_stats_remove() returns trigger language plpgsql as $$
    begin
      update keyword_stats s set chunks = s.chunks - g.n, terms = s.terms - g.t
        from (select slot, count(*) as n, sum(terms) as t from removed group by slot) g
        where s.slot = g.slot;
      return null;
    end $$`.execute(db);
  await sql`create trigger chunk_lengths_added after insert on chunk_lengths
    referencing new table as added for each statement execute function keyword_stats_add()`.execute(db);
  await sql`create trigger chunk_lengths_removed after delete on chunk_lengths
    referencing old table as removed for each statement execute function keyword_stats_remove()`.execute(db);
}
