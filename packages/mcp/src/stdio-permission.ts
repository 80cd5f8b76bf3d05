import { type McpServerConfig, PlatformError } from '@agent-platform/core';
import { guardedEnvReason } from './stdio-env.js';

/**
 * One command line an operator allows for stdio MCP servers: a caller's configuration must have
 * exactly this `command` and exactly these `args`, and may set only the `env` keys named here.
 */
export interface StdioEntry {
  /** The program, compared exactly as given: no PATH lookup, no basename match. */
  readonly command: string;
  /** The arguments, all of them, in order. Default none. */
  readonly args?: readonly string[];
  /** Environment variables a caller may set (their values are the caller's). Default none. */
  readonly env?: readonly string[];
}

/**
 * Which stdio servers may start: `false` none, `true` any command with any arguments and env
 * (anything can run on the host), or a list of allowed command lines. A string in the list is
 * a command line split as a shell would split words (`npx -y @scope/server`, quotes and
 * backslashes, no expansion) or a JSON object `{"command", "args"?, "env"?}`
 * (see {@link parseStdioEntry}).
 */
export type StdioPermission = boolean | readonly (string | StdioEntry)[];

/** The checked form of a permission: `true`/`false`, or entries with their args and env filled in. */
export type ResolvedStdioPermission = boolean | readonly Required<StdioEntry>[];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const invalidEntry = (text: string, reason: string) => PlatformError.invalid(`Invalid stdio MCP command entry ${JSON.stringify(text)}: ${reason}`);

/**
 * Splits a command line into words as a POSIX shell does, without any expansion: whitespace
 * separates words; `'...'` keeps everything literally; `"..."` keeps everything but `\"`, `\\`,
 * `` \` `` and `\$`; a backslash outside quotes keeps the next character. Throws on an
 * unterminated quote.
 */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('unterminated single quote');
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; ; i++) {
        if (i >= line.length) throw new Error('unterminated double quote');
        const d = line[i] as string;
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && '"\\`$'.includes(line[i + 1] as string)) word += line[++i];
        else word += d;
      }
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('a backslash at the end');
      word = (word ?? '') + line[++i];
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** A command line as the operator could write it again: words with anything special single-quoted. */
export function formatCommandLine(command: string, args: readonly string[]): string {
  return [command, ...args].map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

function checkEnvNames(text: string, names: readonly string[]): void {
  for (const name of names) {
    if (!ENV_NAME.test(name)) throw invalidEntry(text, `env name ${JSON.stringify(name)} is not a variable name`);
    const reason = guardedEnvReason(name);
    if (reason) throw invalidEntry(text, `env ${name} cannot be allowed: it changes what the command loads or runs (${reason})`);
  }
}

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === 'string');

/**
 * One allow-list entry from its text: a JSON object (`{"command":"npx","args":["-y","pkg"],
 * "env":["API_KEY"]}`) when it starts with `{`, else a command line (`npx -y pkg`) whose first
 * word is the command and the rest its arguments (no env keys). A bare command is that command
 * with no arguments. Throws `invalid_request` naming the entry and the problem.
 *
 * @example
 * parseStdioEntry('npx -y @modelcontextprotocol/server-everything');
 * parseStdioEntry('{"command":"node","args":["/srv/mcp/server.js"],"env":["API_KEY"]}');
 */
export function parseStdioEntry(entry: string | StdioEntry): Required<StdioEntry> {
  if (typeof entry !== 'string') return checkedEntry(JSON.stringify(entry), entry);
  const text = entry.trim();
  if (text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw invalidEntry(text, `not valid JSON (${(error as Error).message})`);
    }
    return checkedEntry(text, parsed);
  }
  let words: string[];
  try {
    words = splitCommandLine(text);
  } catch (error) {
    throw invalidEntry(text, (error as Error).message);
  }
  const [command, ...args] = words;
  if (!command) throw invalidEntry(text, 'it names no command');
  return { command, args, env: [] };
}

function checkedEntry(text: string, value: unknown): Required<StdioEntry> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidEntry(text, 'expected a command line or an object {"command", "args"?, "env"?}');
  const { command, args = [], env = [], ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw invalidEntry(text, `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (an entry takes command, args, env)`);
  if (typeof command !== 'string' || command.trim() === '') throw invalidEntry(text, 'command must be a non-empty string');
  if (!isStringArray(args)) throw invalidEntry(text, 'args must be an array of strings');
  if (!isStringArray(env)) throw invalidEntry(text, 'env must be an array of variable names');
  checkEnvNames(text, env);
  return { command, args: [...args], env: [...env] };
}

/** Checks every entry of a permission once (at start), so a bad one fails there and not at a caller's request. */
export function resolveStdioPermission(permission: StdioPermission): ResolvedStdioPermission {
  return typeof permission === 'boolean' ? permission : permission.map(parseStdioEntry);
}

const sameArgs = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((arg, i) => arg === b[i]);

const describeEntry = (e: Required<StdioEntry>) => `"${formatCommandLine(e.command, e.args)}"`;

/**
 * Refuses a stdio configuration the operator did not allow (`invalid_request`); answers the
 * command to start. With a list, the configuration's command and args must equal one entry's
 * exactly, and its env keys must all be named by that entry; env keys that change what a
 * command loads or runs (see `guardedEnvReason`) are refused with the reason.
 */
export function checkStdio(config: McpServerConfig, permission: ResolvedStdioPermission): string {
  const command = config.command?.trim();
  if (!command) throw PlatformError.invalid('An MCP server with transport stdio needs a command');
  if (permission === false) {
    throw PlatformError.invalid('stdio MCP servers are not allowed on this server: an operator can allow them with --allow-stdio-mcp (or allow command lines with --allow-mcp-command)');
  }
  if (permission === true) return config.command as string;
  const args = config.args ?? [];
  const line = formatCommandLine(config.command as string, args);
  const allowed = permission.length > 0 ? [...new Set(permission.map(describeEntry))].join(', ') : 'none';
  // Entries for the same line add up: the env keys of any of them may be set.
  const entries = permission.filter((e) => e.command === config.command && sameArgs(e.args, args));
  if (entries.length === 0) {
    const what = permission.some((e) => e.command === config.command) ? `The arguments of "${config.command}" in "${line}" are` : `The command line "${line}" is`;
    throw PlatformError.invalid(
      `${what} not allowed for stdio MCP servers on this server: the command and all its arguments must equal an allowed command line (allowed: ${allowed}); an operator can allow one with --allow-mcp-command`,
    );
  }
  // Checked before the entries' names, so the answer says why: no entry can name these (they
  // are refused when the entries are read), and a caller learns it is not a matter of asking.
  const guarded = Object.keys(config.env ?? {}).flatMap((name) => {
    const reason = guardedEnvReason(name);
    return reason ? [{ name, reason }] : [];
  });
  if (guarded.length > 0) {
    throw PlatformError.invalid(
      `env ${guarded.map((g) => g.name).join(', ')} cannot be set for a stdio MCP server on this server, by any allowed command line: it changes what the command loads or runs (${guarded.map((g) => `${g.name}: ${g.reason}`).join('; ')})`,
    );
  }
  const env = new Set(entries.flatMap((e) => e.env));
  const refused = Object.keys(config.env ?? {}).filter((name) => !env.has(name));
  if (refused.length > 0) {
    throw PlatformError.invalid(`env ${refused.join(', ')} cannot be set for the stdio MCP server "${line}" on this server (allowed: ${env.size > 0 ? [...env].join(', ') : 'none'})`);
  }
  return config.command as string;
}
