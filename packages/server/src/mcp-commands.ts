import { readFileSync } from 'node:fs';
import { PlatformError } from '@agent-platform/core';
import { parseStdioEntry, type StdioEntry, type StdioPermission } from '@agent-platform/mcp';

const EXAMPLE = `e.g. ["npx -y @modelcontextprotocol/server-everything", {"command":"node","args":["/srv/mcp/server.js"],"env":["API_KEY"]}]`;

/**
 * The allowed command lines of a `--mcp-commands` file: one entry per line (a command line or a
 * JSON object, see `parseStdioEntry`); blank lines and lines starting with `#` are skipped.
 * Throws `invalid_request` naming the file and line of a bad entry.
 */
export function readMcpCommandsFile(path: string): StdioEntry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw PlatformError.invalid(`--mcp-commands ${path}: ${(error as Error).message}`);
  }
  const entries: StdioEntry[] = [];
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    try {
      entries.push(parseStdioEntry(line));
    } catch (error) {
      throw PlatformError.invalid(`--mcp-commands ${path} line ${i + 1}: ${(error as Error).message}`);
    }
  }
  return entries;
}

/**
 * The entries of AGENT_PLATFORM_MCP_COMMANDS: a JSON array of command lines and
 * `{ command, args?, env? }` objects. The comma-separated list of bare commands it used to be
 * (which let every caller choose the arguments, so `node` allowed `node -e ...`) is refused
 * with a message giving the new form, rather than quietly read with another meaning.
 */
export function parseMcpCommandsEnv(value: string): StdioEntry[] {
  const text = value.trim();
  if (!text.startsWith('[')) {
    throw PlatformError.invalid(
      `AGENT_PLATFORM_MCP_COMMANDS must be a JSON array of allowed command lines, ${EXAMPLE}. An entry fixes the whole command line (the command and all its arguments) and the env keys a caller may set; the comma-separated list of commands it used to be let callers choose any arguments and is no longer accepted (see docs/MCP.md)`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw PlatformError.invalid(`AGENT_PLATFORM_MCP_COMMANDS is not valid JSON (${(error as Error).message}); ${EXAMPLE}`);
  }
  if (!Array.isArray(parsed)) throw PlatformError.invalid(`AGENT_PLATFORM_MCP_COMMANDS must be a JSON array, ${EXAMPLE}`);
  return parsed.map((entry: unknown) => {
    if (typeof entry !== 'string' && (typeof entry !== 'object' || entry === null)) {
      throw PlatformError.invalid(`AGENT_PLATFORM_MCP_COMMANDS: ${JSON.stringify(entry)} is neither a command line nor an object, ${EXAMPLE}`);
    }
    return parseStdioEntry(entry as string | StdioEntry);
  });
}

/**
 * The stdio permission from the environment: the command lines of AGENT_PLATFORM_MCP_COMMANDS
 * and AGENT_PLATFORM_MCP_COMMANDS_FILE when there are any, else AGENT_PLATFORM_ALLOW_STDIO_MCP
 * (`true`/`1`/`yes`: any command), else none.
 */
export function stdioFromEnv(env: NodeJS.ProcessEnv): StdioPermission {
  const entries = [
    ...(env.AGENT_PLATFORM_MCP_COMMANDS?.trim() ? parseMcpCommandsEnv(env.AGENT_PLATFORM_MCP_COMMANDS) : []),
    ...(env.AGENT_PLATFORM_MCP_COMMANDS_FILE ? readMcpCommandsFile(env.AGENT_PLATFORM_MCP_COMMANDS_FILE) : []),
  ];
  if (entries.length > 0) return entries;
  return /^(1|true|yes)$/i.test(env.AGENT_PLATFORM_ALLOW_STDIO_MCP ?? '');
}
