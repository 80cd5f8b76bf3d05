import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpConnector, McpServerConfig } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpConnector, formatCommandLine, parseStdioEntry, splitCommandLine } from '../src/index.js';
import { rejection, TEST_SERVER } from './helpers.js';

/**
 * Which stdio servers may start: none by default, anything with `true`, and with an allow-list
 * exactly the listed command lines (command and every argument) with only the env keys an entry
 * names. Real processes: the test MCP server over stdio, and `node -e` that would leave a file.
 */

const connectors: McpConnector[] = [];
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-stdio-'));
});
afterAll(async () => {
  await Promise.all(connectors.map((c) => c.close()));
  await rm(dir, { recursive: true, force: true });
});

function connector(options: Parameters<typeof createMcpConnector>[0] = {}): McpConnector {
  const created = createMcpConnector(options);
  connectors.push(created);
  return created;
}

/**
 * Variables that change what a command loads or runs, from each family the guard knows, with
 * words of the reason its refusal gives (names are compared without regard to case).
 */
const GUARDED: readonly [string, RegExp][] = [
  ['PATH', /picks the program/],
  ['NODE_OPTIONS', /Node\.js reads NODE_\*/],
  ['NODE_PATH', /Node\.js reads NODE_\*: .*module paths/],
  ['LD_PRELOAD', /dynamic loader/],
  ['ld_library_path', /dynamic loader/],
  ['DYLD_INSERT_LIBRARIES', /dynamic loader/],
  ['PYTHONPATH', /Python.*module paths/],
  ['PYTHONHOME', /Python/],
  ['PYTHONSTARTUP', /Python.*start-up code/],
  ['PIP_INDEX_URL', /pip/],
  ['BASH_ENV', /shells read it: start-up files/],
  ['ENV', /shells read it/],
  ['npm_config_registry', /npm, npx, pnpm/],
  ['NPM_CONFIG_NODE_OPTIONS', /npm, npx, pnpm/],
  ['GCONV_PATH', /C library reads it to load modules/],
  ['HOSTALIASES', /resolve host names/],
  ['PERL5LIB', /Perl/],
  ['PERL5OPT', /Perl.*options/],
  ['RUBYOPT', /Ruby/],
  ['JAVA_TOOL_OPTIONS', /Java launcher/],
  ['CLASSPATH', /class path/],
  ['DOTNET_STARTUP_HOOKS', /\.NET.*startup hooks/],
  ['GOFLAGS', /go command/],
  ['GIT_SSH_COMMAND', /git reads GIT_\*/],
  ['HOME', /configuration files/],
  ['EDITOR', /names a program/],
  ['OPENSSL_CONF', /OpenSSL/],
];

const stdioConfig: McpServerConfig = { transport: 'stdio', command: process.execPath, args: [TEST_SERVER, 'stdio'] };
/** The one line allowed in most cases below: `node test-server.mjs stdio`, as an operator writes it. */
const LINE = formatCommandLine(process.execPath, [TEST_SERVER, 'stdio']);

describe('stdio permission', () => {
  const refusal = 'stdio MCP servers are not allowed on this server: an operator can allow them with --allow-stdio-mcp (or allow command lines with --allow-mcp-command)';

  it('refused by default, for probe, listTools and callTool, before anything starts', async () => {
    const mcp = connector();
    await rejection(mcp.probe(stdioConfig), 'invalid_request', refusal);
    await rejection(mcp.listTools('s', stdioConfig), 'invalid_request', refusal);
    await rejection(mcp.callTool('s', stdioConfig, { name: 'pid', args: {} }), 'invalid_request', refusal);
    // No backoff for a refusal: the next call is refused the same way, not "retrying in".
    await rejection(mcp.listTools('s', stdioConfig), 'invalid_request', refusal);
  });

  it('allowed with true: any command line and any env', async () => {
    expect((await connector({ allowStdio: true }).probe(stdioConfig)).serverInfo).toEqual({ name: 'connector-test-server', version: '1.2.3' });
  });

  it('an allowed command line starts, as a string or as an object', async () => {
    expect((await connector({ allowStdio: [LINE] }).probe(stdioConfig)).tools.length).toBeGreaterThan(0);
    expect((await connector({ allowStdio: [{ command: process.execPath, args: [TEST_SERVER, 'stdio'] }] }).probe(stdioConfig)).tools.length).toBeGreaterThan(0);
  });

  it('node -e is refused when only a fixed `node server.js` line is allowed, and nothing runs', async () => {
    const marker = join(dir, 'ran');
    const mcp = connector({ allowStdio: [LINE] });
    const code = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')`;
    const error = await rejection(mcp.probe({ transport: 'stdio', command: process.execPath, args: ['-e', code] }), 'invalid_request');
    expect(error.message).toBe(
      `The arguments of "${process.execPath}" in "${formatCommandLine(process.execPath, ['-e', code])}" are not allowed for stdio MCP servers on this server: the command and all its arguments must equal an allowed command line (allowed: "${LINE}"); an operator can allow one with --allow-mcp-command`,
    );
    // The allowed script with code appended, or an interpreter flag in front of it, are other lines too.
    await rejection(mcp.probe({ ...stdioConfig, args: ['-e', code, TEST_SERVER, 'stdio'] }), 'invalid_request', /are not allowed/);
    await rejection(mcp.probe({ ...stdioConfig, args: ['--require', marker, TEST_SERVER, 'stdio'] }), 'invalid_request', /are not allowed/);
    expect(existsSync(marker)).toBe(false);
  });

  it('extra, missing or reordered arguments are refused', async () => {
    const mcp = connector({ allowStdio: [LINE] });
    for (const args of [[TEST_SERVER, 'stdio', '--extra'], [TEST_SERVER], [], ['stdio', TEST_SERVER], [TEST_SERVER, 'stdio ']]) {
      await rejection(mcp.probe({ ...stdioConfig, args }), 'invalid_request', /are not allowed for stdio MCP servers/);
    }
    // Another command entirely, and a bare entry: that command with no arguments.
    await rejection(
      connector({ allowStdio: ['node'] }).probe(stdioConfig),
      'invalid_request',
      `The command line "${LINE}" is not allowed for stdio MCP servers on this server: the command and all its arguments must equal an allowed command line (allowed: "node"); an operator can allow one with --allow-mcp-command`,
    );
    await rejection(connector({ allowStdio: [process.execPath] }).probe(stdioConfig), 'invalid_request', /are not allowed/);
    await rejection(connector({ allowStdio: [] }).probe(stdioConfig), 'invalid_request', /\(allowed: none\)/);
  });

  it('env keys outside the entry are refused; the ones it names reach the process', async () => {
    const strict = connector({ allowStdio: [LINE] });
    await rejection(strict.probe({ ...stdioConfig, env: { API_TOKEN: 'x' } }), 'invalid_request', `env API_TOKEN cannot be set for the stdio MCP server "${LINE}" on this server (allowed: none)`);
    const mcp = connector({ allowStdio: [{ command: process.execPath, args: [TEST_SERVER, 'stdio'], env: ['API_TOKEN'] }] });
    await rejection(
      mcp.probe({ ...stdioConfig, env: { API_TOKEN: 'x', OTHER: '/tmp/x' } }),
      'invalid_request',
      `env OTHER cannot be set for the stdio MCP server "${LINE}" on this server (allowed: API_TOKEN)`,
    );
    const env = JSON.parse((await mcp.callTool('env', { ...stdioConfig, env: { API_TOKEN: 'token-1' } }, { name: 'env', args: {} })).text) as Record<string, string>;
    expect(env.API_TOKEN).toBe('token-1');
  });

  it('variables that change what a command loads or runs are refused with the reason, whatever the entry names', async () => {
    // The entries cannot name them (next describe), so no entry lets a caller set them.
    const mcp = connector({ allowStdio: [{ command: process.execPath, args: [TEST_SERVER, 'stdio'], env: ['API_TOKEN'] }] });
    for (const [name, reason] of GUARDED) {
      const error = await rejection(mcp.probe({ ...stdioConfig, env: { API_TOKEN: 'x', [name]: '/tmp/x' } }), 'invalid_request');
      expect(error.message).toMatch(
        new RegExp(`^env ${name} cannot be set for a stdio MCP server on this server, by any allowed command line: it changes what the command loads or runs \\(${name}: `),
      );
      expect(error.message, name).toMatch(reason);
    }
    // All of them at once are named together.
    await rejection(
      mcp.probe({ ...stdioConfig, env: { PYTHONPATH: '/tmp', BASH_ENV: '/tmp/x', API_TOKEN: 'x' } }),
      'invalid_request',
      /^env PYTHONPATH, BASH_ENV cannot be set .*\(PYTHONPATH: Python.*; BASH_ENV: shells/,
    );
  });

  it('variables of those families that only tune output stay allowable, and reach the process', async () => {
    const names = ['NODE_ENV', 'PYTHONUNBUFFERED', 'PYTHONIOENCODING', 'GIT_AUTHOR_NAME', 'API_TOKEN'];
    const mcp = connector({ allowStdio: [{ command: process.execPath, args: [TEST_SERVER, 'stdio'], env: names }] });
    const given = Object.fromEntries(names.map((n) => [n, `value of ${n}`]));
    const env = JSON.parse((await mcp.callTool('env', { ...stdioConfig, env: given }, { name: 'env', args: {} })).text) as Record<string, string>;
    for (const name of names) expect(env[name]).toBe(`value of ${name}`);
  });

  it('a configuration without a command is invalid', async () => {
    await rejection(connector({ allowStdio: true }).probe({ transport: 'stdio' }), 'invalid_request', 'An MCP server with transport stdio needs a command');
  });
});

describe('allow-list entries', () => {
  it('split command lines as a shell does, without expansion', () => {
    expect(splitCommandLine('npx -y @modelcontextprotocol/server-everything')).toEqual(['npx', '-y', '@modelcontextprotocol/server-everything']);
    expect(splitCommandLine(`  "/opt/my tools/server"  --name 'a b'  x\\ y "say \\"hi\\"" '$HOME' "" `)).toEqual(['/opt/my tools/server', '--name', 'a b', 'x y', 'say "hi"', '$HOME', '']);
    expect(splitCommandLine(`a'b'"c"d`)).toEqual(['abcd']);
    expect(() => splitCommandLine(`a 'b`)).toThrow('unterminated single quote');
    expect(() => splitCommandLine('a "b')).toThrow('unterminated double quote');
    // formatCommandLine writes what splits back to the same words.
    const words = ['/opt/my tools/server', "it's", '', '--flag=a,b', '$HOME'];
    expect(splitCommandLine(formatCommandLine(words[0] as string, words.slice(1)))).toEqual(words);
  });

  it('parse a command line or a JSON object', () => {
    expect(parseStdioEntry('node /srv/mcp/server.js')).toEqual({ command: 'node', args: ['/srv/mcp/server.js'], env: [] });
    expect(parseStdioEntry('uvx')).toEqual({ command: 'uvx', args: [], env: [] });
    expect(parseStdioEntry(' {"command":"npx","args":["-y","pkg"],"env":["API_KEY"]}')).toEqual({ command: 'npx', args: ['-y', 'pkg'], env: ['API_KEY'] });
    expect(parseStdioEntry({ command: 'npx' })).toEqual({ command: 'npx', args: [], env: [] });
  });

  it('refuse a bad entry, naming it and the problem', () => {
    const bad = (entry: string, message: string | RegExp) => expect(() => parseStdioEntry(entry)).toThrow(message);
    bad('', 'Invalid stdio MCP command entry "": it names no command');
    bad(`node 'x`, 'unterminated single quote');
    bad('{"command":', /not valid JSON/);
    bad('{"args":["x"]}', 'command must be a non-empty string');
    bad('{"command":"x","args":"-y"}', 'args must be an array of strings');
    bad('{"command":"x","env":"A"}', 'env must be an array of variable names');
    bad('{"command":"x","cwd":"/"}', 'unknown key cwd (an entry takes command, args, env)');
    bad('{"command":"x","env":["NODE_OPTIONS"]}', 'env NODE_OPTIONS cannot be allowed');
    bad('{"command":"x","env":["A-B"]}', 'env name "A-B" is not a variable name');
    for (const [name, reason] of GUARDED) {
      expect(() => parseStdioEntry(JSON.stringify({ command: 'x', env: ['API_KEY', name] }))).toThrow(
        `Invalid stdio MCP command entry ${JSON.stringify(JSON.stringify({ command: 'x', env: ['API_KEY', name] }))}: env ${name} cannot be allowed: it changes what the command loads or runs (`,
      );
      expect(() => parseStdioEntry({ command: 'x', env: [name] }), name).toThrow(reason);
    }

    // The connector checks its entries when it is made.
    expect(() => createMcpConnector({ allowStdio: ['{"command":"x","env":["PATH"]}'] })).toThrow('env PATH cannot be allowed');
  });
});
