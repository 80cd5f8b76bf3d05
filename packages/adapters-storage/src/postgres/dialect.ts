import type { StorageDialect } from '../kysely/dialect.js';
import { replacePostgresChunks } from './chunk-writes.js';
import { postgresKeywordIndex } from './keyword-index.js';

/**
 * PostgreSQL's side of the storage: `timestamptz`, `boolean` and `json` columns take and give
 * JavaScript's own values through pg (JSON is written as its text and read back parsed), ILIKE
 * for case-insensitive matching, SQLSTATE 23505 for a UNIQUE violation, a keyword index of
 * terms computed in TypeScript (keyword-index.ts), and chunks written with it in one statement
 * per document (chunk-writes.ts).
 */
export const postgresDialect: StorageDialect = {
  time: (date) => date,
  flag: (value) => value,
  readJson: (value) => value,
  caseInsensitiveLike: 'ilike',
  // 23505 is also a primary key's violation: its constraint is named <table>_pkey.
  isUniqueViolation: (error) => {
    const e = error as { code?: unknown; constraint?: unknown } | null;
    return typeof e === 'object' && e !== null && e.code === '23505' && !String(e.constraint ?? '').endsWith('_pkey');
  },
  keywords: postgresKeywordIndex,
  replaceChunks: replacePostgresChunks,
  skipLocked: true,
};
