import { parseArgs } from 'node:util';
import type { AgentPlatform } from '@agent-platform/core';
import { UsageError } from './cli-usage.js';
import { openPlatform } from './server.js';

export const KEYS_HELP = `Usage: agent-platform keys create --name NAME [--data ./data] [--user USER_ID]
       agent-platform keys list [--data ./data] [--user USER_ID]

keys create makes an API key directly in the data folder and prints it alone on the last line
of stdout, after a line naming the key's id and its user's id. Without --user it creates a new
user that owns the key; with --user USER_ID the key is another key of that existing user (the
user id is printed when a key is created, listed by keys list, and answered by the API as
"userId" of POST /api/auth/create-key and GET /api/auth/keys).

keys list prints every user's keys (or only USER_ID's), one line each: user id, key id, name,
the key's public prefix, when it was created and last used. Secrets are never shown.

Options:
  --name NAME     Label of the key (keys create; required)
  --data DIR      Data folder (env AGENT_PLATFORM_DATA, default ./data)
  --database URL  The PostgreSQL database of a multi-instance server instead of the data
                  folder's SQLite file (env AGENT_PLATFORM_DATABASE_URL; needs AGENT_PLATFORM_SECRET)
  --user USER_ID  keys create: add the key to this existing user; keys list: only this user
  -h, --help      Show this help
`;

async function withPlatform(values: { data?: string | undefined; database?: string | undefined }, fn: (platform: AgentPlatform) => Promise<void>): Promise<void> {
  const platform = await openPlatform(values.data ?? process.env.AGENT_PLATFORM_DATA ?? './data', values.database ? { database: values.database } : {});
  try {
    await fn(platform);
  } finally {
    await platform.storage.close();
  }
}

/**
 * A key's name as a table cell: control characters escaped as `\u001b` (a name is chosen by an
 * API user, and an escape sequence in it must not drive the operator's terminal), so one key
 * is one line.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const OPTIONS = { data: { type: 'string' }, database: { type: 'string' }, user: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

async function create(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, strict: true, options: { ...OPTIONS, name: { type: 'string' } } });
  if (values.help) return void process.stdout.write(KEYS_HELP);
  if (!values.name) throw new UsageError('--name is required');
  const { name, user } = values;
  await withPlatform(values, async (platform) => {
    const created = user ? await platform.createKeyForUser(user, { name }) : await platform.createUserWithKey({ name });
    const who = user ? `existing user ${created.userId}` : `new user ${created.userId}`;
    process.stdout.write(`Created key ${created.id} for ${who} (another key for this user: keys create --user ${created.userId} --name NAME):\n${created.key}\n`);
  });
}

async function list(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, strict: true, options: OPTIONS });
  if (values.help) return void process.stdout.write(KEYS_HELP);
  const { user } = values;
  await withPlatform(values, async (platform) => {
    const users = user ? [await platform.listKeysForUser(user)] : await platform.listAllKeys();
    const rows = [['USER', 'KEY', 'NAME', 'PREFIX', 'CREATED', 'LAST USED']];
    for (const u of users) for (const k of u.keys) rows.push([u.userId, k.id, printable(k.name), k.prefix, k.createdAt, k.lastUsedAt ?? 'never']);
    if (rows.length === 1) return void process.stdout.write(user ? `User ${user} has no keys.\n` : 'No keys in this data folder.\n');
    // Columns two spaces apart, padded to their widest cell (names may hold single spaces).
    const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
    const lines = rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '));
    process.stdout.write(`${lines.join('\n')}\n`);
  });
}

/** `agent-platform keys <create|list> ...`. */
export async function keysCommand(argv: string[]): Promise<void> {
  const [sub, ...args] = argv;
  if (sub === 'create') return create(args);
  if (sub === 'list') return list(args);
  if (sub === undefined || sub === '--help' || sub === '-h') return void process.stdout.write(KEYS_HELP);
  throw new UsageError(`Unknown keys command "${sub}"`);
}
