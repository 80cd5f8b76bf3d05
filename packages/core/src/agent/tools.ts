import type { Caller } from '../context.js';
import type { ToolDefinition } from './chat-model.js';

/** A function the agent can call: its definition (offered to the model) and how to run it. */
export interface AgentTool {
  readonly definition: ToolDefinition;
  /**
   * Runs the tool with the arguments the model gave (parsed JSON). Answers the text fed back to
   * the model; throwing reports the error to the model as the tool's result.
   */
  run(args: unknown, context: { readonly signal?: AbortSignal }): Promise<string>;
}

/**
 * Where an agent's tools come from: the project's own tools, its MCP servers' tools. Several
 * sources are combined; each decides which tools of a project are enabled.
 */
export interface ToolSource {
  tools(caller: Caller, projectId: string): Promise<AgentTool[]>;
}
