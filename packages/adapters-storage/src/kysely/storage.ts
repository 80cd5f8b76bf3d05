import type { BlobStore, StorageAdapter } from '@agent-platform/core';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import type { Db, StorageDialect } from './dialect.js';
import { createRecords } from './records.js';
import { accountRepositories } from './repositories/accounts.js';
import { approvalRepository } from './repositories/approvals.js';
import { auditRepository } from './repositories/audit.js';
import { databaseBlobStore } from './repositories/blobs.js';
import { conversationRepositories } from './repositories/conversations.js';
import { jobRepository } from './repositories/jobs.js';
import { knowledgeRepositories } from './repositories/knowledge.js';
import { responseRepository } from './repositories/responses.js';
import { streamRepository } from './repositories/streams.js';

/** A storage in a database, with a blob store in the same database (`blobs` table). */
export interface DatabaseStorage extends StorageAdapter {
  /** Blobs every process on this database reaches (the server's PostgreSQL mode keeps uploads and posted texts here). */
  readonly blobs: BlobStore;
}

/**
 * A `StorageAdapter` over a migrated kysely database: the shared repositories, with what differs
 * between databases taken from `dialect`. `close` runs once, however often it is called.
 */
export function kyselyStorage(db: Kysely<Database>, dialect: StorageDialect, close: () => Promise<void>): DatabaseStorage {
  const records = createRecords(dialect);
  let closed: Promise<void> | undefined;
  const closeOnce = () => {
    closed ??= close();
    return closed;
  };
  const adapter = (over: Db): StorageAdapter => {
    const context = { db: over, dialect, records };
    return {
      ...accountRepositories(context),
      ...knowledgeRepositories(context),
      ...jobRepository(context),
      ...conversationRepositories(context),
      ...streamRepository(context),
      ...approvalRepository(context),
      ...responseRepository(context),
      ...auditRepository(context),
      // A transaction inside a transaction runs in the outer one.
      transaction: over.isTransaction ? (fn) => fn(adapter(over)) : (fn) => (over as Kysely<Database>).transaction().execute((trx) => fn(adapter(trx))),
      close: closeOnce,
    };
  };
  return { ...adapter(db), blobs: databaseBlobStore({ db, dialect }) };
}
