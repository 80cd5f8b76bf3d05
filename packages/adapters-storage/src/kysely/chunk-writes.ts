import type { ChunkRecord } from '@agent-platform/core';
import { createPacer } from '@agent-platform/core/internal';
import type { RowId } from './database.js';
import type { ChunkWrite, Db } from './dialect.js';

export type { ChunkWrite } from './dialect.js';

/** A chunk as its row stores it: the same columns on every dialect. */
export const chunkRow = (c: ChunkRecord, documentId: string) => ({
  id: c.id,
  document_id: documentId,
  project_id: c.projectId,
  chunk_index: c.index,
  text: c.text,
  token_count: c.tokenCount,
  metadata: JSON.stringify(c.metadata),
});

/** A vector as its `chunk_embeddings.embedding` stores it: the float32 bytes, without a copy. */
export const vectorBytes = (v: Float32Array): Buffer => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/**
 * Replaces a document's chunk rows inside `tx` with kysely's portable statements: a delete (their
 * stored vectors and index entries go with them by the schema), then per 100 chunks an insert of
 * the rows and one of their vectors. SQLite's writer: its triggers fill the keyword index, and
 * every statement is a call into the same process, so their number costs little.
 */
export async function insertChunksInBatches(tx: Db, { documentId, chunks, embeddings }: ChunkWrite): Promise<void> {
  // Thousands of rows are seconds of synchronous SQLite work: between batches the transaction
  // lets the event loop answer other requests (its connection stays held, so no other query runs
  // inside it).
  const pace = createPacer();
  await tx.deleteFrom('chunks').where('document_id', '=', documentId).execute();
  // SQLite caps bound parameters per statement; 7 columns × 100 rows stays well under it.
  for (let i = 0; i < chunks.length; i += 100) {
    if (i > 0) await pace();
    const batch = chunks.slice(i, i + 100);
    const rows = batch.map((c) => chunkRow(c, documentId));
    if (!embeddings) {
      await tx.insertInto('chunks').values(rows).execute();
      continue;
    }
    const inserted = await tx.insertInto('chunks').values(rows).returning(['id', 'row_id']).execute();
    // RETURNING gives the rows in no particular order: match them by id.
    const rowIds = new Map(inserted.map((r) => [r.id, r.row_id]));
    await tx
      .insertInto('chunk_embeddings')
      .values(batch.map((c, j) => ({ chunk_row_id: rowIds.get(c.id) as RowId, model: embeddings.model, embedding: vectorBytes(embeddings.vectors[i + j] as Float32Array) })))
      .execute();
  }
}
