import { createHash } from 'node:crypto';
import { type AgentTool, MCP_TOOL_PREFIX, type ToolSource } from '../agent/tools.js';
import type { Caller } from '../context.js';
import type { SecretBox } from '../security/secrets.js';
import type { McpServerRecord, StorageAdapter } from '../storage/types.js';
import { serverConfig } from './records.js';
import type { McpOptions, McpServerConfig, McpTool } from './types.js';

export { MCP_TOOL_PREFIX };

const MAX_FUNCTION_NAME = 64;

/**
 * The function name of a server's tool: `mcp__<server>__<tool>`, the tool's name reduced to the
 * characters models accept and, when that changed it or it is too long, made unique with a
 * short hash of the original.
 */
export function mcpFunctionName(server: string, tool: string): string {
  const base = `${MCP_TOOL_PREFIX}${server}__`;
  const clean = tool.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (clean === tool && base.length + clean.length <= MAX_FUNCTION_NAME) return base + clean;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${base}${clean.slice(0, Math.max(1, MAX_FUNCTION_NAME - base.length - 9))}_${hash}`;
}

/** The project's MCP servers' tools for the agent; a server that cannot be reached is left out. */
export function mcpToolSource(storage: StorageAdapter, secrets: SecretBox | undefined, options: McpOptions, onSkip?: (server: McpServerRecord, error: unknown) => void): ToolSource {
  return {
    async tools(_caller: Caller, projectId: string): Promise<AgentTool[]> {
      const servers = await storage.mcpServers.forProject(projectId);
      const lists = await Promise.all(
        servers.map(async (server) => {
          const config = serverConfig(server, secrets);
          try {
            const tools = await options.connector.listTools(server.id, config, { signal: AbortSignal.timeout(options.listTimeoutMs ?? 5000) });
            return tools.map((tool) => agentTool(server, config, tool, options));
          } catch (error) {
            onSkip?.(server, error);
            return [];
          }
        }),
      );
      return lists.flat();
    },
  };
}

/** Whether the server's setting makes calls of `tool` wait for a person's approval. */
export const needsApproval = (setting: McpServerRecord['requiresApproval'], tool: string): boolean => (typeof setting === 'boolean' ? setting : setting.includes(tool));

function agentTool(server: McpServerRecord, config: McpServerConfig, tool: McpTool, options: McpOptions): AgentTool {
  return {
    definition: { name: mcpFunctionName(server.name, tool.name), description: tool.description || `${tool.name} (MCP server ${server.name})`, parameters: tool.inputSchema },
    ...(needsApproval(server.requiresApproval, tool.name) ? { requiresApproval: true } : {}),
    async run(args, context) {
      const result = await options.connector.callTool(server.id, config, {
        name: tool.name,
        args: args ?? {},
        ...(options.callTimeoutMs ? { timeoutMs: options.callTimeoutMs } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
        ...(server.allowSampling && context.sample ? { sample: context.sample } : {}),
        ...(context.elicit ? { elicit: context.elicit } : {}),
      });
      // The model sees a failing tool's text as an error, like a project tool's.
      if (result.isError) throw new Error(result.text || `MCP tool ${tool.name} failed`);
      return result.text;
    },
  };
}
