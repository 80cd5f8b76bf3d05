import {
  type ApiKeyRecord,
  type ChatMessageRecord,
  type ChatRecord,
  type ChunkRecord,
  createPacer,
  type CredentialRecord,
  type ToolRecord,
  type DocumentRecord,
  type DocumentStatus,
  type FileRecord,
  type JobRecord,
  keywordTerms,
  type ListPosition,
  type McpServerRecord,
  PlatformError,
  type ProjectListQuery,
  type ProjectRecord,
  type StorageAdapter,
  type UserRecord,
} from '@agent-platform/core';
import BetterSqlite3 from 'better-sqlite3';
import {
  type Expression,
  Kysely,
  Migrator,
  type SqlBool,
  type SqliteDatabase,
  SqliteDialect,
  sql,
  type Transaction,
} from 'kysely';
import { type Database, KEYWORD_TERMS_FUNCTION, migrations } from './schema.js';

export interface SqliteStorageOptions {
  /** Database file, created when missing; `:memory:` for a private in-memory database. */
  readonly path: string;
}

type Db = Kysely<Database> | Transaction<Database>;
type ProjectRow = Database['projects'];
type KeyRow = Database['api_keys'];

const toUser = (row: Pick<Database['users'], 'id' | 'created_at'>): UserRecord => ({ id: row.id, createdAt: new Date(row.created_at) });

const toKey = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  lookup: row.lookup,
  hash: row.hash,
  createdAt: new Date(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : new Date(row.last_used_at),
});

const toProject = (row: ProjectRow): ProjectRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  description: row.description,
  icon: row.icon,
  color: row.color,
  model: row.model,
  provider: row.provider,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toDocument = (row: Database['documents']): DocumentRecord => ({
  id: row.id,
  userId: row.user_id,
  projectId: row.project_id,
  fileId: row.file_id,
  sourceKey: row.source_key,
  fileName: row.file_name,
  fileType: row.file_type,
  sourceType: row.source_type,
  status: row.status as DocumentStatus,
  chunkCount: row.chunk_count,
  vectorCount: row.vector_count,
  error: row.error,
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toFile = (row: Database['files']): FileRecord => ({
  id: row.id,
  userId: row.user_id,
  projectId: row.project_id,
  fileName: row.file_name,
  fileType: row.file_type,
  size: row.size,
  createdAt: new Date(row.created_at),
});

const toChunk = (row: Omit<Database['chunks'], 'row_id'>): ChunkRecord => ({
  id: row.id,
  documentId: row.document_id,
  projectId: row.project_id,
  index: row.chunk_index,
  text: row.text,
  tokenCount: row.token_count,
  metadata: JSON.parse(row.metadata) as Record<string, unknown>,
});

const toJob = (row: Database['jobs']): JobRecord => ({
  id: row.id,
  kind: row.kind as JobRecord['kind'],
  documentId: row.document_id,
  payload: JSON.parse(row.payload) as Record<string, unknown>,
  attempts: row.attempts,
  createdAt: new Date(row.created_at),
});

const toCredential = (row: Database['credentials']): CredentialRecord => ({
  id: row.id,
  userId: row.user_id,
  name: row.name,
  provider: row.provider,
  secret: row.secret,
  last4: row.last4,
  baseUrl: row.base_url,
  baseUrlSecret: row.base_url_secret,
  proxy: row.proxy === 1,
  isValid: row.is_valid === null ? null : row.is_valid === 1,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toChat = (row: Database['chats']): ChatRecord => ({
  id: row.id,
  userId: row.user_id,
  projectId: row.project_id,
  name: row.name,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toMessage = (row: Database['chat_messages']): ChatMessageRecord => ({
  chatId: row.chat_id,
  position: row.position,
  role: row.role as ChatMessageRecord['role'],
  content: row.content,
  toolCalls: row.tool_calls === null ? null : (JSON.parse(row.tool_calls) as ChatMessageRecord['toolCalls']),
  toolCallId: row.tool_call_id,
  createdAt: new Date(row.created_at),
});

const toTool = (row: Database['tools']): ToolRecord => ({
  id: row.id,
  userId: row.user_id,
  projectId: row.project_id,
  name: row.name,
  description: row.description,
  language: row.language as ToolRecord['language'],
  code: row.code,
  parameters: JSON.parse(row.parameters) as Record<string, unknown>,
  dependencies: JSON.parse(row.dependencies) as string[],
  enabled: row.enabled === 1,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

const toMcpServer = (row: Database['mcp_servers']): McpServerRecord => ({
  id: row.id,
  userId: row.user_id,
  projectId: row.project_id,
  name: row.name,
  transport: row.transport as McpServerRecord['transport'],
  url: row.url,
  command: row.command,
  args: JSON.parse(row.args) as string[],
  headerNames: JSON.parse(row.header_names) as string[],
  envNames: JSON.parse(row.env_names) as string[],
  secrets: row.secrets,
  createdAt: new Date(row.created_at),
  updatedAt: new Date(row.updated_at),
});

/** better-sqlite3 reports a UNIQUE index violation (not the primary key's) with this code. */
const isUniqueViolation = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';

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

/** `%`, `_` and the escape character itself match literally in LIKE ... ESCAPE '\'. */
const likePattern = (word: string) => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Rows at or before `p` in newest-first order (createdAt desc, id desc). */
function atOrBefore(p: ListPosition) {
  const t = p.createdAt.getTime();
  return sql<SqlBool>`(created_at > ${t} or (created_at = ${t} and id >= ${p.id}))`;
}

function projectFilter(query: ProjectListQuery): Expression<SqlBool>[] {
  const conditions = [sql<SqlBool>`user_id = ${query.userId}`];
  // SQLite's LIKE is case-insensitive for ASCII letters only.
  if (query.searchWord) conditions.push(sql<SqlBool>`name like ${likePattern(query.searchWord)} escape '\\'`);
  return conditions;
}

/** Runs `fn` in a transaction, or in the current one when `db` already is one. */
const atomically = <T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> =>
  db.isTransaction ? fn(db) : (db as Kysely<Database>).transaction().execute(fn);

function repositories(db: Db): Omit<StorageAdapter, 'transaction' | 'close'> {
  return {
    users: {
      async insert(user) {
        await db.insertInto('users').values({ id: user.id, created_at: user.createdAt.getTime() }).execute();
      },
      async get(id) {
        const row = await db.selectFrom('users').select(['id', 'created_at']).where('id', '=', id).executeTakeFirst();
        return row && toUser(row);
      },
    },
    apiKeys: {
      async insert(key) {
        await db
          .insertInto('api_keys')
          .values({
            id: key.id,
            user_id: key.userId,
            name: key.name,
            lookup: key.lookup,
            hash: key.hash,
            created_at: key.createdAt.getTime(),
            last_used_at: key.lastUsedAt?.getTime() ?? null,
          })
          .execute();
      },
      async findByLookup(lookup) {
        const row = await db.selectFrom('api_keys').selectAll().where('lookup', '=', lookup).executeTakeFirst();
        return row && toKey(row);
      },
      async list(userId) {
        const rows = await db
          .selectFrom('api_keys')
          .selectAll()
          .where('user_id', '=', userId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        return rows.map(toKey);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('api_keys').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
      async touch(id, at) {
        await db.updateTable('api_keys').set({ last_used_at: at.getTime() }).where('id', '=', id).execute();
      },
      async count() {
        const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return Number(row.n);
      },
    },
    projects: {
      async insert(p) {
        await db
          .insertInto('projects')
          .values({
            id: p.id,
            user_id: p.userId,
            name: p.name,
            description: p.description,
            icon: p.icon,
            color: p.color,
            model: p.model,
            provider: p.provider,
            created_at: p.createdAt.getTime(),
            updated_at: p.updatedAt.getTime(),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('projects').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toProject(row);
      },
      async list(query) {
        const filter = projectFilter(query);
        const count = (extra: Expression<SqlBool>[]) =>
          db
            .selectFrom('projects')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where((eb) => eb.and([...filter, ...extra]))
            .executeTakeFirstOrThrow()
            .then((r) => Number(r.n));
        let page = db
          .selectFrom('projects')
          .selectAll()
          .where((eb) => eb.and(filter))
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.limit);
        let start = query.offset ?? 0;
        if (query.after) {
          page = page.where(sql<SqlBool>`not ${atOrBefore(query.after)}`);
          start = await count([atOrBefore(query.after)]);
        } else if (start > 0) {
          page = page.offset(start);
        }
        const rows = await page.execute();
        const total = query.searchWord
          ? await count([])
          : Number(
              (await db.selectFrom('users').select('project_count').where('id', '=', query.userId).executeTakeFirst())
                ?.project_count ?? 0,
            );
        return { items: rows.map(toProject), total, start };
      },
      async update(userId, id, patch) {
        const set: Partial<ProjectRow> = { updated_at: patch.updatedAt.getTime() };
        for (const field of ['name', 'description', 'icon', 'color', 'model', 'provider'] as const) {
          const value = patch[field];
          if (value !== undefined) set[field] = value;
        }
        const row = await db
          .updateTable('projects')
          .set(set)
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .returningAll()
          .executeTakeFirst();
        return row && toProject(row);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('projects').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
    },
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
            created_at: d.createdAt.getTime(),
            updated_at: d.updatedAt.getTime(),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('documents').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toDocument(row);
      },
      async list(query) {
        let filter = db
          .selectFrom('documents')
          .where('project_id', '=', query.projectId)
          .where('user_id', '=', query.userId);
        if (query.status) filter = filter.where('status', '=', query.status);
        const rows = await filter
          .selectAll()
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.limit)
          .offset(query.offset)
          .execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toDocument), total: Number(n), start: query.offset };
      },
      async update(id, patch) {
        const set: Partial<Database['documents']> = { updated_at: patch.updatedAt.getTime() };
        if (patch.status !== undefined) set.status = patch.status;
        if (patch.chunkCount !== undefined) set.chunk_count = patch.chunkCount;
        if (patch.vectorCount !== undefined) set.vector_count = patch.vectorCount;
        if (patch.error !== undefined) set.error = patch.error;
        if (patch.metadata !== undefined) set.metadata = JSON.stringify(patch.metadata);
        const row = await db.updateTable('documents').set(set).where('id', '=', id).returningAll().executeTakeFirst();
        return row && toDocument(row);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('documents').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
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
    },
    files: {
      async insert(f) {
        await db
          .insertInto('files')
          .values({ id: f.id, user_id: f.userId, project_id: f.projectId, file_name: f.fileName, file_type: f.fileType, size: f.size, created_at: f.createdAt.getTime() })
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
        // Thousands of rows are seconds of synchronous SQLite work: between batches the
        // transaction lets the event loop answer other requests (its connection stays held, so
        // no other query runs inside it).
        const pace = createPacer();
        await atomically(db, async (tx) => {
          // Their stored vectors go with them (foreign key cascade).
          await tx.deleteFrom('chunks').where('document_id', '=', documentId).execute();
          // SQLite caps bound parameters per statement; 7 columns × 100 rows stays well under it.
          for (let i = 0; i < chunks.length; i += 100) {
            if (i > 0) await pace();
            const batch = chunks.slice(i, i + 100);
            const inserted = await tx
              .insertInto('chunks')
              .values(
                batch.map((c) => ({
                  id: c.id,
                  document_id: documentId,
                  project_id: c.projectId,
                  chunk_index: c.index,
                  text: c.text,
                  token_count: c.tokenCount,
                  metadata: JSON.stringify(c.metadata),
                })),
              )
              .returning(['id', 'row_id'])
              .execute();
            if (!embeddings || batch.length === 0) continue;
            // RETURNING gives the rows in no particular order: match them by id.
            const rowIds = new Map(inserted.map((r) => [r.id, r.row_id]));
            await tx
              .insertInto('chunk_embeddings')
              .values(
                batch.map((c, j) => {
                  const v = embeddings.vectors[i + j] as Float32Array;
                  return { chunk_row_id: rowIds.get(c.id) as number, model: embeddings.model, embedding: Buffer.from(v.buffer, v.byteOffset, v.byteLength) };
                }),
              )
              .execute();
          }
        });
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
      async embeddingsById(ids, model) {
        const out = new Map<string, Float32Array>();
        for (let i = 0; i < ids.length; i += 500) {
          const rows = await db
            .selectFrom('chunks')
            .innerJoin('chunk_embeddings', 'chunk_embeddings.chunk_row_id', 'chunks.row_id')
            .select(['chunks.id as id', 'chunk_embeddings.embedding as embedding'])
            .where('chunks.id', 'in', ids.slice(i, i + 500))
            .where('chunk_embeddings.model', '=', model)
            .execute();
          for (const r of rows) out.set(r.id, toVector(r.embedding));
        }
        return out;
      },
      async getMany(ids) {
        const out: ChunkRecord[] = [];
        for (let i = 0; i < ids.length; i += 500) {
          const rows = await db.selectFrom('chunks').select(CHUNK_COLUMNS).where('id', 'in', ids.slice(i, i + 500)).execute();
          out.push(...rows.map(toChunk));
        }
        return out;
      },
      async listByDocument(documentId) {
        const rows = await db.selectFrom('chunks').select(CHUNK_COLUMNS).where('document_id', '=', documentId).orderBy('chunk_index').execute();
        return rows.map(toChunk);
      },
      async keywordSearch(projectId, query, limit) {
        // The query goes through the same analyzer as the texts; each distinct term counts once.
        const terms = [...new Set(keywordTerms(query))];
        if (terms.length === 0) return [];
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
    credentials: {
      async insert(c) {
        await db
          .insertInto('credentials')
          .values({
            id: c.id,
            user_id: c.userId,
            name: c.name,
            provider: c.provider,
            secret: c.secret,
            last4: c.last4,
            base_url: c.baseUrl,
            base_url_secret: c.baseUrlSecret,
            proxy: c.proxy ? 1 : 0,
            is_valid: c.isValid === null ? null : c.isValid ? 1 : 0,
            created_at: c.createdAt.getTime(),
            updated_at: c.updatedAt.getTime(),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('credentials').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toCredential(row);
      },
      async list(userId) {
        const rows = await db
          .selectFrom('credentials')
          .selectAll()
          .where('user_id', '=', userId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .execute();
        return rows.map(toCredential);
      },
      async update(userId, id, patch) {
        const set: Partial<Database['credentials']> = { updated_at: patch.updatedAt.getTime() };
        if (patch.name !== undefined) set.name = patch.name;
        if (patch.secret !== undefined) set.secret = patch.secret;
        if (patch.last4 !== undefined) set.last4 = patch.last4;
        if (patch.proxy !== undefined) set.proxy = patch.proxy ? 1 : 0;
        if (patch.isValid !== undefined) set.is_valid = patch.isValid === null ? null : patch.isValid ? 1 : 0;
        const row = await db.updateTable('credentials').set(set).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
        return row && toCredential(row);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('credentials').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
    },
    chats: {
      async insert(chat) {
        await db
          .insertInto('chats')
          .values({
            id: chat.id,
            user_id: chat.userId,
            project_id: chat.projectId,
            name: chat.name,
            created_at: chat.createdAt.getTime(),
            updated_at: chat.updatedAt.getTime(),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('chats').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toChat(row);
      },
      async list(query) {
        const rows = await db
          .selectFrom('chats')
          .selectAll()
          .where('user_id', '=', query.userId)
          .orderBy('created_at', 'desc')
          .orderBy('id', 'desc')
          .limit(query.limit)
          .offset(query.offset)
          .execute();
        const { n } = await db
          .selectFrom('chats')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', query.userId)
          .executeTakeFirstOrThrow();
        return { items: rows.map(toChat), total: Number(n), start: query.offset };
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('chats').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
      async touch(id, at) {
        await db.updateTable('chats').set({ updated_at: at.getTime() }).where('id', '=', id).execute();
      },
      async appendMessages(chatId, messages) {
        if (messages.length === 0) return;
        await atomically(db, async (tx) => {
          const { next } = await tx
            .selectFrom('chat_messages')
            .select((eb) => eb.fn.coalesce(eb.fn.max('position'), eb.val(-1)).as('next'))
            .where('chat_id', '=', chatId)
            .executeTakeFirstOrThrow();
          await tx
            .insertInto('chat_messages')
            .values(
              messages.map((m, i) => ({
                chat_id: chatId,
                position: Number(next) + 1 + i,
                role: m.role,
                content: m.content,
                tool_calls: m.toolCalls === null ? null : JSON.stringify(m.toolCalls),
                tool_call_id: m.toolCallId,
                created_at: m.createdAt.getTime(),
              })),
            )
            .execute();
        });
      },
      async messages(chatId) {
        const rows = await db.selectFrom('chat_messages').selectAll().where('chat_id', '=', chatId).orderBy('position').execute();
        return rows.map(toMessage);
      },
    },
    tools: {
      async insert(t) {
        await db
          .insertInto('tools')
          .values({
            id: t.id,
            user_id: t.userId,
            project_id: t.projectId,
            name: t.name,
            description: t.description,
            language: t.language,
            code: t.code,
            parameters: JSON.stringify(t.parameters),
            dependencies: JSON.stringify(t.dependencies),
            enabled: t.enabled ? 1 : 0,
            created_at: t.createdAt.getTime(),
            updated_at: t.updatedAt.getTime(),
          })
          .execute();
      },
      async get(userId, id) {
        const row = await db.selectFrom('tools').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toTool(row);
      },
      async list(query) {
        const filter = db.selectFrom('tools').where('project_id', '=', query.projectId).where('user_id', '=', query.userId);
        const rows = await filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toTool), total: Number(n), start: query.offset };
      },
      async enabled(projectId) {
        const rows = await db.selectFrom('tools').selectAll().where('project_id', '=', projectId).where('enabled', '=', 1).orderBy('created_at').orderBy('id').execute();
        return rows.map(toTool);
      },
      async update(userId, id, patch) {
        const set: Partial<Database['tools']> = { updated_at: patch.updatedAt.getTime() };
        if (patch.name !== undefined) set.name = patch.name;
        if (patch.description !== undefined) set.description = patch.description;
        if (patch.code !== undefined) set.code = patch.code;
        if (patch.parameters !== undefined) set.parameters = JSON.stringify(patch.parameters);
        if (patch.dependencies !== undefined) set.dependencies = JSON.stringify(patch.dependencies);
        if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
        const row = await db.updateTable('tools').set(set).where('id', '=', id).where('user_id', '=', userId).returningAll().executeTakeFirst();
        return row && toTool(row);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('tools').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
    },
    mcpServers: {
      async insert(m) {
        try {
          await db
            .insertInto('mcp_servers')
            .values({
              id: m.id,
              user_id: m.userId,
              project_id: m.projectId,
              name: m.name,
              transport: m.transport,
              url: m.url,
              command: m.command,
              args: JSON.stringify(m.args),
              header_names: JSON.stringify(m.headerNames),
              env_names: JSON.stringify(m.envNames),
              secrets: m.secrets,
              created_at: m.createdAt.getTime(),
              updated_at: m.updatedAt.getTime(),
            })
            .execute();
        } catch (error) {
          // The only UNIQUE index of the table is (project_id, name).
          if (isUniqueViolation(error)) {
            throw new PlatformError('conflict', `An MCP server named "${m.name}" already exists in this project`, { cause: error });
          }
          throw error;
        }
      },
      async get(userId, id) {
        const row = await db.selectFrom('mcp_servers').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return row && toMcpServer(row);
      },
      async list(query) {
        const filter = db.selectFrom('mcp_servers').where('project_id', '=', query.projectId).where('user_id', '=', query.userId);
        const rows = await filter.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).offset(query.offset).execute();
        const { n } = await filter.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
        return { items: rows.map(toMcpServer), total: Number(n), start: query.offset };
      },
      async forProject(projectId) {
        const rows = await db.selectFrom('mcp_servers').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
        return rows.map(toMcpServer);
      },
      async delete(userId, id) {
        const result = await db.deleteFrom('mcp_servers').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
        return result.numDeletedRows > 0n;
      },
    },
    knowledgeSettings: {
      async get(projectId) {
        const row = await db.selectFrom('knowledge_settings').select('settings').where('project_id', '=', projectId).executeTakeFirst();
        return row && (JSON.parse(row.settings) as Record<string, unknown>);
      },
      async put(projectId, settings, at) {
        const values = { project_id: projectId, settings: JSON.stringify(settings), updated_at: at.getTime() };
        await db
          .insertInto('knowledge_settings')
          .values(values)
          .onConflict((oc) => oc.column('project_id').doUpdateSet({ settings: values.settings, updated_at: values.updated_at }))
          .execute();
      },
    },
    jobs: {
      async insert(job) {
        await db
          .insertInto('jobs')
          .values({
            id: job.id,
            kind: job.kind,
            document_id: job.documentId,
            payload: JSON.stringify(job.payload),
            attempts: job.attempts,
            created_at: job.createdAt.getTime(),
          })
          .execute();
      },
      async list() {
        const rows = await db.selectFrom('jobs').selectAll().orderBy('created_at').orderBy('id').execute();
        return rows.map(toJob);
      },
      async get(id) {
        const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
        return row && toJob(row);
      },
      async recordAttempt(id) {
        const row = await db
          .updateTable('jobs')
          .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
          .where('id', '=', id)
          .returning('attempts')
          .executeTakeFirst();
        return row?.attempts ?? 0;
      },
      async delete(id) {
        await db.deleteFrom('jobs').where('id', '=', id).execute();
      },
    },
  };
}

/**
 * better-sqlite3 as kysely's dialect wants it, keeping prepared statements. kysely prepares
 * every query anew, which costs more than running a small indexed query; the SQL text of a
 * query shape is stable (values are parameters), so a small LRU of statements serves them.
 * kysely runs one query at a time on its single connection, so a statement is never in use
 * twice.
 */
function withStatementCache(database: BetterSqlite3.Database, size = 256): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(text) {
      let statement = statements.get(text);
      if (statement) {
        statements.delete(text); // re-insert: most recently used last
      } else {
        statement = database.prepare(text);
        if (statements.size >= size) statements.delete(statements.keys().next().value as string);
      }
      statements.set(text, statement);
      return statement;
    },
  };
}

/**
 * Storage in a SQLite file through kysely and better-sqlite3 (the embedded default).
 * Opening runs pending migrations; the file uses WAL and enforces foreign keys.
 */
export async function sqliteStorage(options: SqliteStorageOptions): Promise<StorageAdapter> {
  const database = new BetterSqlite3(options.path);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // The keyword index's analyzer (stop words, Porter2 stems: see keywordTerms), called by the
  // triggers that keep chunks_fts in step with chunks (migration 0008).
  database.function(KEYWORD_TERMS_FUNCTION, { deterministic: true }, (text) => keywordTerms(String(text ?? '')).join(' '));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });

  const { error } = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
  if (error) {
    await db.destroy();
    throw error;
  }

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= db.destroy();
    return closed;
  };
  const adapter = (over: Db): StorageAdapter => ({
    ...repositories(over),
    // A transaction inside a transaction runs in the outer one.
    transaction: over.isTransaction ? (fn) => fn(adapter(over)) : (fn) => (over as Kysely<Database>).transaction().execute((trx) => fn(adapter(trx))),
    close,
  });
  return adapter(db);
}
