import { PlatformError } from './errors.js';
import type { StorageAdapter, UserCounts } from './storage/types.js';

/** A kind of row each user has a cap on. */
export type UserCapName = keyof UserCounts;

/** The most rows of each kind one user may have (see `DEFAULT_USER_CAPS`). */
export type UserCaps = { readonly [K in UserCapName]: number };

/**
 * The defaults: far above what one person uses by hand (thousands, not tens), low enough that
 * one user cannot fill the database with rows that every list, count and delete of theirs reads.
 */
export const DEFAULT_USER_CAPS: UserCaps = {
  keys: 1_000,
  projects: 10_000,
  credentials: 1_000,
  chats: 10_000,
  tools: 10_000,
  mcpServers: 1_000,
  documents: 100_000,
  messages: 1_000_000,
};

/** How each kind is named in messages. */
const NOUNS: Readonly<Record<UserCapName, string>> = {
  keys: 'API keys',
  projects: 'projects',
  credentials: 'credentials',
  chats: 'chats',
  tools: 'tools',
  mcpServers: 'MCP servers',
  documents: 'documents',
  messages: 'chat messages',
};

/**
 * The per-user caps: a check ahead of costly work (`check`), and the atomic one that guards the
 * write (`reserve`, inside the write's transaction). Over a cap the call fails with
 * `rate_limited` naming the cap and how the operator sets it, and nothing is written.
 */
export class UserCapGuard {
  readonly caps: UserCaps;
  readonly #hints: Readonly<Record<UserCapName, string>>;

  /**
   * @param caps the caps to apply; missing ones are `DEFAULT_USER_CAPS`'.
   * @param hints how an operator sets each cap, named in the error (the server's flag, e.g.
   *   `--max-projects-per-user`). Default `userCaps.<name>`, the option of `AgentPlatform`.
   */
  constructor(caps: Partial<UserCaps> = {}, hints: Partial<Record<UserCapName, string>> = {}) {
    this.caps = { ...DEFAULT_USER_CAPS, ...caps };
    this.#hints = Object.fromEntries((Object.keys(DEFAULT_USER_CAPS) as UserCapName[]).map((name) => [name, hints[name] ?? `userCaps.${name}`])) as Record<UserCapName, string>;
  }

  /**
   * Throws `rate_limited` when the user has no room for `adding` more rows of `name` now: for
   * refusing before costly work (connecting to an MCP server, installing a tool's packages,
   * calling a model). It holds nothing; `reserve` decides when the rows are written.
   */
  async check(storage: StorageAdapter, userId: string, name: UserCapName, adding = 1): Promise<void> {
    this.#judge(await storage.users.lockCounts(userId), name, adding);
  }

  /** `check` of several caps at once, on one read of the user's counts. */
  async checkEach(storage: StorageAdapter, userId: string, asks: Readonly<Partial<Record<UserCapName, number>>>): Promise<void> {
    const counts = await storage.users.lockCounts(userId);
    for (const [name, adding] of Object.entries(asks) as [UserCapName, number][]) this.#judge(counts, name, adding);
  }

  /**
   * Inside the transaction `tx` that writes the rows: takes the user's lock and throws
   * `rate_limited` (the transaction then writes nothing) unless `adding` more rows of `name`
   * stay within the cap. Writes of one user under it see each other's rows, so concurrent
   * writes at the cap never both pass, on any instance.
   */
  async reserve(tx: StorageAdapter, userId: string, name: UserCapName, adding = 1): Promise<void> {
    this.#judge(await tx.users.lockCounts(userId), name, adding);
  }

  #judge(counts: UserCounts | undefined, name: UserCapName, adding: number): void {
    const max = this.caps[name];
    const has = counts?.[name] ?? 0;
    if (has + adding <= max) return;
    const flag = this.#hints[name];
    throw new PlatformError('rate_limited', `Too many ${NOUNS[name]}: a user may have at most ${max} (${flag}) and you have ${has}${adding > 1 ? `, ${adding} more asked` : ''}; delete some first`, {
      details: { limit: name, max, flag },
    });
  }
}
