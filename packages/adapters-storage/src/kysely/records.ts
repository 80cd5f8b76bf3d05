import type {
  ApiKeyRecord,
  ApprovalRecord,
  ChatMessageRecord,
  ChatRecord,
  ChunkRecord,
  CredentialRecord,
  DocumentRecord,
  FileRecord,
  JobRecord,
  McpServerRecord,
  ProjectRecord,
  ToolRecord,
  UserRecord,
} from '@agent-platform/core';
import type { DocumentStatus } from '@agent-platform/core/schemas';
import type { Selectable } from 'kysely';
import type { Database } from './database.js';
import { readFlag, readTime, type StorageDialect } from './dialect.js';

type KeyRow = Selectable<Database['api_keys']>;
type ProjectRow = Selectable<Database['projects']>;

/** Rows to records, for one dialect (JSON columns are read by the dialect). */
export function createRecords(dialect: Pick<StorageDialect, 'readJson'>) {
  const json = (value: unknown) => dialect.readJson(value);
  const toUser = (row: Pick<Database['users'], 'id' | 'created_at'>): UserRecord => ({ id: row.id, createdAt: readTime(row.created_at) });

  const toKey = (row: KeyRow): ApiKeyRecord => ({
    id: row.id,
    userId: row.user_id,
    name: row.name,
    lookup: row.lookup,
    hash: row.hash,
    createdAt: readTime(row.created_at),
    lastUsedAt: row.last_used_at === null ? null : readTime(row.last_used_at),
  });

  const toProject = (row: ProjectRow): ProjectRecord => ({
    id: row.id,
    userId: row.user_id,
    name: row.name,
    description: row.description,
    instructions: row.instructions,
    icon: row.icon,
    color: row.color,
    model: row.model,
    provider: row.provider,
    credentialId: row.credential_id,
    providerOptions: row.provider_options === null ? null : JSON.parse(row.provider_options),
    createdAt: readTime(row.created_at),
    updatedAt: readTime(row.updated_at),
  });

  const toDocument = (row: Selectable<Database['documents']>): DocumentRecord => ({
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
    metadata: json(row.metadata) as Record<string, unknown>,
    createdAt: readTime(row.created_at),
    updatedAt: readTime(row.updated_at),
  });

  const toFile = (row: Selectable<Database['files']>): FileRecord => ({
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    fileName: row.file_name,
    fileType: row.file_type,
    size: Number(row.size),
    createdAt: readTime(row.created_at),
  });

  const toChunk = (row: Omit<Selectable<Database['chunks']>, 'row_id'>): ChunkRecord => ({
    id: row.id,
    documentId: row.document_id,
    projectId: row.project_id,
    index: row.chunk_index,
    text: row.text,
    tokenCount: row.token_count,
    metadata: json(row.metadata) as Record<string, unknown>,
  });

  const toJob = (row: Selectable<Database['jobs']>): JobRecord => ({
    id: row.id,
    kind: row.kind as JobRecord['kind'],
    documentId: row.document_id,
    tenant: row.tenant,
    payload: json(row.payload) as Record<string, unknown>,
    attempts: row.attempts,
    createdAt: readTime(row.created_at),
    size: Number(row.size),
    owner: row.owner,
    leaseExpiresAt: row.lease_expires_at === null ? null : readTime(row.lease_expires_at),
    generation: row.generation,
  });

  const toCredential = (row: Selectable<Database['credentials']>): CredentialRecord => ({
    id: row.id,
    userId: row.user_id,
    name: row.name,
    provider: row.provider,
    secret: row.secret,
    last4: row.last4,
    baseUrl: row.base_url,
    baseUrlSecret: row.base_url_secret,
    fields: row.fields === null ? null : JSON.parse(row.fields),
    proxy: readFlag(row.proxy),
    isValid: row.is_valid === null ? null : readFlag(row.is_valid),
    isDefault: readFlag(row.is_default),
    createdAt: readTime(row.created_at),
    updatedAt: readTime(row.updated_at),
  });

  const toChat = (row: Selectable<Database['chats']>): ChatRecord => ({
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    name: row.name,
    createdAt: readTime(row.created_at),
    updatedAt: readTime(row.updated_at),
  });

  const toMessage = (row: Selectable<Database['chat_messages']>): ChatMessageRecord => ({
    chatId: row.chat_id,
    position: row.position,
    role: row.role as ChatMessageRecord['role'],
    content: row.content,
    toolCalls: row.tool_calls === null ? null : (json(row.tool_calls) as ChatMessageRecord['toolCalls']),
    toolCallId: row.tool_call_id,
    ...(row.sources === null ? {} : { sources: json(row.sources) as ChatMessageRecord['sources'] }),
    ...(row.parts === null || row.parts === undefined ? {} : { parts: json(row.parts) as ChatMessageRecord['parts'] }),
    ...(row.provider === null || row.provider === undefined ? {} : { provider: row.provider }),
    ...(row.reasoning === null || row.reasoning === undefined ? {} : { reasoning: json(row.reasoning) as ChatMessageRecord['reasoning'] }),
    createdAt: readTime(row.created_at),
  });

  const toTool = (row: Selectable<Database['tools']>): ToolRecord => ({
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    name: row.name,
    description: row.description,
    language: row.language as ToolRecord['language'],
    code: row.code,
    parameters: json(row.parameters) as Record<string, unknown>,
    dependencies: json(row.dependencies) as string[],
    enabled: readFlag(row.enabled),
    exposeOverMcp: readFlag(row.expose_over_mcp),
    requiresApproval: readFlag(row.requires_approval),
    createdAt: readTime(row.created_at),
    updatedAt: readTime(row.updated_at),
  });

  const toMcpServer = (row: Selectable<Database['mcp_servers']>): McpServerRecord => ({
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    name: row.name,
    transport: row.transport as McpServerRecord['transport'],
    url: row.url,
    command: row.command,
    args: json(row.args) as string[],
    headerNames: json(row.header_names) as string[],
    envNames: json(row.env_names) as string[],
    secrets: row.secrets,
    allowSampling: readFlag(row.allow_sampling),
    requiresApproval: JSON.parse(row.requires_approval) as McpServerRecord['requiresApproval'],
    createdAt: readTime(row.created_at),
    updatedAt: readTime(row.updated_at),
  });

  const toApproval = (row: Selectable<Database['approvals']>): ApprovalRecord => ({
    id: row.id,
    userId: row.user_id,
    projectId: row.project_id,
    chatId: row.chat_id,
    kind: row.kind as ApprovalRecord['kind'],
    groupId: row.group_id,
    callId: row.call_id,
    tool: row.tool,
    arguments: row.arguments,
    message: row.message,
    schema: row.schema === null ? null : (json(row.schema) as Record<string, unknown>),
    resume: row.resume === null ? null : (json(row.resume) as Record<string, unknown>),
    state: row.state as ApprovalRecord['state'],
    reason: row.reason,
    content: row.content === null ? null : (json(row.content) as Record<string, unknown>),
    createdAt: readTime(row.created_at),
    expiresAt: readTime(row.expires_at),
    decidedAt: row.decided_at === null ? null : readTime(row.decided_at),
  });
  return { toUser, toKey, toProject, toDocument, toFile, toChunk, toJob, toCredential, toChat, toMessage, toTool, toMcpServer, toApproval };
}

/** The converters of one dialect. */
export type Records = ReturnType<typeof createRecords>;
