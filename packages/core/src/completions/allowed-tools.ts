import type { ToolDefinition } from '../agent/chat-model.js';
import { type AgentTool, MCP_TOOL_PREFIX } from '../agent/tools.js';
import { PlatformError } from '../errors.js';

/** A tool a turn may call (`tool_choice` of type `allowed_tools`): a function by the name the model knows, or an MCP server's tools. */
export type AllowedTool = { readonly type: 'function'; readonly name: string } | { readonly type: 'mcp'; readonly server_label: string; readonly name?: string | null | undefined };

/**
 * The tools of a turn that `allowed` leaves: the agent's own (project and MCP tools) and the
 * client's functions. A function is named as the model is offered it (an MCP tool as
 * `mcp__<server>__<tool>`); `{ type: "mcp", server_label }` is every tool of that server, with
 * `name` one of them. An entry that names no tool of the turn is a 400 naming it.
 */
export function allowTools(
  agent: readonly AgentTool[],
  client: readonly ToolDefinition[],
  allowed: readonly AllowedTool[],
  param = 'tool_choice.tools',
): { agent: AgentTool[]; client: ToolDefinition[] } {
  const matchers = allowed.map((entry, i) => {
    const matches =
      entry.type === 'function'
        ? (name: string) => name === entry.name
        : entry.name
          ? (name: string) => name === `${MCP_TOOL_PREFIX}${entry.server_label}__${entry.name}`
          : (name: string) => name.startsWith(`${MCP_TOOL_PREFIX}${entry.server_label}__`);
    const names = [...agent.map((t) => t.definition.name), ...client.map((t) => t.name)];
    if (!names.some(matches)) {
      const what =
        entry.type === 'function' ? `"${entry.name}" is not a tool of this turn` : `the MCP server "${entry.server_label}" has no ${entry.name ? `tool "${entry.name}"` : 'tools'} in this project`;
      const message = `${what} (the request's functions, the agent's own tools and its MCP servers' tools as mcp__<server>__<tool>)`;
      throw PlatformError.invalid(`${param}.${i}: ${message}`, [{ path: [...param.split('.'), i], code: 'custom', message }]);
    }
    return matches;
  });
  const kept = (name: string) => matchers.some((m) => m(name));
  return { agent: agent.filter((t) => kept(t.definition.name)), client: client.filter((t) => kept(t.name)) };
}
