export interface UserRecord {
  readonly id: string;
  readonly createdAt: Date;
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
