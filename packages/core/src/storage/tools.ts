import type { Page } from './page.js';

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
  /** Offered as a tool of the project's MCP server (`/api/v1/projects/{id}/mcp`) while enabled too. */
  readonly exposeOverMcp: boolean;
  /** A call of it by the agent waits for a person's approval. */
  readonly requiresApproval: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type ToolPatch = Partial<Pick<ToolRecord, 'name' | 'description' | 'code' | 'parameters' | 'dependencies' | 'enabled' | 'exposeOverMcp' | 'requiresApproval'>> & {
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
