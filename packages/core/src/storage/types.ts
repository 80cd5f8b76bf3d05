import type { DocumentStatus } from '../schemas/knowledge.js';

/**
 * The storage plug-in interface. Repositories are scoped by owner: every read and write of a
 * user's resource takes the `userId`, so an adapter can never hand one user another's rows.
 * Timestamps are `Date`s; adapters store them as they like but must return equal instants.
 */

export interface UserRecord {
  readonly id: string;
  readonly createdAt: Date;
}

export interface ApiKeyRecord {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  /** Public part of the key used to find it (unique). */
  readonly lookup: string;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  readonly hash: string;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

export interface ProjectRecord {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly description: string;
  /** The agent's system prompt ('' for none). */
  readonly instructions: string;
  readonly icon: string;
  readonly color: string;
  readonly model: string;
  readonly provider: string;
  /** The credential (of the same user) the project's provider calls use, or null: the user's default one of the provider, else the environment. */
  readonly credentialId: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ProjectPatch = Partial<
  Pick<ProjectRecord, 'name' | 'description' | 'instructions' | 'icon' | 'color' | 'model' | 'provider' | 'credentialId'>
> & { readonly updatedAt: Date };

/** Position of a row in a newest-first listing: (createdAt, id) descending. */
export interface ListPosition {
  readonly createdAt: Date;
  readonly id: string;
}

export interface ProjectListQuery {
  readonly userId: string;
  /** Case-insensitive substring of the name; `%` and `_` are literal characters. */
  readonly searchWord?: string;
  readonly limit: number;
  /** Rows to skip (offset pagination). Ignored when `after` is given. */
  readonly offset?: number;
  /** Only rows strictly after this position in newest-first order (cursor pagination). */
  readonly after?: ListPosition;
}

export interface Page<T> {
  readonly items: T[];
  /** Rows matching the filter, regardless of limit, offset and cursor. */
  readonly total: number;
  /**
   * Matching rows ahead of the first item of this page: the offset, or with `after` the number
   * of matching rows at or before that position.
   */
  readonly start: number;
}

/**
 * How many rows of each kind a user has now: what the per-user caps are checked against
 * (`UserRepository.lockCounts`). Storage keeps them as rows come and go, cascades included (a
 * deleted project takes its documents, chats and their messages, tools and MCP servers with it).
 */
export interface UserCounts {
  readonly keys: number;
  readonly projects: number;
  readonly credentials: number;
  readonly chats: number;
  readonly tools: number;
  readonly mcpServers: number;
  readonly documents: number;
  /** Messages of all the user's chats. */
  readonly messages: number;
}

export interface UserRepository {
  insert(user: UserRecord): Promise<void>;
  get(id: string): Promise<UserRecord | undefined>;
  /**
   * The user's counts (undefined for an unknown user). Called inside a transaction it first waits
   * until no other transaction holds the user's lock, and holds it until this transaction ends:
   * two transactions that each check a count against a cap and then insert, both under this
   * lock, never both pass the cap, on any number of instances (PostgreSQL: the user's row,
   * locked; SQLite and memory run one writing transaction at a time). Outside a transaction it
   * only reads.
   */
  lockCounts(userId: string): Promise<UserCounts | undefined>;
}

export interface ApiKeyRepository {
  insert(key: ApiKeyRecord): Promise<void>;
  findByLookup(lookup: string): Promise<ApiKeyRecord | undefined>;
  /** A page of the user's keys, newest first; `start` is the offset. */
  list(query: { readonly userId: string; readonly limit: number; readonly offset: number }): Promise<Page<ApiKeyRecord>>;
  /** Every user's keys, newest first (operator: `agent-platform keys list`; never an API caller). */
  listAll(): Promise<ApiKeyRecord[]>;
  /** True when a key of that user was deleted. */
  delete(userId: string, id: string): Promise<boolean>;
  touch(id: string, at: Date): Promise<void>;
  /** Keys of all users (for bootstrap: "does any key exist?"). */
  count(): Promise<number>;
  /**
   * Called inside a transaction: waits until no other transaction holds the bootstrap lock, then
   * holds it until this transaction ends. "No key yet, so create the first" under it runs once
   * among instances starting together on one database (a lock row's upsert: the row lock on
   * PostgreSQL, the write lock on SQLite; memory transactions already run one at a time).
   */
  lockBootstrap(): Promise<void>;
}

export interface ProjectRepository {
  insert(project: ProjectRecord): Promise<void>;
  get(userId: string, id: string): Promise<ProjectRecord | undefined>;
  list(query: ProjectListQuery): Promise<Page<ProjectRecord>>;
  /** The updated row, or undefined when the user has no such project. */
  update(userId: string, id: string, patch: ProjectPatch): Promise<ProjectRecord | undefined>;
  /** True when a project of that user was deleted; its documents, files, chunks, settings, jobs and chats go with it. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Ids of the user's projects whose `credentialId` is `credentialId`, in id order. */
  usingCredential(userId: string, credentialId: string): Promise<string[]>;
  /** Ids of the user's projects of `provider` that name no credential (they use the provider's default), in id order. */
  namingNoCredential(userId: string, provider: string): Promise<string[]>;
}


export interface DocumentRecord {
  readonly id: string;
  readonly userId: string;
  readonly projectId: string;
  /** The caller's file the document is linked to (its upload, or one it names), or null. */
  readonly fileId: string | null;
  /**
   * Key of the blob the document's source lives under, chosen by the service: the document's
   * own id for posted text, the file's id for an uploaded file. Re-indexing reads it and deleting
   * the document releases it; it is never derived from `fileId` or `sourceType`, which callers set.
   */
  readonly sourceKey: string;
  readonly fileName: string;
  readonly fileType: string;
  readonly sourceType: string;
  readonly status: DocumentStatus;
  readonly chunkCount: number;
  readonly vectorCount: number;
  readonly error: string | null;
  /** size (bytes), pages, language, and what the parser found. */
  readonly metadata: Record<string, unknown>;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type DocumentPatch = Partial<
  Pick<DocumentRecord, 'status' | 'chunkCount' | 'vectorCount' | 'error' | 'metadata'>
> & { readonly updatedAt: Date };

export interface DocumentListQuery {
  readonly userId: string;
  readonly projectId: string;
  readonly status?: DocumentStatus;
  readonly limit: number;
  readonly offset: number;
}

export interface ChunkRecord {
  readonly id: string;
  readonly documentId: string;
  readonly projectId: string;
  /** Position in the document, from 0. */
  readonly index: number;
  readonly text: string;
  readonly tokenCount: number;
  /** fileName, fileType, chunkIndex, pageNumber and pageEnd (pdf: the first and last page of the chunk), section. */
  readonly metadata: Record<string, unknown>;
}

export interface KeywordHit {
  readonly id: string;
  /**
   * BM25 relevance measured against what the query could score at best, 0..1, higher is better:
   * the chunk's BM25 (k1 1.2, b 0.75) over `Σ idf(t) · (k1 + 1)` for the query's distinct terms
   * (the limit of a chunk holding every term, each ever more often). A term no chunk holds counts
   * in that ceiling with the idf of a term in no chunk, so a chunk matching one word of a longer
   * question scores by that word's share of it. The same number means the same match whatever
   * the query (see `bm25Rank`).
   */
  readonly score: number;
}

/** An uploaded file: its bytes are the blob under its id. It belongs to one user. */
export interface FileRecord {
  readonly id: string;
  readonly userId: string;
  /** The project it was uploaded to; the file goes with the project. */
  readonly projectId: string;
  readonly fileName: string;
  readonly fileType: string;
  /** Bytes. */
  readonly size: number;
  readonly createdAt: Date;
}

export interface FileRepository {
  insert(file: FileRecord): Promise<void>;
  /** The file of that user, or undefined (another user's file is answered as a missing one). */
  get(userId: string, id: string): Promise<FileRecord | undefined>;
  /**
   * Deletes the file when no document of its owner refers to it any more (as `fileId` or as
   * `sourceKey`), in one step. True when it was deleted: its blob may go then.
   */
  deleteIfUnreferenced(id: string): Promise<boolean>;
}

export interface DocumentRepository {
  insert(document: DocumentRecord): Promise<void>;
  get(userId: string, id: string): Promise<DocumentRecord | undefined>;
  /** Newest first. `start` of the page is the offset. */
  list(query: DocumentListQuery): Promise<Page<DocumentRecord>>;
  /** Internal updates by the indexing pipeline (no owner check); undefined when gone. */
  update(id: string, patch: DocumentPatch): Promise<DocumentRecord | undefined>;
  /** Deletes the document, its chunks and jobs. True when a document of that user was deleted. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Documents in any of these states, all users, oldest first (restart recovery). */
  listByStatus(statuses: readonly DocumentStatus[]): Promise<DocumentRecord[]>;
  /**
   * The blob keys a project's rows refer to: each document's source (its own text, or the file
   * it was uploaded as) and each file uploaded into it. Deleting the project deletes those rows,
   * so these blobs go after it (no document of another project has one as its source).
   */
  blobKeysOfProject(projectId: string): Promise<string[]>;
}

/** The vectors of a document's chunks, kept with the chunk rows so a re-index can reuse them. */
export interface ChunkEmbeddings {
  /** Id of the embedding model that made them (`EmbeddingModel.id`). */
  readonly model: string;
  /** One vector per chunk, in the order of the chunks they are stored with. */
  readonly vectors: readonly Float32Array[];
}

export interface ChunkRepository {
  /**
   * Replaces all chunks of the document with these (atomically), and their stored vectors with
   * `embeddings` (none when absent).
   */
  replaceForDocument(documentId: string, chunks: readonly ChunkRecord[], embeddings?: ChunkEmbeddings): Promise<void>;
  /**
   * The stored vectors of the document's chunks made by `model`, keyed by chunk text (empty for
   * another model). Only re-indexing reads them: `getMany`, `get`, `listByDocument` and searches do not.
   */
  embeddingsByText(documentId: string, model: string): Promise<Map<string, Float32Array>>;
  /**
   * The stored vectors made by `model` of the project's chunks with these ids, keyed by chunk id;
   * chunks without one (another model, or indexed before vectors were kept) and ids that are not
   * chunks of `projectId` are left out. MMR search reads them for candidates that only the
   * keyword side found.
   */
  embeddingsById(projectId: string, ids: readonly string[], model: string): Promise<Map<string, Float32Array>>;
  /**
   * The project's chunks with these ids, in no particular order. Ids that are not chunks of
   * `projectId` (unknown, or another project's) are skipped: the ids come from a vector store,
   * which may be one the caller controls, so the project is the only owner check there is.
   */
  getMany(projectId: string, ids: readonly string[]): Promise<ChunkRecord[]>;
  /** The chunk with this id when it belongs to a document of `userId`; undefined otherwise. */
  get(userId: string, id: string): Promise<ChunkRecord | undefined>;
  listByDocument(documentId: string): Promise<ChunkRecord[]>;
  /** A page of the document's chunks in document order (by `index`), with their total. */
  pageByDocument(query: { documentId: string; limit: number; offset: number }): Promise<Page<ChunkRecord>>;
  /**
   * Full-text search over the project's chunk texts, BM25-ranked, best first, scored in 0..1 as
   * `KeywordHit` says. `query` is free text: adapters turn it into a safe OR-of-terms query (no
   * query syntax reaches the engine).
   */
  keywordSearch(projectId: string, query: string, limit: number): Promise<KeywordHit[]>;
  /**
   * Whether the project has at least one chunk (of any document, in any state). Searches read it
   * first, so a project with nothing to find costs no query embedding; adapters answer it from
   * an index, without scanning other projects' chunks.
   */
  anyInProject(projectId: string): Promise<boolean>;
}

/** A unit of background work (indexing a document), kept until done so a restart resumes it. */
export interface JobRecord {
  readonly id: string;
  readonly kind: 'index_document';
  readonly documentId: string;
  /**
   * Whose share of the queue the job counts against (fair claims, the bound on what one may
   * have queued): the owner key, today the document's user (a workspace once there are any).
   */
  readonly tenant: string;
  /** What the worker needs, e.g. the text to index or the file id. */
  readonly payload: Record<string, unknown>;
  /** Starts of the job so far (each claim counts one, before the job runs). */
  readonly attempts: number;
  readonly createdAt: Date;
  /** Bytes of the document's source (0 when not known): claims keep the bytes running under a budget. */
  readonly size: number;
  /** The instance holding the job's lease, or null while it waits to be claimed. */
  readonly owner: string | null;
  /** When the lease runs out (null while unclaimed): after it, any instance may claim the job. */
  readonly leaseExpiresAt: Date | null;
  /** Fencing token: bumped by every claim and release, so a run holding an older one can write nothing. */
  readonly generation: number;
}

/** A job as it is queued: not claimed yet. */
export type NewJob = Pick<JobRecord, 'id' | 'kind' | 'documentId' | 'tenant' | 'payload' | 'createdAt'> & {
  /** Default 0. */
  readonly size?: number;
  /** Default 0. */
  readonly attempts?: number;
};

/** A claimed job: the holder's proof of ownership, which every fenced write checks. */
export interface JobLease {
  readonly jobId: string;
  readonly documentId: string;
  /** The job's owner key (`JobRecord.tenant`). */
  readonly tenant: string;
  /** The claiming instance. */
  readonly owner: string;
  /** The job's generation set by this claim (the fencing token). */
  readonly generation: number;
  /** Starts of the job, this one included. */
  readonly attempts: number;
  /** Bytes of the document's source (0 when not known). */
  readonly size: number;
  /** When the lease runs out unless extended by `heartbeat`. */
  readonly expiresAt: Date;
}

/** What `JobRepository.claim` takes. */
export interface ClaimOptions {
  /** The claiming instance: the owner of the lease. */
  readonly owner: string;
  /** The claimer's clock: leases over at it are free. */
  readonly now: Date;
  readonly leaseMs: number;
  /** Most bytes the job may have (the room left in the claimer's byte budget); default no bound. */
  readonly maxBytes?: number;
  /** Jobs queued at or before it are taken even over `maxBytes` (see `claim`); default none. */
  readonly overdueAt?: Date;
  /** Only jobs of tenants with no job leased now (the claimer's spare slot). Default false. */
  readonly idleTenantsOnly?: boolean;
}

/**
 * What a heartbeat found: `held` (still this lease's, now extended), `lost` (another claim holds
 * the job: this lease expired and it was taken over, or it was released), `cancelled` (the job
 * is gone: cancelled, its document deleted, or finished by the instance that took it over).
 */
export type LeaseState = 'held' | 'lost' | 'cancelled';

/**
 * The job queue, shared by every instance on the database. Jobs are claimed with a lease kept
 * alive by heartbeats; a job whose lease ran out is claimable again (its holder died or
 * stalled), with a new generation, so the old holder's late writes are refused. Times are the
 * callers' clocks (`now`).
 */
export interface JobRepository {
  insert(job: NewJob): Promise<void>;
  /** All jobs, oldest first. */
  list(): Promise<JobRecord[]>;
  get(id: string): Promise<JobRecord | undefined>;
  delete(id: string): Promise<void>;
  /**
   * Atomically takes a job that no live lease holds (never claimed, released, or its lease over
   * at `now`), for `owner` until `now + leaseMs`: counts a start (`attempts + 1`) and bumps the
   * generation. Which job, fairly between tenants: of the tenant with the fewest jobs leased now
   * (live leases held by any instance, counted in storage), between tenants with as many the one
   * whose job waited longest, and within a tenant its oldest job. A job larger than `maxBytes` is
   * passed over for the next that fits, unless it was queued at or before `overdueAt` (it has been
   * passed over long enough: the claimer gets it and holds it until it has room). With
   * `idleTenantsOnly`, only jobs of tenants with no job leased now. Undefined when there is none.
   * Two claims, from any instances, never get the same job while its lease runs.
   */
  claim(options: ClaimOptions): Promise<JobLease | undefined>;
  /**
   * Inside a transaction: locks the tenant's queue until the transaction ends (another
   * transaction's `lockTenant` of the same tenant, on any instance, waits for it) and answers how
   * many jobs the tenant has, waiting or running. A check against a bound followed by inserts is
   * thus atomic. Call it first in its transaction (SQLite takes its write lock here).
   */
  lockTenant(tenant: string): Promise<number>;
  /**
   * Extends the lease to `now + leaseMs` when the job is still this lease's (same owner and
   * generation), else answers why not. Called first inside a transaction it is the fence of the
   * transaction's writes: the job's row is written, so a claim or cancel of it waits for (or
   * skips) the transaction, and `held` holds until it commits.
   */
  heartbeat(lease: JobLease, options: { readonly now: Date; readonly leaseMs: number }): Promise<LeaseState>;
  /** Deletes the job (completed or failed) when it is still this lease's; false otherwise (nothing changed). */
  finish(lease: JobLease): Promise<boolean>;
  /** Puts the job back for anyone to claim at once, when it is still this lease's (shutdown); false otherwise. */
  release(lease: JobLease): Promise<boolean>;
  /**
   * Releases every job leased to `owner`: for an instance starting again under a stable id, whose
   * earlier run (dead: it is this one) left them. Answers how many.
   */
  releaseOwner(owner: string): Promise<number>;
  /**
   * Removes the document's jobs, waiting or running (re-indexing, deleting). A run of one, on
   * any instance, hears `cancelled` at its next heartbeat and its fenced writes are refused.
   * Answers how many were removed.
   */
  cancel(documentId: string): Promise<number>;
}

/** Knowledge settings of a project (RAG settings of the spec), stored as given. */
export interface SettingsRepository {
  get(projectId: string): Promise<Record<string, unknown> | undefined>;
  put(projectId: string, settings: Record<string, unknown>, at: Date): Promise<void>;
}

export interface CredentialRecord {
  readonly id: string;
  readonly userId: string;
  readonly name: string;
  readonly provider: string;
  /** The API key, encrypted (`SecretBox` format); never the plain key. */
  readonly secret: string;
  /** Last four characters of the key, to tell keys apart. */
  readonly last4: string;
  /** The server address, with any user:password and query values masked (`****`) when `baseUrlSecret` holds it. */
  readonly baseUrl: string | null;
  /** The whole `baseUrl`, encrypted (`SecretBox` format), when it carries user:password or a query; else null. */
  readonly baseUrlSecret: string | null;
  readonly proxy: boolean;
  /** Whether the credential last worked (its test, or as a caller set it); null when unknown. */
  readonly isValid: boolean | null;
  /**
   * The user's default credential of `provider`: the one calls of projects that name no
   * credential use. At most one per user and provider (storage enforces it).
   */
  readonly isDefault: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/**
 * A credential to store. `isDefault`: `true` makes it its provider's default for the user (the
 * previous default stops being one), `false` never, `'if-none'` only when the user has no
 * default of the provider yet (so the first credential of a provider is its default).
 */
export type NewCredential = Omit<CredentialRecord, 'isDefault'> & { readonly isDefault: boolean | 'if-none' };

export type CredentialPatch = Partial<Pick<CredentialRecord, 'name' | 'secret' | 'last4' | 'baseUrl' | 'baseUrlSecret' | 'proxy' | 'isValid' | 'isDefault'>> & {
  readonly updatedAt: Date;
};

/**
 * A user's provider credentials. The default rule (at most one `isDefault` per user and
 * provider) holds under concurrent writes from any number of instances: `insert` and `update`
 * that touch it decide and write in one atomic step, and the database refuses a second default
 * (a partial unique index) whatever a writer does.
 */
export interface CredentialRepository {
  /** Stores the credential and answers it as stored, `isDefault` decided (see `NewCredential`). */
  insert(credential: NewCredential): Promise<CredentialRecord>;
  get(userId: string, id: string): Promise<CredentialRecord | undefined>;
  /** The user's credentials, newest first. */
  list(userId: string): Promise<CredentialRecord[]>;
  /** The user's default credential of `provider`, or undefined when there is none. */
  defaultOf(userId: string, provider: string): Promise<CredentialRecord | undefined>;
  /**
   * Changes the given members; answers the updated row, or undefined when the user has no such
   * credential. `isDefault: true` moves the provider's default here (the previous default stops
   * being one); `isDefault: false` leaves the provider without a default when this was it.
   */
  update(userId: string, id: string, patch: CredentialPatch): Promise<CredentialRecord | undefined>;
  delete(userId: string, id: string): Promise<boolean>;
}

export interface ChatRecord {
  /**
   * Unique per user, not across users: a chat is always addressed by its user and its id, so
   * another user's chat of the same id is never found, and no id can be taken from another user.
   */
  readonly id: string;
  readonly userId: string;
  readonly projectId: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ChatPatch = Partial<Pick<ChatRecord, 'name'>> & { readonly updatedAt: Date };

/** A stored chat message; `toolCalls` and `toolCallId` as in `ChatMessage`. */
/**
 * A knowledge excerpt an assistant message was given, kept with the message so a stored answer
 * still shows its citations: `[index]` in the text refers to it.
 */
export interface MessageSource {
  /** Citation number in the answer, from 1. */
  readonly index: number;
  readonly chunkId: string;
  readonly documentId: string;
  readonly fileName: string;
  /** The search score (0..1) the excerpt had when it was given. */
  readonly score: number;
  /** The excerpt's first words (at most 160 characters), readable after its chunk is gone. */
  readonly excerpt: string;
}

export interface ChatMessageRecord {
  readonly chatId: string;
  /** Order within the chat, from 0. */
  readonly position: number;
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string | null;
  readonly toolCalls: readonly { id: string; name: string; arguments: string }[] | null;
  readonly toolCallId: string | null;
  /**
   * The knowledge the answer was given, in citation order: on the assistant message that ends
   * a turn, in citation order. Absent when there was none (an empty list is stored as none).
   */
  readonly sources?: readonly MessageSource[];
  readonly createdAt: Date;
}

/** Chats are keyed by their user and id together (`ChatRecord.id` is unique per user only). */
export interface ChatRepository {
  /** Throws a `conflict` PlatformError when the user already has a chat of that id (another user's of the same id is no conflict). */
  insert(chat: ChatRecord): Promise<void>;
  get(userId: string, id: string): Promise<ChatRecord | undefined>;
  /** The user's chats, newest first (by creation); only those of `projectId` when given. */
  list(query: { userId: string; projectId?: string | undefined; limit: number; offset: number }): Promise<Page<ChatRecord>>;
  /** Changes the user's chat (its name); undefined when the user has no such chat. */
  update(userId: string, id: string, patch: ChatPatch): Promise<ChatRecord | undefined>;
  /** Deletes the user's chat with its messages. */
  delete(userId: string, id: string): Promise<boolean>;
  touch(userId: string, id: string, at: Date): Promise<void>;
  /** Appends messages at the end of the user's chat, atomically; positions are assigned here. */
  appendMessages(userId: string, chatId: string, messages: readonly Omit<ChatMessageRecord, 'chatId' | 'position'>[]): Promise<void>;
  /** All messages of the user's chat, in order (none when the user has no such chat). */
  messages(userId: string, chatId: string): Promise<ChatMessageRecord[]>;
  /**
   * Up to `limit` messages of the user's chat before position `before` (all when absent), newest first:
   * the chat read from its end, a page at a time (the history a completion sends is its newest
   * turns, whatever the chat's length).
   */
  recentMessages(userId: string, chatId: string, options: { readonly limit: number; readonly before?: number }): Promise<ChatMessageRecord[]>;
}

export interface ToolRecord {
  readonly id: string;
  readonly userId: string;
  readonly projectId: string;
  readonly name: string;
  readonly description: string;
  readonly language: 'javascript' | 'python';
  readonly code: string;
  /** JSON Schema of the arguments object. */
  readonly parameters: Record<string, unknown>;
  readonly dependencies: readonly string[];
  readonly enabled: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ToolPatch = Partial<Pick<ToolRecord, 'name' | 'description' | 'code' | 'parameters' | 'dependencies' | 'enabled'>> & {
  readonly updatedAt: Date;
};

export interface ToolRepository {
  insert(tool: ToolRecord): Promise<void>;
  get(userId: string, id: string): Promise<ToolRecord | undefined>;
  /** A project's tools, newest first. */
  list(query: { userId: string; projectId: string; limit: number; offset: number }): Promise<Page<ToolRecord>>;
  /** The project's enabled tools (for the agent). */
  enabled(projectId: string): Promise<ToolRecord[]>;
  update(userId: string, id: string, patch: ToolPatch): Promise<ToolRecord | undefined>;
  delete(userId: string, id: string): Promise<boolean>;
}

/** A project's MCP server: how to reach it. Header and environment values are secrets. */
export interface McpServerRecord {
  readonly id: string;
  readonly userId: string;
  readonly projectId: string;
  /** Unique within the project (its tools are offered to the model under this name). */
  readonly name: string;
  readonly transport: 'stdio' | 'http' | 'sse';
  /** `http`/`sse` endpoint, masked (`****`) when it carries user:password or a query (the whole URL is then in `secrets`); null for stdio. */
  readonly url: string | null;
  /** `stdio` program and arguments; null/empty for http/sse. */
  readonly command: string | null;
  readonly args: readonly string[];
  /** Names of the headers (http/sse) and environment variables (stdio); their values are in `secrets`. */
  readonly headerNames: readonly string[];
  readonly envNames: readonly string[];
  /** `{ headers, env, url }` as JSON, encrypted (`SecretBox` format); null when there are none. */
  readonly secrets: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface McpServerRepository {
  /** Throws `conflict` when the project already has a server of that name. */
  insert(server: McpServerRecord): Promise<void>;
  get(userId: string, id: string): Promise<McpServerRecord | undefined>;
  /** A project's servers, newest first. */
  list(query: { userId: string; projectId: string; limit: number; offset: number }): Promise<Page<McpServerRecord>>;
  /** Every server of a project, oldest first (for the agent). */
  forProject(projectId: string): Promise<McpServerRecord[]>;
  delete(userId: string, id: string): Promise<boolean>;
}

/** A chat stream's row (`StreamRepository`). Times are ms since the epoch. */
export interface StreamRow {
  readonly id: string;
  readonly chatId: string;
  readonly userId: string;
  readonly createdAt: Date;
  /** `unwritten` (no completion yet), `writing` (one completion holds it), `ended`. */
  readonly state: 'unwritten' | 'writing' | 'ended';
  /** Events written so far: the id of the last one. */
  readonly length: number;
  /** While `writing`: when the writer's lease runs out (ms since the epoch); null otherwise. */
  readonly leaseUntil: number | null;
}

/**
 * Chat streams and their events in the database, for `storageStreamStore` (core): streams every
 * instance reaches. Expiry times are given by the caller (ms since the epoch); a stream being
 * written has none.
 */
export interface StreamRepository {
  /** Inserts an `unwritten` stream expiring at `expiresAt`, unless its user has `maxOpen` streams not `ended`: false then. */
  create(stream: { id: string; chatId: string; userId: string; createdAt: Date }, options: { maxOpen: number; expiresAt: number; now: number }): Promise<boolean>;
  /** The stream of that user and chat, unless expired at `now`. */
  get(userId: string, chatId: string, id: string, now: number): Promise<StreamRow | undefined>;
  /**
   * Makes `writer` the stream's one writer, its lease running until `leaseUntil`: `conflict`
   * while another writes it (even past its lease: `endLapsed` first).
   */
  claim(userId: string, chatId: string, id: string, writer: string, now: number, leaseUntil: number): Promise<'claimed' | 'conflict' | 'not_found'>;
  /**
   * Appends the next event (JSON) when `writer` still holds the stream, extending its lease to
   * `leaseUntil`; answers its id, or undefined (the stream was ended, e.g. its lease ran out and
   * another instance ended it: fenced, nothing is written).
   */
  append(id: string, writer: string, event: unknown, leaseUntil: number): Promise<number | undefined>;
  /** Extends the lease of `writer` to `leaseUntil` while it holds the stream; false when it no longer does. */
  heartbeat(id: string, writer: string, leaseUntil: number): Promise<boolean>;
  /** Ends the stream `writer` holds, expiring at `expiresAt`. */
  end(id: string, writer: string, expiresAt: number): Promise<void>;
  /**
   * Ends the streams being written whose writer's lease ran out at `now` (the one `id`, or all):
   * appends `event` as each one's last event and makes it `ended`, expiring at `expiresAt`.
   * Guarded like `append` (one UPDATE checks the state and the lease), so each lapsed stream is
   * ended once, by whichever caller gets there first, whatever runs concurrently. Answers the
   * ids it ended.
   */
  endLapsed(options: { readonly now: number; readonly expiresAt: number; readonly event: unknown; readonly id?: string }): Promise<string[]>;
  /**
   * Up to `limit` events after `afterId`, with the stream's row; an ended stream's expiry moves
   * to `touchExpiresAt` (a read keeps it). Undefined when the stream is gone or expired at `now`.
   */
  read(id: string, afterId: number, limit: number, now: number, touchExpiresAt: number): Promise<{ row: StreamRow; events: { id: number; event: unknown }[] } | undefined>;
  /** Deletes the streams (and events) expired at `now`. */
  sweep(now: number): Promise<void>;
}

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
  /** Chat streams in the database (SQLite and PostgreSQL adapters); absent in memory, where `memoryStreamStore` serves. */
  readonly streams?: StreamRepository;
  /** Runs `fn` atomically: all its writes land or none do. */
  transaction<T>(fn: (tx: StorageAdapter) => Promise<T>): Promise<T>;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}
