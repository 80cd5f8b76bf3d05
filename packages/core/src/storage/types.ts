import type { ApiKeyRepository } from './api-keys.js';
import type { ApprovalRepository } from './approvals.js';
import type { AuditRepository } from './audit.js';
import type { ChatRepository } from './chats.js';
import type { ChunkRepository } from './chunks.js';
import type { CredentialRepository } from './credentials.js';
import type { DocumentRepository } from './documents.js';
import type { FileRepository } from './files.js';
import type { JobRepository } from './jobs.js';
import type { McpServerRepository } from './mcp-servers.js';
import type { ProjectRepository } from './projects.js';
import type { ResponseRepository } from './responses.js';
import type { SettingsRepository } from './settings.js';
import type { StreamRepository } from './streams.js';
import type { ToolRepository } from './tools.js';
import type { UserRepository } from './users.js';

export type { ApiKeyRecord, ApiKeyRepository } from './api-keys.js';
export type { ApprovalDecision, ApprovalKind, ApprovalRecord, ApprovalRepository, ApprovalState, ResumeClaim, ResumeClaimResult } from './approvals.js';
export type { AuditEventRecord, AuditOutcome, AuditQuery, AuditRepository } from './audit.js';
export type { ChatMessageRecord, ChatPatch, ChatRecord, ChatRepository, MessageSource, StoredContentPart } from './chats.js';
export type { ChunkEmbeddings, ChunkRecord, ChunkRepository, KeywordHit } from './chunks.js';
export type { CredentialPatch, CredentialRecord, CredentialRepository, NewCredential, ShownCredentialFields } from './credentials.js';
export type { DocumentListQuery, DocumentPatch, DocumentRecord, DocumentRepository } from './documents.js';
export type { FileRecord, FileRepository } from './files.js';
export type { ClaimOptions, JobLease, JobRecord, JobRepository, LeaseState, NewJob } from './jobs.js';
export type { McpServerRecord, McpServerRepository } from './mcp-servers.js';
export type { ListPosition, Page } from './page.js';
export type { ProjectListQuery, ProjectPatch, ProjectRecord, ProjectRepository } from './projects.js';
export type { ResponseRecord, ResponseRecordStatus, ResponseRepository } from './responses.js';
export type { SettingsRepository } from './settings.js';
export type { StreamRepository, StreamRow } from './streams.js';
export type { ToolPatch, ToolRecord, ToolRepository } from './tools.js';
export type { UserCounts, UserRecord, UserRepository } from './users.js';

/**
 * The storage plug-in interface: one repository per kind of row (each in its own file beside
 * this one), and transactions over all of them. Repositories are scoped by owner: every read and
 * write of a user's resource takes the `userId`, so an adapter can never hand one user another's
 * rows. Timestamps are `Date`s; adapters store them as they like but must return equal instants.
 */
export interface StorageAdapter {
  readonly users: UserRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly projects: ProjectRepository;
  readonly documents: DocumentRepository;
  readonly files: FileRepository;
  readonly chunks: ChunkRepository;
  readonly knowledgeSettings: SettingsRepository;
  readonly jobs: JobRepository;
  readonly credentials: CredentialRepository;
  readonly chats: ChatRepository;
  readonly tools: ToolRepository;
  readonly mcpServers: McpServerRepository;
  /** Stored responses (`/api/v1/responses`). */
  readonly responses: ResponseRepository;
  /** Chat streams in the database (SQLite and PostgreSQL adapters); absent in memory, where `memoryStreamStore` serves. */
  readonly streams?: StreamRepository;
  /** Pending questions of runs (tool calls to approve, MCP elicitations), and their decisions. */
  readonly approvals: ApprovalRepository;
  /** The audit log: who changed what, when and from where (append-only). */
  readonly audit: AuditRepository;
  /** Runs `fn` atomically: all its writes land or none do. */
  transaction<T>(fn: (tx: StorageAdapter) => Promise<T>): Promise<T>;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}
