import { type McpServerConfig, PlatformError } from '@agent-platform/core';
import { displayUrl } from '@agent-platform/core/internal';

/** A URL connections may be made to: http or https. Throws `invalid_request`. */
export function parseServerUrl(url: string | undefined, transport: string): URL {
  if (!url) throw PlatformError.invalid(`An MCP server with transport ${transport} needs a url`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw PlatformError.invalid(`Invalid MCP server URL: ${displayUrl(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw PlatformError.invalid(`Invalid MCP server URL ${displayUrl(url)}: only http and https URLs are supported`);
  }
  return parsed;
}

/**
 * Credentials in a URL (`https://user:pass@host/mcp`) as fetch will not send them: the URL
 * without them and a Basic `authorization` header — unless `headers` already has one.
 */
export function withUrlCredentials(url: URL, headers: Readonly<Record<string, string>> | undefined): { url: URL; headers: Record<string, string> | undefined } {
  if (!url.username && !url.password) return { url, headers: headers ? { ...headers } : undefined };
  const bare = new URL(url);
  bare.username = '';
  bare.password = '';
  const merged = { ...headers };
  if (!Object.keys(merged).some((name) => name.toLowerCase() === 'authorization')) {
    const user = decodeURIComponent(url.username);
    const password = decodeURIComponent(url.password);
    merged.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }
  return { url: bare, headers: merged };
}

/** How messages name a server: `MCP server at <url without credentials>` or `MCP server command "<command>"`. */
export function serverLabel(config: McpServerConfig): string {
  if (config.transport === 'stdio') return `MCP server command "${config.command ?? ''}"`;
  return `MCP server at ${displayUrl(config.url ?? '')}`;
}

/** A stable text of a configuration (keys sorted), to tell whether a saved server changed. */
export function configKey(config: McpServerConfig): string {
  return JSON.stringify(config, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}
