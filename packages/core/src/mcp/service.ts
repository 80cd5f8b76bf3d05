import { createHash } from 'node:crypto';
import type { AgentTool, ToolSource } from '../agent/tools.js';
import { isPlatformError, PlatformError } from '../errors.js';
import { displayUrl, maskUrl } from '../net/display.js';
import type { Caller } from '../context.js';
import type { SecretBox } from '../security/secrets.js';
import type { McpServerRecord, StorageAdapter } from '../storage/types.js';
import type { McpConnector, McpServerConfig, McpTool } from './types.js';
import type { McpServerView } from '../schemas/mcp.js';

export interface McpOptions {
  readonly connector: McpConnector;
  /** Time limit of one tool call made by the agent. Default: the connector's. */
  readonly callTimeoutMs?: number;
  /** Time limit of listing a server's tools for a completion; a server slower than that is left out. Default 5000 ms. */
  readonly listTimeoutMs?: number;
}

/** The notifier channel of deleted MCP servers, `{ serverId }`: every instance closes its connection to it. */
export const MCP_DELETED_CHANNEL = 'mcp.server-deleted';

/** Prefix of every MCP function name offered to a model; project tools may not use it. */
export const MCP_TOOL_PREFIX = 'mcp__';
const MAX_FUNCTION_NAME = 64;

/** What a server's `secrets` holds, sealed: header and env values, and a URL with user:password or a query. */
interface SealedServerSecrets {
  headers?: Record<string, string>;
  env?: Record<string, string>;
  url?: string;
}

/** The configuration a connector needs, with the secrets opened. */
export function serverConfig(record: McpServerRecord, secrets: SecretBox | undefined): McpServerConfig {
  const opened = record.secrets && secrets ? (JSON.parse(secrets.open(record.secrets)) as SealedServerSecrets) : {};
  return record.transport === 'stdio'
    ? { transport: 'stdio', command: record.command ?? '', args: record.args, ...(opened.env ? { env: opened.env } : {}) }
    : { transport: record.transport, url: opened.url ?? record.url ?? '', ...(opened.headers ? { headers: opened.headers } : {}) };
}

export function toServerView(r: McpServerRecord): McpServerView {
  return {
    id: r.id,
    projectId: r.projectId,
    name: r.name,
    transport: r.transport,
    url: r.url === null ? null : displayUrl(r.url),
    command: r.command,
    args: [...r.args],
    headerNames: [...r.headerNames],
    envNames: [...r.envNames],
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
  };
}

/** A server's tool as the routes answer it (the connector's object may carry more). */
export const toToolView = (t: McpTool) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema });

/**
 * A record for a new server: names in the clear, values sealed. A URL with user:password or a
 * query is sealed whole and stored masked (`****`), like a credential's base URL.
 */
export function newServerRecord(
  fields: Omit<McpServerRecord, 'secrets' | 'headerNames' | 'envNames' | 'url' | 'command' | 'args'> & {
    url?: string | undefined;
    command?: string | undefined;
    args?: readonly string[] | undefined;
    headers?: Readonly<Record<string, string>> | undefined;
    env?: Readonly<Record<string, string>> | undefined;
  },
  secrets: SecretBox | undefined,
): McpServerRecord {
  const { headers, env, url, command, args, ...rest } = fields;
  const shown = url === undefined ? undefined : maskUrl(url);
  const hidden: SealedServerSecrets = {
    ...(headers && Object.keys(headers).length ? { headers } : {}),
    ...(env && Object.keys(env).length ? { env } : {}),
    ...(shown?.secret ? { url } : {}),
  };
  if (Object.keys(hidden).length > 0 && !secrets) throw new PlatformError('unsupported', 'MCP server headers, env and URL credentials need a secret box: construct AgentPlatform with `secrets`');
  return {
    ...rest,
    url: shown?.masked ?? null,
    command: command ?? null,
    args: args ?? [],
    headerNames: Object.keys(headers ?? {}),
    envNames: Object.keys(env ?? {}),
    secrets: Object.keys(hidden).length > 0 && secrets ? secrets.seal(JSON.stringify(hidden)) : null,
  };
}

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

function agentTool(server: McpServerRecord, config: McpServerConfig, tool: McpTool, options: McpOptions): AgentTool {
  return {
    definition: { name: mcpFunctionName(server.name, tool.name), description: tool.description || `${tool.name} (MCP server ${server.name})`, parameters: tool.inputSchema },
    async run(args, context) {
      const result = await options.connector.callTool(server.id, config, {
        name: tool.name,
        args: args ?? {},
        ...(options.callTimeoutMs ? { timeoutMs: options.callTimeoutMs } : {}),
        ...(context.signal ? { signal: context.signal } : {}),
      });
      // The model sees a failing tool's text as an error, like a project tool's.
      if (result.isError) throw new Error(result.text || `MCP tool ${tool.name} failed`);
      return result.text;
    },
  };
}

/** A connector failure as the add route answers it: the policy's refusal and timeouts as they are, the rest named. */
export function probeError(error: unknown, config: McpServerConfig): PlatformError {
  if (isPlatformError(error)) return error;
  const where = config.transport === 'stdio' ? `command ${config.command}` : displayUrl(config.url ?? '');
  return new PlatformError('upstream_error', `MCP server (${where}) failed: ${(error as Error).message ?? String(error)}`, { cause: error });
}

