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
  readonly icon: string;
  readonly color: string;
  readonly model: string;
  readonly provider: string;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ProjectPatch = Partial<
  Pick<ProjectRecord, 'name' | 'description' | 'icon' | 'color' | 'model' | 'provider'>
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

export interface UserRepository {
  insert(user: UserRecord): Promise<void>;
  get(id: string): Promise<UserRecord | undefined>;
}

export interface ApiKeyRepository {
  insert(key: ApiKeyRecord): Promise<void>;
  findByLookup(lookup: string): Promise<ApiKeyRecord | undefined>;
  /** The user's keys, newest first. */
  list(userId: string): Promise<ApiKeyRecord[]>;
  /** True when a key of that user was deleted. */
  delete(userId: string, id: string): Promise<boolean>;
  touch(id: string, at: Date): Promise<void>;
  /** Keys of all users (for bootstrap: "does any key exist?"). */
  count(): Promise<number>;
}

export interface ProjectRepository {
  insert(project: ProjectRecord): Promise<void>;
  get(userId: string, id: string): Promise<ProjectRecord | undefined>;
  list(query: ProjectListQuery): Promise<Page<ProjectRecord>>;
  /** The updated row, or undefined when the user has no such project. */
  update(userId: string, id: string, patch: ProjectPatch): Promise<ProjectRecord | undefined>;
  /** True when a project of that user was deleted. */
  delete(userId: string, id: string): Promise<boolean>;
}

export interface StorageAdapter {
  readonly users: UserRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly projects: ProjectRepository;
  /** Runs `fn` atomically: all its writes land or none do. */
  transaction<T>(fn: (tx: StorageAdapter) => Promise<T>): Promise<T>;
  /** Releases connections and file handles. Idempotent. */
  close(): Promise<void>;
}
