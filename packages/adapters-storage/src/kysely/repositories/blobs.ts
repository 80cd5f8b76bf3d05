import type { BlobStore } from '@agent-platform/core';
import { checkBlobKey } from '../../blobs/index.js';
import type { RepositoryContext } from './context.js';

/**
 * Blobs in the database's `blobs` table (`bytea` on PostgreSQL, `blob` on SQLite), so every
 * instance on one database reads what any of them stored. A put of an existing key replaces its
 * bytes in one statement: a reader sees the old bytes or the new, never a mix.
 */
export function databaseBlobStore({ db, dialect }: Pick<RepositoryContext, 'db' | 'dialect'>): BlobStore {
  return {
    async put(key, bytes) {
      checkBlobKey(key);
      // pg binds a Buffer as bytea; better-sqlite3 binds it as a blob.
      const value = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      await db
        .insertInto('blobs')
        .values({ key, bytes: value, created_at: dialect.time(new Date()) })
        .onConflict((oc) => oc.column('key').doUpdateSet({ bytes: value }))
        .execute();
    },
    async get(key) {
      checkBlobKey(key);
      const row = await db.selectFrom('blobs').select('bytes').where('key', '=', key).executeTakeFirst();
      // Both drivers read a blob into a Buffer of its own, handed on as it is (no second copy).
      return row?.bytes;
    },
    async delete(key) {
      checkBlobKey(key);
      const result = await db.deleteFrom('blobs').where('key', '=', key).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
