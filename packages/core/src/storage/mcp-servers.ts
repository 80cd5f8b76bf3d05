import type { Page } from './page.js';

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
  /** Whether the server may ask the project's model for completions (`sampling/createMessage`) during its tool calls. */
  readonly allowSampling: boolean;
  /** Which of its tools' calls wait for a person's approval: all (`true`), none (`false`), or those named (the server's tool names). */
  readonly requiresApproval: boolean | readonly string[];
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
  /** Changes which tools' calls wait for approval; the record as changed, or undefined when the user has none of that id. */
  setRequiresApproval(userId: string, id: string, requiresApproval: boolean | readonly string[], updatedAt: Date): Promise<McpServerRecord | undefined>;
  delete(userId: string, id: string): Promise<boolean>;
}
