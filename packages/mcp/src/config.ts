import { displayUrl, type McpServerConfig, PlatformError } from '@agent-platform/core';

/**
 * Which stdio commands may start: `false` none, `true` any, a list only these (compared with
 * `config.command` exactly as given — no PATH lookup, no basename match, so `/tmp/x/npx` is
 * not `npx`).
 */
export type StdioPermission = boolean | readonly string[];

/**
 * Environment variables a caller may not set when only some commands are allowed: each would
 * change what an allowed command runs (PATH picks the program; the others inject code).
 */
const GUARDED_ENV = /^(PATH|NODE_OPTIONS|LD_[A-Z_]*|DYLD_[A-Z_]*)$/i;

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

/** Refuses a stdio command the operator did not allow (`invalid_request`). */
export function checkStdio(config: McpServerConfig, permission: StdioPermission): string {
  const command = config.command?.trim();
  if (!command) throw PlatformError.invalid('An MCP server with transport stdio needs a command');
  if (permission === false) {
    throw PlatformError.invalid(
      'stdio MCP servers are not allowed on this server: an operator can allow them with --allow-stdio-mcp (or allow commands with --allow-mcp-command)',
    );
  }
  if (permission === true) return config.command as string;
  if (!permission.includes(config.command as string)) {
    throw PlatformError.invalid(
      `The command "${config.command}" is not allowed for stdio MCP servers on this server (allowed: ${permission.length > 0 ? permission.map((c) => `"${c}"`).join(', ') : 'none'}); an operator can allow it with --allow-mcp-command`,
    );
  }
  const guarded = Object.keys(config.env ?? {}).filter((name) => GUARDED_ENV.test(name));
  if (guarded.length > 0) {
    throw PlatformError.invalid(
      `env ${guarded.join(', ')} cannot be set for a stdio MCP server on this server: with an allow-list of commands, PATH, NODE_OPTIONS, LD_* and DYLD_* would change what the allowed command runs`,
    );
  }
  return config.command as string;
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
