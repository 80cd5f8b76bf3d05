import { displayPrefix, generateKey, keyLookup, keyMatches } from './auth/keys.js';
import { type Clock, systemClock } from './clock.js';
import { PlatformError } from './errors.js';
import { createIdGenerator, type IdGenerator } from './ids.js';
import { decodeCursor, encodeCursor, toProject } from './projects.js';
import {
  CreateKeyRequest,
  type CreateKeyResponse,
  type ListKeysResponse,
} from './schemas/auth.js';
import {
  CreateProjectRequest,
  ListProjectsQuery,
  type ListProjectsResponse,
  type ProjectResponse,
  UpdateProjectRequest,
} from './schemas/projects.js';
import type { StorageAdapter } from './storage/types.js';
import { parseInput } from './validation.js';

/** Who is calling: every method acts on this user's resources only. */
export interface Caller {
  readonly userId: string;
}

export interface AgentPlatformOptions {
  readonly storage: StorageAdapter;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
}

/** How often a key's `lastUsedAt` is written at most (it is a hint, not an audit log). */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * The engine. One method per API endpoint; each takes the caller and the request as the
 * client sent it (validated here), and answers the response body of the endpoint.
 */
export class AgentPlatform {
  readonly storage: StorageAdapter;
  readonly clock: Clock;
  readonly ids: IdGenerator;

  constructor(options: AgentPlatformOptions) {
    this.storage = options.storage;
    this.clock = options.clock ?? systemClock;
    this.ids = options.ids ?? createIdGenerator(() => this.clock.now().getTime());
  }

  // ---- users and keys -------------------------------------------------------------------

  /** Creates a user and its first key (operator bootstrap: `agent-platform keys create`). */
  async createUserWithKey(input: CreateKeyRequest): Promise<CreateKeyResponse & { userId: string }> {
    const { name } = parseInput(CreateKeyRequest, input);
    const userId = this.ids.next('user');
    const createdAt = this.clock.now();
    return this.storage.transaction(async (tx) => {
      await tx.users.insert({ id: userId, createdAt });
      const created = await this.#insertKey(tx, userId, name);
      return { ...created, userId };
    });
  }

  /** `POST /api/auth/create-key`: another key for the caller's user. */
  async createKey(caller: Caller, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    const { name } = parseInput(CreateKeyRequest, input);
    return this.#insertKey(this.storage, caller.userId, name);
  }

  /** Creates a key for an existing user (operator: `keys create --user`). */
  async createKeyForUser(userId: string, input: CreateKeyRequest): Promise<CreateKeyResponse> {
    if (!(await this.storage.users.get(userId))) throw PlatformError.notFound(`User ${userId} not found`);
    return this.createKey({ userId }, input);
  }

  async #insertKey(storage: StorageAdapter, userId: string, name: string): Promise<CreateKeyResponse> {
    const { key, lookup, hash } = generateKey();
    const id = this.ids.next('key');
    const createdAt = this.clock.now();
    await storage.apiKeys.insert({ id, userId, name, lookup, hash, createdAt, lastUsedAt: null });
    return { success: true, key, id, name, createdAt: createdAt.toISOString() };
  }

  /** `GET /api/auth/keys`: the caller's keys, newest first, without secrets. */
  async listKeys(caller: Caller): Promise<ListKeysResponse> {
    const keys = await this.storage.apiKeys.list(caller.userId);
    return {
      success: true,
      keys: keys.map((k) => ({
        id: k.id,
        name: k.name,
        prefix: displayPrefix(k.lookup),
        createdAt: k.createdAt.toISOString(),
        lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
      })),
    };
  }

  /** `DELETE /api/auth/keys/{id}`: revokes one of the caller's keys (also the one in use). */
  async deleteKey(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.storage.apiKeys.delete(caller.userId, id))) throw PlatformError.notFound(`API key ${id} not found`);
    return { success: true, message: 'API key revoked' };
  }

  /** The caller a presented key belongs to, or undefined for an unknown or malformed key. */
  async authenticate(key: string): Promise<Caller | undefined> {
    const lookup = keyLookup(key);
    if (!lookup) return undefined;
    const record = await this.storage.apiKeys.findByLookup(lookup);
    if (!record || !keyMatches(key, record.hash)) return undefined;
    const now = this.clock.now();
    if (!record.lastUsedAt || now.getTime() - record.lastUsedAt.getTime() > TOUCH_INTERVAL_MS) {
      await this.storage.apiKeys.touch(record.id, now);
    }
    return { userId: record.userId };
  }

  /** Number of keys of all users (the server prints a first key when there is none). */
  countKeys(): Promise<number> {
    return this.storage.apiKeys.count();
  }

  // ---- projects -------------------------------------------------------------------------

  /** `POST /api/projects/create`. */
  async createProject(caller: Caller, input: CreateProjectRequest): Promise<ProjectResponse> {
    const body = parseInput(CreateProjectRequest, input);
    const now = this.clock.now();
    const record = {
      id: this.ids.next('project'),
      userId: caller.userId,
      name: body.name,
      description: body.description ?? '',
      icon: body.icon ?? '',
      color: body.color ?? '',
      model: body.model,
      provider: body.provider,
      createdAt: now,
      updatedAt: now,
    };
    await this.storage.projects.insert(record);
    return { success: true, project: toProject(record) };
  }

  /**
   * `GET /api/v1/projects`: newest first. With `cursor`, the page starts right after the
   * cursor's project (stable while projects are created); otherwise at `offset`.
   */
  async listProjects(caller: Caller, query: ListProjectsQuery = {}): Promise<ListProjectsResponse> {
    const q = parseInput(ListProjectsQuery, query);
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const page = await this.storage.projects.list({
      userId: caller.userId,
      limit: q.limit + 1,
      ...(q.searchWord ? { searchWord: q.searchWord } : {}),
      ...(after ? { after } : { offset: q.offset }),
    });
    const hasMore = page.items.length > q.limit;
    const items = hasMore ? page.items.slice(0, q.limit) : page.items;
    const last = items.at(-1);
    return {
      success: true,
      projects: items.map(toProject),
      nextCursor: hasMore && last ? encodeCursor(last) : '',
      nextOffset: page.start + items.length,
      hasMore,
      total: page.total,
      message: items.length === 0 ? 'No projects found' : `Found ${page.total} project${page.total === 1 ? '' : 's'}`,
    };
  }

  /** `GET /api/v1/projects/{id}`. */
  async getProject(caller: Caller, id: string): Promise<ProjectResponse> {
    const record = await this.storage.projects.get(caller.userId, id);
    if (!record) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, project: toProject(record) };
  }

  /** `PATCH /api/v1/projects/{id}`. */
  async updateProject(caller: Caller, id: string, input: UpdateProjectRequest): Promise<ProjectResponse> {
    const patch = parseInput(UpdateProjectRequest, input);
    const record = await this.storage.projects.update(caller.userId, id, { ...patch, updatedAt: this.clock.now() });
    if (!record) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, project: toProject(record) };
  }

  /** `DELETE /api/v1/projects/{id}`: the project and everything in it. */
  async deleteProject(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    if (!(await this.storage.projects.delete(caller.userId, id))) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, message: 'Project deleted' };
  }
}
