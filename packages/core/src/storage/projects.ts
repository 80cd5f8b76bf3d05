import type { ListPosition, Page } from './page.js';

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
  /** The provider's own options (validated by the provider's registry entry when set), or null for none. */
  readonly providerOptions: Readonly<Record<string, unknown>> | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ProjectPatch = Partial<Pick<ProjectRecord, 'name' | 'description' | 'instructions' | 'icon' | 'color' | 'model' | 'provider' | 'credentialId' | 'providerOptions'>> & {
  readonly updatedAt: Date;
};

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
