import type { ChunkRecord, StorageAdapter } from '@agent-platform/core';
import { keywordTerms } from '@agent-platform/core/internal';
import { sql, type Updateable } from 'kysely';
import type { Database } from '../database.js';
import { atomically, deleteLocked, type RepositoryContext } from './context.js';

/**
 * A stored vector blob as a Float32Array of its own: copied byte by byte, since a Float32Array
 * needs an aligned buffer and a Buffer's `.buffer` may be a shared pool slab.
 */
function toVector(blob: Uint8Array): Float32Array {
  const vector = new Float32Array(blob.byteLength / 4);
  new Uint8Array(vector.buffer).set(blob);
  return vector;
}

const CHUNK_COLUMNS = ['id', 'document_id', 'project_id', 'chunk_index', 'text', 'token_count', 'metadata'] as const;

/** Documents, files, chunks (with their vectors and keyword index) and knowledge settings; jobs are in jobs.ts. */
export function knowledgeRepositories({ db, dialect, records }: RepositoryContext): Pick<StorageAdapter, 'documents' | 'files' | 'chunks' | 'knowledgeSettings'> {
  const { time } = dialect;
  const { toChunk, toDocument, toFile } = records;
  return {
    documents: {
      async insert(d) {
        await db
          .insertInto('documents')
          .values({
            id: d.id,
            user_id: d.userId,
            project_id: d.projectId,
            file_id: d.fileId,
            source_key: d.sourceKey,
            file_name: d.fileName,
            file_type: d.fileType,
            source_type: d.sourceType,
            status: d.status,
            chunk_count: d.chunkCount,
            vector_count: d.vectorCount,
            error: d.error,
            metadata: JSON.stringify(d.metadata),
            created_at: time(d.createdAt),
            updated_at: time(d.updatedAt),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('documents').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toDocument(row);
      },
      async list(query) {
        let filter = db.selectFrom('documents').where('project_id', '=', query.projectId).where('user_id', '=', query.userId);
        if (query.status) filter = filter.where('status', '=', query.status);
        // The page and the total at once: on PostgreSQL two connections of the pool, so a list
        // costs one round trip to the database instead of two (SQLite runs them in turn).
        const [rows, { n }] = await Promise.all([
          filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute(),
          filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
        ]);
        return { items: rows.map(toDocument), total: Number(n), start: query.offset };
      },
      async update(id, patch) {
        const set: Updateable<Database['documents']> = { updated_at: time(patch.updatedAt) };
        if (patch.status !== undefined) set.status = patch.status;
        if (patch.chunkCount !== undefined) set.chunk_count = patch.chunkCount;
        if (patch.vectorCount !== undefined) set.vector_count = patch.vectorCount;
        if (patch.error !== undefined) set.error = patch.error;
        if (patch.metadata !== undefined) set.metadata = JSON.stringify(patch.metadata);
        const row = await db.updateTable('documents').set(set).where('id', '=', id).returningAll().executeTakeFirst();
        return row && toDocument(row);
      },
      delete(userId, id) {
        return deleteLocked(db, dialect, userId, (tx) => tx.deleteFrom('documents').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst());
      },
      async listByStatus(statuses) {
        if (statuses.length === 0) return [];
        const rows = await db
          .selectFrom('documents')
          .selectAll()
          .where('status', 'in', [...statuses])
          .orderBy('created_at')
          .orderBy('id')
          .execute();
        return rows.map(toDocument);
      },
      async blobKeysOfProject(projectId) {
        const rows = await db
          .selectFrom('documents')
          .select('source_key as key')
          .where('project_id', '=', projectId)
          .where('source_key', '!=', '')
          .union(db.selectFrom('files').select('id as key').where('project_id', '=', projectId))
          .execute();
        return rows.map((r) => r.key);
      },
    },
    files: {
      async insert(f) {
        await db
          .insertInto('files')
          .values({ id: f.id, user_id: f.userId, project_id: f.projectId, file_name: f.fileName, file_type: f.fileType, size: f.size, created_at: time(f.createdAt) })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('files').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toFile(row);
      },
      async deleteIfUnreferenced(id) {
        // One statement: a document inserted meanwhile either comes first (the file stays) or after (it was gone).
        const result = await sql`delete from files where id = ${id} and not exists (
            select 1 from documents d where d.user_id = files.user_id and (d.file_id = files.id or d.source_key = files.id))`.execute(db);
        return (result.numAffectedRows ?? 0n) > 0n;
      },
    },
    chunks: {
      async replaceForDocument(documentId, chunks, embeddings) {
        if (embeddings && embeddings.vectors.length !== chunks.length) {
          throw new Error(`${embeddings.vectors.length} vectors for ${chunks.length} chunks`);
        }
        await atomically(db, (tx) => dialect.replaceChunks(tx, { documentId, chunks, embeddings }));
      },
      async embeddingsByText(documentId, model) {
        const rows = await db
          .selectFrom('chunks')
          .innerJoin('chunk_embeddings', 'chunk_embeddings.chunk_row_id', 'chunks.row_id')
          .select(['chunks.text as text', 'chunk_embeddings.embedding as embedding'])
          .where('chunks.document_id', '=', documentId)
          .where('chunk_embeddings.model', '=', model)
          .execute();
        return new Map(rows.map((r) => [r.text, toVector(r.embedding)]));
      },
      async embeddingsById(projectId, ids, model) {
        const out = new Map<string, Float32Array>();
        for (let i = 0; i < ids.length; i += 500) {
          const rows = await db
            .selectFrom('chunks')
            .innerJoin('chunk_embeddings', 'chunk_embeddings.chunk_row_id', 'chunks.row_id')
            .select(['chunks.id as id', 'chunk_embeddings.embedding as embedding'])
            .where('chunks.id', 'in', ids.slice(i, i + 500))
            .where('chunks.project_id', '=', projectId)
            .where('chunk_embeddings.model', '=', model)
            .execute();
          for (const r of rows) out.set(r.id, toVector(r.embedding));
        }
        return out;
      },
      async getMany(projectId, ids) {
        const out: ChunkRecord[] = [];
        for (let i = 0; i < ids.length; i += 500) {
          // Found by the unique id index; the project condition filters the rows it finds.
          const rows = await db
            .selectFrom('chunks')
            .select(CHUNK_COLUMNS)
            .where('id', 'in', ids.slice(i, i + 500))
            .where('project_id', '=', projectId)
            .execute();
          out.push(...rows.map(toChunk));
        }
        return out;
      },
      async get(userId, id) {
        const row = await db
          .selectFrom('chunks')
          .innerJoin('documents', 'documents.id', 'chunks.document_id')
          .select(CHUNK_COLUMNS.map((c) => `chunks.${c}` as const))
          .where('chunks.id', '=', id)
          .where('documents.user_id', '=', userId)
          .executeTakeFirst();
        return row && toChunk(row);
      },
      async listByDocument(documentId) {
        const rows = await db.selectFrom('chunks').select(CHUNK_COLUMNS).where('document_id', '=', documentId).orderBy('chunk_index').execute();
        return rows.map(toChunk);
      },
      async pageByDocument(query) {
        const filter = db.selectFrom('chunks').where('document_id', '=', query.documentId);
        // Both from the (document_id, chunk_index) index: a page of a large document reads its page only.
        const [rows, { n }] = await Promise.all([
          filter.select(CHUNK_COLUMNS).orderBy('chunk_index').limit(query.limit).offset(query.offset).execute(),
          filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
        ]);
        return { items: rows.map(toChunk), total: Number(n), start: query.offset };
      },
      async keywordSearch(projectId, query, limit) {
        // The query goes through the same analyzer as the texts; each distinct term counts once.
        const terms = [...new Set(keywordTerms(query))];
        if (terms.length === 0) return [];
        return dialect.keywords.search(db, projectId, terms, limit);
      },
      async anyInProject(projectId) {
        // Through the project's documents (indexed by project) and each one's chunks (indexed by
        // document): chunks have no project index, and a scan of them would grow with every project.
        const row = await db
          .selectFrom('documents')
          .select('documents.id')
          .where('documents.project_id', '=', projectId)
          .where((eb) => eb.exists(eb.selectFrom('chunks').select('chunks.row_id').whereRef('chunks.document_id', '=', 'documents.id')))
          .limit(1)
          .executeTakeFirst();
        return row !== undefined;
      },
    },
    knowledgeSettings: {
      async get(projectId) {
        const row = await db.selectFrom('knowledge_settings').select('settings').where('project_id', '=', projectId).executeTakeFirst();
        return row && (dialect.readJson(row.settings) as Record<string, unknown>);
      },
      async put(projectId, settings, at) {
        const values = { project_id: projectId, settings: JSON.stringify(settings), updated_at: time(at) };
        await db
          .insertInto('knowledge_settings')
          .values(values)
          .onConflict((oc) => oc.column('project_id').doUpdateSet({ settings: values.settings, updated_at: values.updated_at }))
          .execute();
      },
    },
  };
}
