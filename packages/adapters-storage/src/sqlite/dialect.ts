import { sql } from 'kysely';
import { insertChunksInBatches } from '../kysely/chunk-writes.js';
import type { StorageDialect } from '../kysely/dialect.js';

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
  isUniqueViolation: (error) =>
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE',
  // The insert triggers on `chunks` fill the keyword index.
  replaceChunks: insertChunksInBatches,
  keywords: {
    async search(db, projectId, terms, limit) {
      // Terms are letters and digits only, quoted: no FTS5 query syntax can get through.
      const match = terms.map((t) => `"${t}"`).join(' OR ');
      const rows = await sql<{ id: string; rank: number }>`
        select c.id as id, bm25(chunks_fts) as rank
        from chunks_fts join chunks c on c.row_id = chunks_fts.rowid
        where chunks_fts match ${match} and c.project_id = ${projectId}
        order by rank limit ${limit}`.execute(db);
      // FTS5's bm25() is lower-is-better (negative); flip it so higher is better.
      return rows.rows.map((r) => ({ id: r.id, score: -r.rank }));
    },
  },
  skipLocked: false,
};
