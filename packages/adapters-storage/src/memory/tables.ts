import type {
  ApiKeyRecord,
  ApprovalRecord,
  AuditEventRecord,
  ChatMessageRecord,
  ChatRecord,
  ChunkRecord,
  CredentialRecord,
  DocumentRecord,
  FileRecord,
  JobRecord,
  ListPosition,
  McpServerRecord,
  Page,
  ProjectRecord,
  ResponseRecord,
  ToolRecord,
  UserRecord,
} from '@agent-platform/core';

/** The memory adapter's rows, one map per table (by id unless said otherwise). */
export interface Tables {
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
  approvals: Map<string, ApprovalRecord>;
  /**
   * Each approval group's claim of its continuation (`ApprovalRepository.claim`), by
   * `approvalGroupKey(userId, groupId)`: the SQL adapters keep it on the group's rows, so it is
   * part of the transactional state here too (a rollback undoes it). Entries are never changed
   * in place: a renewal sets a new one.
   */
  approvalClaims: Map<string, { readonly by: string; readonly at: Date }>;
  responses: Map<string, ResponseRecord>;
  audit: Map<string, AuditEventRecord>;
}

export const emptyTables = (): Tables => ({
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
  approvals: new Map(),
  approvalClaims: new Map(),
  responses: new Map(),
  audit: new Map(),
});

export const copyTables = (t: Tables): Tables => ({
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
  approvals: new Map(t.approvals),
  approvalClaims: new Map(t.approvalClaims),
  responses: new Map(t.responses),
  // The same map, not a copy: a transaction that rolls back puts its snapshot back, and must not
  // take with it the events other requests appended meanwhile (an event is appended outside
  // any transaction, before its change). A transaction appends its own events last.
  audit: t.audit,
});

/** Deep copy through structuredClone: rows hold nested metadata objects and Dates. */
export const clone = <T>(row: T): T => structuredClone(row);

/**
 * Applies the defined members of `patch` to a row (of `userId`, when given); answers a copy
 * of the updated row, or undefined when there is no such row.
 */
export function patchRow<T extends { readonly userId: string }>(map: Map<string, T>, id: string, patch: object, userId?: string): T | undefined {
  const row = map.get(id);
  if (!row || (userId !== undefined && row.userId !== userId)) return undefined;
  const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  const updated = clone({ ...row, ...defined });
  map.set(id, updated);
  return clone(updated);
}

/** Deletes the document's chunks with their stored vectors. */
export function deleteChunkRows(t: Tables, documentId: string): void {
  for (const [id, chunk] of t.chunks) {
    if (chunk.documentId !== documentId) continue;
    t.chunks.delete(id);
    t.embeddings.delete(id);
  }
}

/** Deletes the document with its chunks, their vectors and its jobs (what deleting a document or its project takes). */
export function deleteDocumentRows(t: Tables, documentId: string): void {
  t.documents.delete(documentId);
  deleteChunkRows(t, documentId);
  for (const [id, job] of t.jobs) if (job.documentId === documentId) t.jobs.delete(id);
}

/** Newest first: createdAt descending, then id descending. */
export function compareNewestFirst(a: ListPosition, b: ListPosition): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** A user's rows of one project (tools, MCP servers), newest first: one offset page. */
export function projectPage<T extends ListPosition & { readonly userId: string; readonly projectId: string }>(
  map: Map<string, T>,
  query: { userId: string; projectId: string; limit: number; offset: number },
): Page<T> {
  const matching = [...map.values()].filter((r) => r.userId === query.userId && r.projectId === query.projectId).sort(compareNewestFirst);
  return { items: matching.slice(query.offset, query.offset + query.limit).map(clone), total: matching.length, start: query.offset };
}

/** The key of a user's approval group (`Tables.approvalClaims`). */
export const approvalGroupKey = (userId: string, groupId: string): string => `${userId}\u0000${groupId}`;

/** The key of a user's chat: ids are unique per user, so the user is part of it. */
export const chatKey = (userId: string, id: string): string => `${userId}\u0000${id}`;

/** Inserts a row under a new id; throws when the id is taken (as a primary key would). */
export function insertUnique<T>(map: Map<string, T>, id: string, row: T, what: string): void {
  if (map.has(id)) throw new Error(`${what} ${id} already exists`);
  map.set(id, row);
}
