import { PlatformError } from '../errors.js';
import { displayUrl, maskUrl } from '../net/display.js';
import type { McpServerView } from '../schemas/mcp.js';
import type { SecretBox } from '../security/secrets.js';
import type { McpServerRecord } from '../storage/types.js';
import type { McpServerConfig, McpTool } from './types.js';

/*
 * MCP servers as stored and as answered: a new server's record with its secrets sealed, the
 * configuration a connector needs (secrets opened), and the views the routes answer.
 */

/** What a server's `secrets` holds, sealed: header and env values, and a URL with user:password or a query. */
interface SealedServerSecrets {
  headers?: Record<string, string>;
  env?: Record<string, string>;
  url?: string;
}

/** The configuration a connector needs, with the secrets opened. */
export function serverConfig(record: McpServerRecord, secrets: SecretBox | undefined): McpServerConfig {
  const opened = record.secrets && secrets ? (JSON.parse(secrets.open(record.secrets)) as SealedServerSecrets) : {};
  const sampling = record.allowSampling ? { allowSampling: true } : {};
  return record.transport === 'stdio'
    ? { transport: 'stdio', command: record.command ?? '', args: record.args, ...(opened.env ? { env: opened.env } : {}), ...sampling }
    : { transport: record.transport, url: opened.url ?? record.url ?? '', ...(opened.headers ? { headers: opened.headers } : {}), ...sampling };
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
    allowSampling: r.allowSampling,
    requiresApproval: typeof r.requiresApproval === 'boolean' ? r.requiresApproval : [...r.requiresApproval],
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
