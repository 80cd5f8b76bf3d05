/**
 * What every area service is built from: who calls (`Caller`, the first argument of every
 * service method) and the shared dependencies (`PlatformContext`). A service takes the context
 * and the *interfaces* of the other services it needs, never another area's files.
 */
import type { Clock } from './clock.js';
import { PlatformError } from './errors.js';
import type { IdGenerator } from './ids.js';
import type { GuardedFetch } from './net/guarded-fetch.js';
import type { Notifier } from './notify/notifier.js';
import type { SecretBox } from './security/secrets.js';
import type { ProjectRecord, StorageAdapter } from './storage/types.js';
import type { UserCapGuard } from './user-caps.js';

/** Who is calling: every method acts on this user's resources only. */
export interface Caller {
  readonly userId: string;
  /** The API key the request presented, when it came with one (the audit log's "who" beside the user). */
  readonly keyId?: string;
  /** The workspace the request acts in, once the route's policy resolved it; absent: the caller's personal workspace. */
  readonly workspaceId?: string;
}

/** The workspace a call acts in: the one resolved for it, else the caller's personal workspace (whose id is the user's). */
export const workspaceOf = (caller: Caller): string => caller.workspaceId ?? caller.userId;

/** The dependencies every area shares, built once by `AgentPlatform`. */
export interface PlatformContext {
  readonly storage: StorageAdapter;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Messages between the instances sharing `storage`. */
  readonly notifier: Notifier;
  /** The fetch for every URL a caller supplies: the outbound policy decides on each connection. */
  readonly fetch: GuardedFetch;
  /** Encrypts secrets at rest; undefined when the platform was built without one. */
  readonly secrets: SecretBox | undefined;
  /** The per-user caps on what one user may have. */
  readonly caps: UserCapGuard;
}

/** The caller's project of that id; `not_found` when the caller has none (another user's is none). */
export async function callerProject(ctx: Pick<PlatformContext, 'storage'>, caller: Caller, projectId: string): Promise<ProjectRecord> {
  const project = await ctx.storage.projects.get(caller.userId, projectId);
  if (!project) throw PlatformError.notFound(`Project ${projectId} not found`);
  return project;
}
