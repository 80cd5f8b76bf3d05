import { bm25Relative } from '@agent-platform/core/internal';
import { sql } from 'kysely';
import { insertChunksInBatches } from '../kysely/chunk-writes.js';
import { keywordCeiling, type StorageDialect } from '../kysely/dialect.js';

/**
 * The keyword index's vocabulary (FTS5's `fts5vocab`, one row per term with the number of chunks
 * holding it): created in each connection's `temp` schema when it opens, so it is no part of the
 * database file.
 */
export const KEYWORD_VOCABULARY = 'chunks_fts_vocabulary';

/**
 * SQLite's side of the storage: timestamps as epoch milliseconds, flags as 1/0, JSON as text
 * (better-sqlite3 binds none of Date, boolean or objects), and the keyword index in FTS5, filled
 * by triggers on `chunks` through the keyword_terms() function (migration 0008).
 */
export const sqliteDialect: StorageDialect = {
  time: (date) => date.getTime(),
  flag: (value) => (value ? 1 : 0),
  readJson: (value) => JSON.parse(value as string),
  caseInsensitiveLike: 'like',
  // better-sqlite3 reports a UNIQUE index violation (not the primary key's) with this code.
  isUniqueViolation: (error) => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE',
  // The insert triggers on `chunks` fill the keyword index.
  replaceChunks: insertChunksInBatches,
  keywords: {
    async search(db, projectId, terms, limit) {
      // Terms are letters and digits only, quoted: no FTS5 query syntax can get through.
      const match = terms.map((t) => `"${t}"`).join(' OR ');
      // The statistics bm25() ranks with, read in the same statement (one snapshot): the rows of
      // the index (one per chunk, of every project) and each term's document frequency.
      const rows = await sql<{ id: string; rank: number; total: number; frequencies: string }>`
        select c.id as id, bm25(chunks_fts) as rank,
          (select count(*) from chunks) as total,
          (select json_group_object(term, doc) from temp.${sql.id(KEYWORD_VOCABULARY)} where term in (${sql.join(terms)})) as frequencies
        from chunks_fts join chunks c on c.row_id = chunks_fts.rowid
        where chunks_fts match ${match} and c.project_id = ${projectId}
        order by rank limit ${limit}`.execute(db);
      const first = rows.rows[0];
      if (!first) return [];
      const ceiling = keywordCeiling(terms, first.total, JSON.parse(first.frequencies) as Record<string, number>);
      // FTS5's bm25() is lower-is-better (negative); flip it so higher is better.
      return rows.rows.map((r) => ({ id: r.id, score: bm25Relative(-r.rank, ceiling) }));
    },
  },
  skipLocked: false,
};
