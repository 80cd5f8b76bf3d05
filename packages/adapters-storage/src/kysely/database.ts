import type { ColumnType, Generated } from 'kysely';

/**
 * A point in time: SQLite stores integers of epoch milliseconds (they sort correctly, compare
 * exactly and round-trip a `Date` to the millisecond), PostgreSQL `timestamptz` (read back as a
 * `Date`). `new Date(value)` reads either.
 */
export type Timestamp = number | Date;
/** A boolean: SQLite 1 or 0, PostgreSQL `boolean`. `value === 1 || value === true` reads either. */
export type Flag = number | boolean;
/** JSON: written as its text; read back as text (SQLite) or parsed (PostgreSQL `json`). */
export type Json = ColumnType<unknown, string, string>;
/** A chunk's row number: SQLite `integer`, PostgreSQL `bigint` (read back as a string). */
export type RowId = number | string;

/**
 * Tables as kysely sees them, the same logical schema on every dialect. Where the dialects store
 * a value differently the column's type says so, and the dialect's codecs (see `StorageDialect`)
 * write it: timestamps (`Timestamp`), flags (`Flag`), JSON (`Json`) and 64-bit integers.
 */
export interface Database {
  users: {
    id: string;
    created_at: Timestamp;
    /** What the user has of each kind, kept by triggers (`COUNT_COLUMNS`; SQLite 0002 and 0021, PostgreSQL 0001 and 0012). */
    project_count: Generated<number>;
    key_count: Generated<number>;
    credential_count: Generated<number>;
    chat_count: Generated<number>;
    tool_count: Generated<number>;
    mcp_server_count: Generated<number>;
    document_count: Generated<number>;
    message_count: Generated<number>;
  };
  api_keys: {
    id: string;
    user_id: string;
    name: string;
    lookup: string;
    hash: string;
    created_at: Timestamp;
    last_used_at: Timestamp | null;
  };
  documents: {
    id: string;
    user_id: string;
    project_id: string;
    file_id: string | null;
    /** Blob key of the document's source (its own id, or its uploaded file's id). */
    source_key: string;
    file_name: string;
    file_type: string;
    source_type: string;
    status: string;
    chunk_count: number;
    vector_count: number;
    error: string | null;
    metadata: Json;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  files: {
    id: string;
    user_id: string;
    project_id: string;
    file_name: string;
    file_type: string;
    /** bigint on PostgreSQL (read back as a string) */
    size: number | string;
    created_at: Timestamp;
  };
  chunks: {
    row_id: Generated<RowId>;
    id: string;
    document_id: string;
    project_id: string;
    chunk_index: number;
    text: string;
    token_count: number;
    metadata: Json;
  };
  credentials: {
    id: string;
    user_id: string;
    name: string;
    provider: string;
    secret: string;
    last4: string;
    base_url: string | null;
    /** Sealed whole base URL, or null (migration 0010). */
    base_url_secret: string | null;
    /** JSON of the shown provider fields (`ShownCredentialFields`), or null for a key-only credential stored before them (SQLite 0023, PostgreSQL 0014). */
    fields: string | null;
    proxy: Flag;
    is_valid: Flag | null;
    /** The user's default credential of the provider (SQLite 0016, PostgreSQL 0007): at most one per user and provider, by a partial unique index. */
    is_default: Flag;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  /** Bytes of uploaded files and posted texts (`BlobStore` in the database: SQLite 0013, PostgreSQL 0004). */
  blobs: { key: string; bytes: Uint8Array; created_at: Timestamp };
  /** Named rows whose upsert serializes a one-time step across instances (first-key bootstrap). */
  locks: { name: string };
  chats: { id: string; user_id: string; project_id: string; name: string; created_at: Timestamp; updated_at: Timestamp };
  chat_messages: {
    /** The chat's user: chat ids are unique per user (SQLite 0020, PostgreSQL 0011). */
    user_id: string;
    chat_id: string;
    position: number;
    role: string;
    content: string | null;
    /** JSON array or null */
    tool_calls: ColumnType<unknown, string | null, string | null>;
    tool_call_id: string | null;
    /** JSON array of `MessageSource` or null (SQLite 0017, PostgreSQL 0008) */
    sources: ColumnType<unknown, string | null, string | null>;
    /** JSON array of `StoredContentPart` (a user message with images) or null (SQLite 0023, PostgreSQL 0014) */
    parts: ColumnType<unknown, string | null, string | null>;
    /** The provider whose model wrote an assistant message, or null (SQLite 0024, PostgreSQL 0015) */
    provider: string | null;
    /** JSON array of `ReasoningBlock` (an assistant message's, with the provider's data) or null (SQLite 0024, PostgreSQL 0015) */
    reasoning: ColumnType<unknown, string | null, string | null>;
    created_at: Timestamp;
  };
  tools: {
    id: string;
    user_id: string;
    project_id: string;
    name: string;
    description: string;
    language: string;
    code: string;
    parameters: Json;
    /** JSON array */
    dependencies: Json;
    enabled: Flag;
    /** Since SQLite 0027 / PostgreSQL 0018. */
    expose_over_mcp: Flag;
    /** SQLite 0026, PostgreSQL 0017. */
    requires_approval: Generated<Flag>;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  mcp_servers: {
    id: string;
    user_id: string;
    project_id: string;
    name: string;
    transport: string;
    url: string | null;
    command: string | null;
    /** JSON array */
    args: Json;
    /** JSON array */
    header_names: Json;
    /** JSON array */
    env_names: Json;
    /** Sealed JSON or null */
    secrets: string | null;
    allow_sampling: Flag;
    /** JSON text: `true`, `false` or the tool names (SQLite 0026, PostgreSQL 0017). */
    requires_approval: Generated<string>;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
  /** Pending questions of runs and their decisions (SQLite 0026, PostgreSQL 0017). */
  approvals: {
    id: string;
    user_id: string;
    project_id: string;
    chat_id: string | null;
    kind: string;
    group_id: string;
    call_id: string;
    tool: string;
    arguments: string;
    message: string | null;
    schema: ColumnType<unknown, string | null, string | null>;
    resume: ColumnType<unknown, string | null, string | null>;
    state: string;
    reason: string | null;
    content: ColumnType<unknown, string | null, string | null>;
    created_at: Timestamp;
    expires_at: Timestamp;
    decided_at: Timestamp | null;
    /** The continuation that claimed the group (ApprovalRepository.claim), and when it last renewed it. */
    resumed_by: string | null;
    resumed_at: Timestamp | null;
  };
  /** The audit log (SQLite 0032, PostgreSQL 0023): one row per change, `fields` a JSON array of names. */
  audit_events: {
    id: string;
    at: Timestamp;
    workspace_id: string | null;
    user_id: string;
    key_id: string | null;
    action: string;
    resource: string;
    resource_id: string | null;
    fields: string;
    outcome: string;
    address: string | null;
    user_agent: string | null;
  };
  /** The vector of a chunk, kept for re-indexing; goes with its chunk row (foreign key cascade). */
  chunk_embeddings: {
    /** `chunks.row_id` */
    chunk_row_id: RowId;
    /** Id of the embedding model that made it. */
    model: string;
    /** float32 values in the machine's byte order (little-endian on x64 and arm64) */
    embedding: Uint8Array;
  };
  knowledge_settings: { project_id: string; settings: Json; updated_at: Timestamp };
  jobs: {
    id: string;
    kind: string;
    document_id: string;
    /** The owner key fair claims share the queue by (`JobRecord.tenant`); migration 0019 (SQLite), 0010 (PostgreSQL). */
    tenant: string;
    payload: Json;
    attempts: number;
    created_at: Timestamp;
    /** Bytes of the document's source (bigint on PostgreSQL, read back as a string); migration 0012 (SQLite), 0003 (PostgreSQL). */
    size: number | string;
    /** The instance holding the lease, or null. */
    owner: string | null;
    lease_expires_at: Timestamp | null;
    /** The fencing token, bumped by every claim and release. */
    generation: number;
  };
  /** Chat streams (SQLite 0013, PostgreSQL 0004); times in ms since the epoch (bigint on PostgreSQL, read back as a string). */
  streams: {
    id: string;
    user_id: string;
    chat_id: string;
    created_at: number | string;
    state: 'unwritten' | 'writing' | 'ended';
    writer: string | null;
    expires_at: number | string | null;
    last_seq: number;
    /** When the writer's lease runs out (SQLite 0015, PostgreSQL 0006); null unless `writing`. */
    lease_until: number | string | null;
  };
  stream_events: { stream_id: string; seq: number; event: string };
  /** Stored responses (SQLite 0025, PostgreSQL 0016); times in ms since the epoch (bigint on PostgreSQL, read back as a string). */
  responses: {
    id: string;
    user_id: string;
    project_id: string | null;
    chat_id: string | null;
    previous_response_id: string | null;
    status: string;
    created_at: number | string;
    updated_at: number | string;
    /** JSON of the response resource. */
    resource: string;
    /** JSON of the input items. */
    input: string;
  };
  projects: {
    id: string;
    user_id: string;
    name: string;
    description: string;
    /** The agent's system prompt (SQLite 0018, PostgreSQL 0009). */
    instructions: string;
    icon: string;
    color: string;
    model: string;
    provider: string;
    /** The credential the project's provider calls use, or null (SQLite 0011, PostgreSQL 0002). */
    credential_id: string | null;
    /** JSON of the provider's options, or null (SQLite 0023, PostgreSQL 0014). */
    provider_options: string | null;
    created_at: Timestamp;
    updated_at: Timestamp;
  };
}
