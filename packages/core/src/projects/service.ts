import type { z } from 'zod';
import type { Caller, PlatformContext } from '../context.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { PlatformError } from '../errors.js';
import { checkProviderOptions } from '../registries/model-providers.js';
import type { CreateProjectRequest, ListProjectsQuery, ListProjectsResponse, Project, ProjectDetail, ProjectResponse, ResolvedProvider, UpdateProjectRequest } from '../schemas/projects.js';
import type { ProjectRecord, StorageAdapter } from '../storage/types.js';

type CreateBody = z.output<typeof CreateProjectRequest>;
type UpdateBody = z.output<typeof UpdateProjectRequest>;
type ListQuery = z.output<typeof ListProjectsQuery>;

/** What projects ask of the credentials area: a project names one of the caller's credentials, and shows where its calls go. */
export interface ProjectCredentials {
  /** Refuses a `credentialId` that is not one of the user's credentials of `provider` (404, or 400 for another provider), read in `storage` (the project's transaction). */
  checkNamed(storage: StorageAdapter, userId: string, credentialId: string, provider: string): Promise<void>;
  /** Where the project's model calls go, the precedence of credentials applied; throws when the credential it names is gone. */
  resolvedFor(caller: Caller, project: ProjectRecord): Promise<ResolvedProvider>;
}

/**
 * What an area keeps of a project outside the project's rows (knowledge: its blobs and
 * vectors; MCP: open connections to its servers), dropped when the project is deleted.
 */
export interface ProjectCleanup {
  /**
   * Reads what the delete of the project's rows will take with it, and answers the work to do
   * once that delete has succeeded. Called before the delete, which is what checks the owner:
   * the project may be another user's (or none), and then the answer is never run.
   */
  dropProject(caller: Caller, projectId: string): Promise<() => Promise<void>>;
}

export interface ProjectsDeps {
  readonly credentials: ProjectCredentials;
  /** Each runs its part of a project's delete, in this order. */
  readonly cleanups: readonly ProjectCleanup[];
}

export function toProject(record: ProjectRecord): Project {
  return {
    id: record.id,
    name: record.name,
    description: record.description,
    instructions: record.instructions,
    icon: record.icon,
    color: record.color,
    model: record.model,
    provider: record.provider as Project['provider'],
    credentialId: record.credentialId,
    providerOptions: record.providerOptions,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
  };
}

/** A user's projects (agents): their settings, the credential each names, and deleting one with everything in it. */
export class ProjectsService {
  readonly #ctx: PlatformContext;
  readonly #deps: ProjectsDeps;

  constructor(ctx: PlatformContext, deps: ProjectsDeps) {
    this.#ctx = ctx;
    this.#deps = deps;
  }

  /** `POST /api/projects/create`. */
  async create(caller: Caller, body: CreateBody): Promise<ProjectResponse> {
    const now = this.#ctx.clock.now();
    const record: ProjectRecord = {
      id: this.#ctx.ids.next('project'),
      userId: caller.userId,
      name: body.name,
      description: body.description ?? '',
      instructions: body.instructions ?? '',
      icon: body.icon ?? '',
      color: body.color ?? '',
      model: body.model,
      provider: body.provider,
      credentialId: body.credentialId ?? null,
      providerOptions: body.providerOptions ?? null,
      createdAt: now,
      updatedAt: now,
    };
    // Checked and written in one transaction, so a credential deleted meanwhile is never named.
    await this.#ctx.storage.transaction(async (tx) => {
      await this.#ctx.caps.reserve(tx, caller.userId, 'projects');
      if (record.credentialId) await this.#deps.credentials.checkNamed(tx, caller.userId, record.credentialId, record.provider);
      await tx.projects.insert(record);
    });
    return { success: true, project: await this.#detail(caller, record) };
  }

  /** A project with where its model calls go (`resolved`): the precedence of credentials applied. */
  async #detail(caller: Caller, record: ProjectRecord): Promise<ProjectDetail> {
    try {
      return { ...toProject(record), resolved: await this.#deps.credentials.resolvedFor(caller, record) };
    } catch {
      // The named credential is gone (completions say so): nothing to show but its id.
      return { ...toProject(record), resolved: { credentialId: record.credentialId, baseUrl: null, source: 'project' } };
    }
  }

  /**
   * `GET /api/v1/projects`: newest first. With `cursor`, the page starts right after the
   * cursor's project (stable while projects are created); otherwise at `offset`.
   */
  async list(caller: Caller, q: ListQuery): Promise<ListProjectsResponse> {
    const after = q.cursor ? decodeCursor(q.cursor) : undefined;
    const page = await this.#ctx.storage.projects.list({
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
  async get(caller: Caller, id: string): Promise<ProjectResponse> {
    const record = await this.#ctx.storage.projects.get(caller.userId, id);
    if (!record) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, project: await this.#detail(caller, record) };
  }

  /** `PATCH /api/v1/projects/{id}`. */
  async update(caller: Caller, id: string, patch: UpdateBody): Promise<ProjectResponse> {
    const record = await this.#ctx.storage.transaction(async (tx) => {
      const current = await tx.projects.get(caller.userId, id);
      if (!current) throw PlatformError.notFound(`Project ${id} not found`);
      // The credential the project will name must be the caller's and of the provider it will use.
      const credentialId = patch.credentialId !== undefined ? patch.credentialId : current.credentialId;
      if (credentialId && (patch.credentialId !== undefined || patch.provider !== undefined)) {
        await this.#deps.credentials.checkNamed(tx, caller.userId, credentialId, patch.provider ?? current.provider);
      }
      // The options the project will have must be those of the provider it will use (kept options too, when the provider changes).
      const options = patch.providerOptions !== undefined ? patch.providerOptions : current.providerOptions;
      if (options && (patch.providerOptions !== undefined || patch.provider !== undefined)) checkProviderOptions(patch.provider ?? current.provider, options, ['providerOptions']);
      return tx.projects.update(caller.userId, id, { ...patch, updatedAt: this.#ctx.clock.now() });
    });
    if (!record) throw PlatformError.notFound(`Project ${id} not found`);
    return { success: true, project: await this.#detail(caller, record) };
  }

  /** `DELETE /api/v1/projects/{id}`: the project and everything in it (documents, chunks, vectors). */
  async delete(caller: Caller, id: string): Promise<{ success: true; message: string }> {
    // Read before the delete takes the rows with it. The delete is what checks the owner: the
    // keys of another user's project are read, but nothing is removed unless it succeeds.
    const after: (() => Promise<void>)[] = [];
    for (const cleanup of this.#deps.cleanups) after.push(await cleanup.dropProject(caller, id));
    if (!(await this.#ctx.storage.projects.delete(caller.userId, id))) throw PlatformError.notFound(`Project ${id} not found`);
    for (const drop of after) await drop();
    return { success: true, message: 'Project deleted' };
  }
}
