import {
  type ApiKeyRecord,
  bm25Rank,
  type ChatMessageRecord,
  type ChatRecord,
  type ChunkRecord,
  type CredentialRecord,
  type DocumentRecord,
  type FileRecord,
  type JobLease,
  type JobRecord,
  type ListPosition,
  type McpServerRecord,
  type Page,
  PlatformError,
  type ProjectListQuery,
  type ProjectRecord,
  type StorageAdapter,
  type ToolRecord,
  type UserRecord,
} from '@agent-platform/core';

interface Tables {
  users: Map<string, UserRecord>;
  apiKeys: Map<string, ApiKeyRecord>;
  projects: Map<string, ProjectRecord>;
  documents: Map<string, DocumentRecord>;
  files: Map<string, FileRecord>;
  chunks: Map<string, ChunkRecord>;
  /** Stored vectors by chunk id. */
  embeddings: Map<string, { readonly model: string; readonly vector: Float32Array }>;
  settings: Map<string, Record<string, unknown>>;
  jobs: Map<string, JobRecord>;
  credentials: Map<string, CredentialRecord>;
  /** By `chatKey(userId, id)`: chat ids are unique per user. */
  chats: Map<string, ChatRecord>;
  /** By `chatKey(userId, chatId)`. */
  messages: Map<string, ChatMessageRecord[]>;
  tools: Map<string, ToolRecord>;
  mcpServers: Map<string, McpServerRecord>;
}

const emptyTables = (): Tables => ({
  users: new Map(),
  apiKeys: new Map(),
  projects: new Map(),
  documents: new Map(),
  files: new Map(),
  chunks: new Map(),
  embeddings: new Map(),
  settings: new Map(),
  jobs: new Map(),
  credentials: new Map(),
  chats: new Map(),
  messages: new Map(),
  tools: new Map(),
  mcpServers: new Map(),
});

const copyTables = (t: Tables): Tables => ({
  users: new Map(t.users),
  apiKeys: new Map(t.apiKeys),
  projects: new Map(t.projects),
  documents: new Map(t.documents),
  files: new Map(t.files),
  chunks: new Map(t.chunks),
  embeddings: new Map(t.embeddings),
  settings: new Map(t.settings),
  jobs: new Map(t.jobs),
  credentials: new Map(t.credentials),
  chats: new Map(t.chats),
  messages: new Map([...t.messages].map(([k, v]) => [k, [...v]])),
  tools: new Map(t.tools),
  mcpServers: new Map(t.mcpServers),
});

/** Deep copy through structuredClone: rows hold nested metadata objects and Dates. */
const clone = <T>(row: T): T => structuredClone(row);

/**
 * Applies the defined members of `patch` to a row (of `userId`, when given); answers a copy
 * of the updated row, or undefined when there is no such row.
 */
function patchRow<T extends { readonly userId: string }>(map: Map<string, T>, id: string, patch: object, userId?: string): T | undefined {
  const row = map.get(id);
  if (!row || (userId !== undefined && row.userId !== userId)) return undefined;
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const updated = clone({ ...row, ...defined });
  map.set(id, updated);
  return clone(updated);
}

/** The document's chunks in document order (not cloned). */
function chunksOf(t: Tables, documentId: string): ChunkRecord[] {
  return [...t.chunks.values()].filter((c) => c.documentId === documentId).sort((a, b) => a.index - b.index);
}

function deleteChunkRows(t: Tables, documentId: string): void {
  for (const [id, chunk] of t.chunks) {
    if (chunk.documentId !== documentId) continue;
    t.chunks.delete(id);
    t.embeddings.delete(id);
  }
}

function deleteDocumentRows(t: Tables, documentId: string): void {
  t.documents.delete(documentId);
  deleteChunkRows(t, documentId);
  for (const [id, job] of t.jobs) if (job.documentId === documentId) t.jobs.delete(id);
}

/** The user's default credential of `provider` (the row itself, not a copy). */
function defaultCredential(t: Tables, userId: string, provider: string): CredentialRecord | undefined {
  for (const c of t.credentials.values()) if (c.userId === userId && c.provider === provider && c.isDefault) return c;
  return undefined;
}

/** Newest first: createdAt descending, then id descending. */
function compareNewestFirst(a: ListPosition, b: ListPosition): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** A user's rows of one project (tools, MCP servers), newest first: one offset page. */
function projectPage<T extends ListPosition & { readonly userId: string; readonly projectId: string }>(
  map: Map<string, T>,
  query: { userId: string; projectId: string; limit: number; offset: number },
): Page<T> {
  const matching = [...map.values()].filter((r) => r.userId === query.userId && r.projectId === query.projectId).sort(compareNewestFirst);
  return { items: matching.slice(query.offset, query.offset + query.limit).map(clone), total: matching.length, start: query.offset };
}

/** The key of a user's chat: ids are unique per user, so the user is part of it. */
const chatKey = (userId: string, id: string): string => `${userId}\u0000${id}`;

function insertUnique<T>(map: Map<string, T>, id: string, row: T, what: string): void {
  if (map.has(id)) throw new Error(`${what} ${id} already exists`);
  map.set(id, row);
}


function paginate(rows: ProjectRecord[], query: ProjectListQuery): Page<ProjectRecord> {
  const word = query.searchWord?.toLowerCase();
  const matching = rows
    .filter((p) => p.userId === query.userId && (!word || p.name.toLowerCase().includes(word)))
    .sort(compareNewestFirst);
  const after = query.after;
  const start = after ? matching.filter((p) => compareNewestFirst(p, after) <= 0).length : (query.offset ?? 0);
  return { items: matching.slice(start, start + query.limit).map(clone), total: matching.length, start };
}

/**
 * The job queue in memory. Each method does its reads and writes without awaiting in between, so
 * it is atomic; a job's lease is checked by owner and generation as in the SQL adapters.
 */
function memoryJobs(tables: () => Tables): StorageAdapter['jobs'] {
  const heldBy = (lease: JobLease) => {
    const job = tables().jobs.get(lease.jobId);
    return job && job.owner === lease.owner && job.generation === lease.generation ? job : undefined;
  };
  const reset = (job: JobRecord): JobRecord => ({ ...job, owner: null, leaseExpiresAt: null, generation: job.generation + 1 });
  return {
    async insert(job) {
      const t = tables();
      if (!t.documents.has(job.documentId)) throw new Error(`Document ${job.documentId} does not exist`);
      insertUnique(t.jobs, job.id, clone({ size: 0, attempts: 0, ...job, owner: null, leaseExpiresAt: null, generation: 0 }), 'Job');
    },
    async list() {
      return [...tables().jobs.values()].sort((a, b) => compareNewestFirst(b, a)).map(clone);
    },
    async get(id) {
      const job = tables().jobs.get(id);
      return job && clone(job);
    },
    async delete(id) {
      tables().jobs.delete(id);
    },
    async claim({ owner, now, leaseMs, maxBytes, overdueAt, idleTenantsOnly }) {
      const t = tables();
      const live = (j: JobRecord) => j.owner !== null && j.leaseExpiresAt !== null && j.leaseExpiresAt.getTime() > now.getTime();
      const leased = new Map<string, number>();
      for (const j of t.jobs.values()) if (live(j)) leased.set(j.tenant, (leased.get(j.tenant) ?? 0) + 1);
      const running = (j: JobRecord) => leased.get(j.tenant) ?? 0;
      const fits = (j: JobRecord) => maxBytes === undefined || j.size <= maxBytes || (overdueAt !== undefined && j.createdAt.getTime() <= overdueAt.getTime());
      const job = [...t.jobs.values()]
        .filter((j) => !live(j) && fits(j) && (!idleTenantsOnly || running(j) === 0))
        .sort((a, b) => running(a) - running(b) || compareNewestFirst(b, a))[0];
      if (!job) return undefined;
      const claimed: JobRecord = { ...job, owner, leaseExpiresAt: new Date(now.getTime() + leaseMs), attempts: job.attempts + 1, generation: job.generation + 1 };
      t.jobs.set(job.id, claimed);
      return {
        jobId: job.id,
        documentId: job.documentId,
        tenant: job.tenant,
        owner,
        generation: claimed.generation,
        attempts: claimed.attempts,
        size: job.size,
        expiresAt: claimed.leaseExpiresAt as Date,
      };
    },
    async lockTenant(tenant) {
      // Memory transactions run one at a time: counting is enough.
      let n = 0;
      for (const j of tables().jobs.values()) if (j.tenant === tenant) n++;
      return n;
    },
    async heartbeat(lease, { now, leaseMs }) {
      const job = heldBy(lease);
      if (job) {
        tables().jobs.set(job.id, { ...job, leaseExpiresAt: new Date(now.getTime() + leaseMs) });
        return 'held';
      }
      return tables().jobs.has(lease.jobId) ? 'lost' : 'cancelled';
    },
    async finish(lease) {
      return heldBy(lease) ? tables().jobs.delete(lease.jobId) : false;
    },
    async release(lease) {
      const job = heldBy(lease);
      if (job) tables().jobs.set(job.id, reset(job));
      return job !== undefined;
    },
    async releaseOwner(owner) {
      const t = tables();
      let n = 0;
      for (const job of [...t.jobs.values()]) {
        if (job.owner !== owner) continue;
        t.jobs.set(job.id, reset(job));
        n++;
      }
      return n;
    },
    async cancel(documentId) {
      const t = tables();
      let n = 0;
      for (const job of [...t.jobs.values()]) if (job.documentId === documentId && t.jobs.delete(job.id)) n++;
      return n;
    },
  };
}

function adapterOver(tables: () => Tables, transaction: StorageAdapter['transaction'], close: () => Promise<void>): StorageAdapter {
  return {
    users: {
      async insert(user) {
        insertUnique(tables().users, user.id, clone(user), 'User');
      },
      async get(id) {
        const user = tables().users.get(id);
        return user && clone(user);
      },
      // Transactions run one at a time already: the lock is the queue. Counted by scanning.
      async lockCounts(userId) {
        const t = tables();
        if (!t.users.has(userId)) return undefined;
        const owned = (rows: Map<string, { readonly userId: string }>) => {
          let n = 0;
          for (const row of rows.values()) if (row.userId === userId) n++;
          return n;
        };
        let messages = 0;
        for (const chat of t.chats.values()) if (chat.userId === userId) messages += t.messages.get(chatKey(userId, chat.id))?.length ?? 0;
        return {
          keys: owned(t.apiKeys),
          projects: owned(t.projects),
          credentials: owned(t.credentials),
          chats: owned(t.chats),
          tools: owned(t.tools),
          mcpServers: owned(t.mcpServers),
          documents: owned(t.documents),
          messages,
        };
      },
    },
    apiKeys: {
      // Memory transactions run one at a time already: nothing to wait for.
      async lockBootstrap() {},
      async insert(key) {
        const t = tables();
        if ([...t.apiKeys.values()].some((k) => k.lookup === key.lookup)) throw new Error('API key lookup already exists');
        insertUnique(t.apiKeys, key.id, clone(key), 'API key');
      },
      async findByLookup(lookup) {
        const key = [...tables().apiKeys.values()].find((k) => k.lookup === lookup);
        return key && clone(key);
      },
      async list({ userId, limit, offset }) {
        const matching = [...tables().apiKeys.values()].filter((k) => k.userId === userId).sort(compareNewestFirst);
        return { items: matching.slice(offset, offset + limit).map(clone), total: matching.length, start: offset };
      },
      async listAll() {
        return [...tables().apiKeys.values()].sort(compareNewestFirst).map(clone);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.apiKeys.get(id)?.userId !== userId) return false;
        return t.apiKeys.delete(id);
      },
      async touch(id, at) {
        const t = tables();
        const key = t.apiKeys.get(id);
        if (key) t.apiKeys.set(id, { ...key, lastUsedAt: new Date(at.getTime()) });
      },
      async count() {
        return tables().apiKeys.size;
      },
    },
    projects: {
      async insert(project) {
        insertUnique(tables().projects, project.id, clone(project), 'Project');
      },
      async get(userId, id) {
        const project = tables().projects.get(id);
        return project?.userId === userId ? clone(project) : undefined;
      },
      async list(query) {
        return paginate([...tables().projects.values()], query);
      },
      async update(userId, id, patch) {
        return patchRow(tables().projects, id, patch, userId);
      },
      async usingCredential(userId, credentialId) {
        return [...tables().projects.values()]
          .filter((p) => p.userId === userId && p.credentialId === credentialId)
          .map((p) => p.id)
          .sort();
      },
      async namingNoCredential(userId, provider) {
        return [...tables().projects.values()]
          .filter((p) => p.userId === userId && p.provider === provider && p.credentialId === null)
          .map((p) => p.id)
          .sort();
      },
      async delete(userId, id) {
        const t = tables();
        if (t.projects.get(id)?.userId !== userId) return false;
        for (const doc of [...t.documents.values()]) if (doc.projectId === id) deleteDocumentRows(t, doc.id);
        for (const file of [...t.files.values()]) if (file.projectId === id) t.files.delete(file.id);
        for (const chat of [...t.chats.values()]) {
          if (chat.projectId === id) {
            t.chats.delete(chatKey(chat.userId, chat.id));
            t.messages.delete(chatKey(chat.userId, chat.id));
          }
        }
        for (const tool of [...t.tools.values()]) if (tool.projectId === id) t.tools.delete(tool.id);
        for (const server of [...t.mcpServers.values()]) if (server.projectId === id) t.mcpServers.delete(server.id);
        t.settings.delete(id);
        return t.projects.delete(id);
      },
    },
    documents: {
      async insert(doc) {
        const t = tables();
        if (t.projects.get(doc.projectId)?.userId !== doc.userId) throw new Error(`Project ${doc.projectId} does not exist`);
        insertUnique(t.documents, doc.id, clone(doc), 'Document');
      },
      async get(userId, id) {
        const doc = tables().documents.get(id);
        return doc?.userId === userId ? clone(doc) : undefined;
      },
      async list(query) {
        const matching = [...tables().documents.values()]
          .filter((d) => d.userId === query.userId && d.projectId === query.projectId && (!query.status || d.status === query.status))
          .sort(compareNewestFirst);
        return {
          items: matching.slice(query.offset, query.offset + query.limit).map(clone),
          total: matching.length,
          start: query.offset,
        };
      },
      async update(id, patch) {
        return patchRow(tables().documents, id, patch);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.documents.get(id)?.userId !== userId) return false;
        deleteDocumentRows(t, id);
        return true;
      },
      async listByStatus(statuses) {
        return [...tables().documents.values()]
          .filter((d) => statuses.includes(d.status))
          .sort((a, b) => compareNewestFirst(b, a))
          .map(clone);
      },
      async blobKeysOfProject(projectId) {
        const t = tables();
        const keys = new Set<string>();
        for (const d of t.documents.values()) if (d.projectId === projectId && d.sourceKey) keys.add(d.sourceKey);
        for (const f of t.files.values()) if (f.projectId === projectId) keys.add(f.id);
        return [...keys];
      },
    },
    files: {
      async insert(file) {
        const t = tables();
        if (t.projects.get(file.projectId)?.userId !== file.userId) throw new Error(`Project ${file.projectId} does not exist`);
        insertUnique(t.files, file.id, clone(file), 'File');
      },
      async get(userId, id) {
        const file = tables().files.get(id);
        return file?.userId === userId ? clone(file) : undefined;
      },
      async deleteIfUnreferenced(id) {
        const t = tables();
        const file = t.files.get(id);
        if (!file) return false;
        for (const d of t.documents.values()) if (d.userId === file.userId && (d.fileId === id || d.sourceKey === id)) return false;
        return t.files.delete(id);
      },
    },
    chunks: {
      async replaceForDocument(documentId, chunks, embeddings) {
        const t = tables();
        if (!t.documents.has(documentId)) throw new Error(`Document ${documentId} does not exist`);
        if (embeddings && embeddings.vectors.length !== chunks.length) {
          throw new Error(`${embeddings.vectors.length} vectors for ${chunks.length} chunks`);
        }
        deleteChunkRows(t, documentId);
        chunks.forEach((chunk, i) => {
          insertUnique(t.chunks, chunk.id, clone(chunk), 'Chunk');
          if (embeddings) t.embeddings.set(chunk.id, { model: embeddings.model, vector: (embeddings.vectors[i] as Float32Array).slice() });
        });
      },
      async embeddingsByText(documentId, model) {
        const t = tables();
        const out = new Map<string, Float32Array>();
        for (const chunk of t.chunks.values()) {
          const stored = chunk.documentId === documentId ? t.embeddings.get(chunk.id) : undefined;
          if (stored?.model === model) out.set(chunk.text, stored.vector.slice());
        }
        return out;
      },
      async embeddingsById(projectId, ids, model) {
        const t = tables();
        const out = new Map<string, Float32Array>();
        for (const id of ids) {
          const stored = t.embeddings.get(id);
          if (stored?.model === model && t.chunks.get(id)?.projectId === projectId) out.set(id, stored.vector.slice());
        }
        return out;
      },
      async getMany(projectId, ids) {
        const t = tables();
        return ids.flatMap((id) => {
          const chunk = t.chunks.get(id);
          return chunk?.projectId === projectId ? [clone(chunk)] : [];
        });
      },
      async get(userId, id) {
        const t = tables();
        const chunk = t.chunks.get(id);
        return chunk && t.documents.get(chunk.documentId)?.userId === userId ? clone(chunk) : undefined;
      },
      async listByDocument(documentId) {
        return chunksOf(tables(), documentId).map(clone);
      },
      async pageByDocument(query) {
        const all = chunksOf(tables(), query.documentId);
        return { items: all.slice(query.offset, query.offset + query.limit).map(clone), total: all.length, start: query.offset };
      },
      async keywordSearch(projectId, query, limit) {
        const docs = [...tables().chunks.values()].filter((c) => c.projectId === projectId);
        return bm25Rank(docs, query, limit);
      },
      async anyInProject(projectId) {
        for (const c of tables().chunks.values()) if (c.projectId === projectId) return true;
        return false;
      },
    },
    knowledgeSettings: {
      async get(projectId) {
        const settings = tables().settings.get(projectId);
        return settings && clone(settings);
      },
      async put(projectId, settings) {
        const t = tables();
        if (!t.projects.has(projectId)) throw new Error(`Project ${projectId} does not exist`);
        t.settings.set(projectId, clone(settings));
      },
    },
    jobs: memoryJobs(tables),
    credentials: {
      // No await between reading and writing: each call is atomic, as the contract asks.
      async insert(credential) {
        const t = tables();
        const current = defaultCredential(t, credential.userId, credential.provider);
        const isDefault = credential.isDefault === 'if-none' ? current === undefined : credential.isDefault;
        insertUnique(t.credentials, credential.id, clone({ ...credential, isDefault }), 'Credential');
        if (isDefault && current) t.credentials.set(current.id, { ...current, isDefault: false });
        return clone({ ...credential, isDefault });
      },
      async get(userId, id) {
        const c = tables().credentials.get(id);
        return c?.userId === userId ? clone(c) : undefined;
      },
      async list(userId) {
        return [...tables().credentials.values()].filter((c) => c.userId === userId).sort(compareNewestFirst).map(clone);
      },
      async defaultOf(userId, provider) {
        const c = defaultCredential(tables(), userId, provider);
        return c && clone(c);
      },
      async update(userId, id, patch) {
        const t = tables();
        const row = t.credentials.get(id);
        const current = row?.userId === userId && patch.isDefault === true ? defaultCredential(t, userId, row.provider) : undefined;
        if (current && current.id !== id) t.credentials.set(current.id, { ...current, isDefault: false });
        return patchRow(t.credentials, id, patch, userId);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.credentials.get(id)?.userId !== userId) return false;
        return t.credentials.delete(id);
      },
    },
    chats: {
      async insert(chat) {
        const t = tables();
        if (t.projects.get(chat.projectId)?.userId !== chat.userId) throw new Error(`Project ${chat.projectId} does not exist`);
        const key = chatKey(chat.userId, chat.id);
        if (t.chats.has(key)) throw new PlatformError('conflict', `Chat ${chat.id} already exists`);
        t.chats.set(key, clone(chat));
        t.messages.set(key, []);
      },
      async get(userId, id) {
        const chat = tables().chats.get(chatKey(userId, id));
        return chat && clone(chat);
      },
      async list(query) {
        const matching = [...tables().chats.values()]
          .filter((c) => c.userId === query.userId && (query.projectId === undefined || c.projectId === query.projectId))
          .sort(compareNewestFirst);
        return { items: matching.slice(query.offset, query.offset + query.limit).map(clone), total: matching.length, start: query.offset };
      },
      async update(userId, id, patch) {
        return patchRow(tables().chats, chatKey(userId, id), patch, userId);
      },
      async delete(userId, id) {
        const t = tables();
        t.messages.delete(chatKey(userId, id));
        return t.chats.delete(chatKey(userId, id));
      },
      async touch(userId, id, at) {
        const t = tables();
        const chat = t.chats.get(chatKey(userId, id));
        if (chat) t.chats.set(chatKey(userId, id), { ...chat, updatedAt: new Date(at.getTime()) });
      },
      async appendMessages(userId, chatId, messages) {
        const list = tables().messages.get(chatKey(userId, chatId));
        if (!list) throw new Error(`Chat ${chatId} does not exist`);
        // An empty list of sources is stored as none, as the other stores do.
        for (const { sources, ...m } of messages) list.push(clone({ ...m, ...(sources?.length ? { sources } : {}), chatId, position: list.length }));
      },
      async messages(userId, chatId) {
        return (tables().messages.get(chatKey(userId, chatId)) ?? []).map(clone);
      },
      async recentMessages(userId, chatId, { limit, before }) {
        const list = tables().messages.get(chatKey(userId, chatId)) ?? [];
        const end = Math.min(before ?? list.length, list.length);
        return list.slice(Math.max(0, end - limit), Math.max(0, end)).reverse().map(clone);
      },
    },
    tools: {
      async insert(tool) {
        const t = tables();
        if (t.projects.get(tool.projectId)?.userId !== tool.userId) throw new Error(`Project ${tool.projectId} does not exist`);
        insertUnique(t.tools, tool.id, clone(tool), 'Tool');
      },
      async get(userId, id) {
        const tool = tables().tools.get(id);
        return tool?.userId === userId ? clone(tool) : undefined;
      },
      async list(query) {
        return projectPage(tables().tools, query);
      },
      async enabled(projectId) {
        return [...tables().tools.values()].filter((t) => t.projectId === projectId && t.enabled).sort((a, b) => compareNewestFirst(b, a)).map(clone);
      },
      async update(userId, id, patch) {
        return patchRow(tables().tools, id, patch, userId);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.tools.get(id)?.userId !== userId) return false;
        return t.tools.delete(id);
      },
    },
    mcpServers: {
      async insert(server) {
        const t = tables();
        if (t.projects.get(server.projectId)?.userId !== server.userId) throw new Error(`Project ${server.projectId} does not exist`);
        if ([...t.mcpServers.values()].some((m) => m.projectId === server.projectId && m.name === server.name)) {
          throw new PlatformError('conflict', `An MCP server named "${server.name}" already exists in this project`);
        }
        insertUnique(t.mcpServers, server.id, clone(server), 'MCP server');
      },
      async get(userId, id) {
        const server = tables().mcpServers.get(id);
        return server?.userId === userId ? clone(server) : undefined;
      },
      async list(query) {
        return projectPage(tables().mcpServers, query);
      },
      async forProject(projectId) {
        return [...tables().mcpServers.values()].filter((m) => m.projectId === projectId).sort((a, b) => compareNewestFirst(b, a)).map(clone);
      },
      async delete(userId, id) {
        const t = tables();
        if (t.mcpServers.get(id)?.userId !== userId) return false;
        return t.mcpServers.delete(id);
      },
    },
    transaction,
    close,
  };
}

/**
 * Storage in process memory: for tests and embedding. Rows are copied in and out, so callers
 * never share objects with the store. Transactions run one at a time over a snapshot that is
 * put back when the function throws.
 */
export function memoryStorage(): StorageAdapter {
  let tables: Tables = emptyTables();
  let queue: Promise<unknown> = Promise.resolve();
  const close = async () => {};

  const transaction: StorageAdapter['transaction'] = (fn) => {
    const run = queue.then(async () => {
      const snapshot = copyTables(tables);
      // Inside a transaction, `transaction` runs in the same one (queueing would deadlock).
      const tx: StorageAdapter = adapterOver(() => tables, (inner) => inner(tx), close);
      try {
        return await fn(tx);
      } catch (error) {
        tables = snapshot;
        throw error;
      }
    });
    queue = run.catch(() => {});
    return run;
  };
  const root = adapterOver(() => tables, transaction, close);
  return root;
}
