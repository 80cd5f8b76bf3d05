import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { formatCommandLine } from '@agent-platform/mcp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVERYTHING } from '../../mcp/test/helpers.js';

// The built CLI, as users run it (`pnpm test` builds first).
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const run = promisify(execFile);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

async function whoAmI(url: string, key: string) {
  const res = await fetch(`${url}/api/auth/keys`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: (await res.json()) as { userId: string; keys: { id: string; name: string }[] } };
}

/** Starts `serve`, resolves with the child and everything it printed up to the listening line. */
function serve(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; output: () => string; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr.on('data', (b: Buffer) => {
    out += b.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 20_000);
    child.stdout.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve({ child, output: () => out, url: m[1] });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}:\n${out}`)));
  });
}

describe('agent-platform CLI', () => {
  it('keys create twice gives two users, each key alone on the last line', async () => {
    const a = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'alice', '--data', dir]);
    const b = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'bob', '--data', dir]);
    const keyA = lastLine(a.stdout);
    const keyB = lastLine(b.stdout);
    expect(keyA).toMatch(/^ap_[0-9a-z]{44}$/);
    expect(keyB).toMatch(/^ap_[0-9a-z]{44}$/);
    expect(keyA).not.toBe(keyB);

    const { child, url } = await serve(['--port', '0', '--data', dir]);
    try {
      // Two users: each sees only its own key.
      const seenA = await whoAmI(url, keyA);
      const seenB = await whoAmI(url, keyB);
      expect(seenA.body.keys.map((k) => k.name)).toEqual(['alice']);
      expect(seenB.body.keys.map((k) => k.name)).toEqual(['bob']);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('keys create --user adds a key to an existing user, and rejects an unknown user', async () => {
    const first = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'one', '--data', dir]);
    const userId = /user (user_\w+)/.exec(first.stdout)?.[1];
    expect(userId).toBeDefined();
    const second = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'two', '--data', dir, '--user', userId as string]);
    expect(lastLine(second.stdout)).toMatch(/^ap_/);
    const { child, url } = await serve(['--port', '0', '--data', dir]);
    try {
      const seen = await whoAmI(url, lastLine(first.stdout));
      expect(seen.body.keys.map((k) => k.name)).toEqual(['two', 'one']);
    } finally {
      child.kill('SIGTERM');
    }
    await expect(run(process.execPath, [CLI, 'keys', 'create', '--name', 'x', '--data', dir, '--user', 'user_nobody'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('user_nobody not found'),
    });
  });

  it("keys create prints the key's user id, keys list shows every user's keys with their ids, no secrets", async () => {
    const first = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'alice', '--data', dir]);
    const userId = /new user (user_\w+)/.exec(first.stdout)?.[1] as string;
    const keyId = /key (key_\w+)/.exec(first.stdout)?.[1] as string;
    expect(userId).toMatch(/^user_/);
    expect(first.stdout).toContain(`keys create --user ${userId} --name NAME`);
    const second = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'laptop', '--data', dir, '--user', userId]);
    expect(second.stdout).toContain(`for existing user ${userId}`);
    const other = await run(process.execPath, [CLI, 'keys', 'create', '--name', 'bob\u001b[2J\nx', '--data', dir]);
    const otherUser = /new user (user_\w+)/.exec(other.stdout)?.[1] as string;
    expect(otherUser).not.toBe(userId);

    const listed = (await run(process.execPath, [CLI, 'keys', 'list', '--data', dir])).stdout;
    const rows = listed.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^USER\s+KEY\s+NAME\s+PREFIX\s+CREATED\s+LAST USED$/);
    const cells = rows.slice(1).map((r) => r.split(/\s{2,}/));
    expect(cells.map((c) => [c[0], c[2]])).toEqual([
      // A name's control characters are escaped: no terminal sequence, one line per key.
      [otherUser, 'bob\\u001b[2J\\u000ax'],
      [userId, 'laptop'],
      [userId, 'alice'],
    ]);
    expect(cells.find((c) => c[2] === 'alice')?.[1]).toBe(keyId);
    expect(cells.every((c) => c[5] === 'never' && /^ap_\w{12}$/.test(c[3] ?? ''))).toBe(true);
    for (const out of [first, second, other]) expect(listed).not.toContain(lastLine(out.stdout));

    const mine = (await run(process.execPath, [CLI, 'keys', 'list', '--data', dir, '--user', userId])).stdout;
    expect(
      mine
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((r) => r.split(/\s{2,}/)[2]),
    ).toEqual(['laptop', 'alice']);
    await expect(run(process.execPath, [CLI, 'keys', 'list', '--data', dir, '--user', 'user_nobody'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('User user_nobody not found'),
    });
    const empty = await mkdtemp(join(tmpdir(), 'ap-cli-empty-'));
    try {
      expect((await run(process.execPath, [CLI, 'keys', 'list', '--data', empty])).stdout).toBe('No keys in this data folder.\n');
    } finally {
      await rm(empty, { recursive: true, force: true });
    }

    // The API answers the same user id.
    const { child, url } = await serve(['--port', '0', '--data', dir]);
    try {
      const res = await fetch(`${url}/api/auth/keys`, { headers: { authorization: `Bearer ${lastLine(second.stdout)}` } });
      expect(((await res.json()) as { userId: string }).userId).toBe(userId);
    } finally {
      child.kill('SIGTERM');
    }
    // Seven CLI runs and a server start: seconds apiece on a busy 2-core machine.
  }, 90_000);

  it('serve on an empty data folder prints a key, answers /health, and stops cleanly on SIGTERM', async () => {
    const { child, output, url } = await serve(['--port', '0'], { AGENT_PLATFORM_DATA: dir });
    const key = /shown only once:\n(ap_\w+)\n/.exec(output())?.[1];
    expect(key).toBeDefined();
    const firstUser = /for a new user, (user_\w+) \(more keys for it: keys create --user \1 --name NAME\)/.exec(output())?.[1];
    expect((await whoAmI(url, key as string)).body).toMatchObject({ userId: firstUser });
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
    expect((await whoAmI(url, key as string)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output()).toContain('SIGTERM received, shutting down');

    // A second start on the same folder prints no new key: the first one still works.
    const again = await serve(['--port', '0', '--data', dir]);
    try {
      expect(again.output()).not.toContain('shown only once');
      expect((await whoAmI(again.url, key as string)).status).toBe(200);
    } finally {
      again.child.kill('SIGINT');
    }
  });

  it('serve goes on when the reader of its output goes away (a pipeline whose reader exited): it still answers and stops cleanly', async () => {
    const { child, url } = await serve(['--port', '0', '--data', dir]);
    // The reading end of its stdout closed: its next line (the shutdown's) finds no reader (EPIPE).
    child.stdout?.destroy();
    expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('says on the first start how to allow a local model server; --allow-host HOST:PORT lets users name that port only', async () => {
    const lm = createServer();
    await new Promise<void>((resolve) => lm.listen(0, '127.0.0.1', resolve));
    const lmPort = (lm.address() as AddressInfo).port;
    const { child, output, url } = await serve(['--port', '0', '--data', dir, '--allow-host', `127.0.0.1:${lmPort}`]);
    try {
      expect(output()).toContain(
        "URLs your users give (a credential's base URL, MCP servers, vector stores, local model addresses) cannot reach this machine's own services (loopback) unless you allow them by port: for a local model server, restart with --allow-host 127.0.0.1:1234 (LM Studio) or --allow-host 127.0.0.1:11434 (Ollama; the server's own OLLAMA_HOST needs nothing).\n",
      );
      const key = /shown only once:\n(ap_\w+)\n/.exec(output())?.[1] as string;
      const credential = (baseUrl: string) =>
        fetch(`${url}/api/v1/credentials`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'lm studio', provider: 'openai', apiKey: 'lm-studio', baseUrl }),
        });
      expect((await credential(`http://127.0.0.1:${lmPort}/v1`)).status).toBe(201);
      // Another port of the same address (this server's own): refused, naming the entry that would allow it.
      const own = new URL(url).port;
      const refused = await credential(`http://127.0.0.1:${own}/api`);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { message: string }).message).toBe(
        `baseUrl: Refused to connect to 127.0.0.1: loopback address (this server's own machine); allow it with --allow-host 127.0.0.1:${own}`,
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => lm.close(resolve));
    }
    // An entry that is not one stops the start before anything is opened, naming the flag and why.
    for (const [args, env] of [
      [['--allow-host', '127.0.0.1:0'], {}],
      [[], { AGENT_PLATFORM_ALLOWED_HOSTS: '127.0.0.1:http' }],
    ] as const) {
      const failed = await run(process.execPath, [CLI, 'serve', '--port', '0', '--data', join(dir, 'never'), ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } }).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toContain('--allow-host: Invalid allowed host "127.0.0.1:');
      expect(failed?.stderr).toContain('the port must be a number from 1 to 65535');
      expect(existsSync(join(dir, 'never'))).toBe(false);
    }
  }, 60_000);

  it('on a busy port prints one line naming the port and the flag, exits 1, and makes no key nobody sees', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      for (const [args, env] of [
        [['--port', String(port)], {}],
        [[], { PORT: String(port) }],
      ] as const) {
        const failed = await run(process.execPath, [CLI, 'serve', '--data', dir, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } }).then(
          () => undefined,
          (error: { code: number; stdout: string; stderr: string }) => error,
        );
        expect(failed?.code).toBe(1);
        expect(failed?.stderr).toBe(`agent-platform: port ${port} on 127.0.0.1 is already in use by another program: stop it, or choose another with --port PORT (or the PORT environment variable)\n`);
        expect(failed?.stdout).toBe('');
      }
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    // The failed starts created no key: the first start that listens shows one.
    const { child, output } = await serve(['--port', '0', '--data', dir]);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    expect(output()).toMatch(/It is shown only once:\nap_\w+\n/);
  });

  it('serves the web console at / by default, and not with --no-console or AGENT_PLATFORM_NO_CONSOLE=true', async () => {
    const stop = async (child: ChildProcess) => {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.kill('SIGINT');
      await exited;
    };
    const on = await serve(['--port', '0', '--data', dir]);
    try {
      const root = await fetch(`${on.url}/`, { redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/console/');
      const page = await fetch(`${on.url}/console/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
      await expect.poll(() => on.output()).toContain(`Web console: ${on.url}/console/`);
    } finally {
      await stop(on.child);
    }
    for (const [args, env] of [
      [['--no-console'], {}],
      [[], { AGENT_PLATFORM_NO_CONSOLE: 'true' }],
    ] as const) {
      const off = await serve(['--port', '0', '--data', dir, ...args], env);
      try {
        expect((await fetch(`${off.url}/`, { redirect: 'manual' })).status).toBe(404);
        expect((await fetch(`${off.url}/console/`)).status).toBe(404);
        expect(off.output()).not.toContain('Web console');
      } finally {
        await stop(off.child);
      }
    }
  }, 120_000);

  it('prints help for each command and rejects bad flags', async () => {
    expect((await run(process.execPath, [CLI, '--help'])).stdout).toContain('keys create');
    expect((await run(process.execPath, [CLI, 'serve', '--help'])).stdout).toContain('--cors-origin');
    expect((await run(process.execPath, [CLI, 'keys', 'create', '--help'])).stdout).toContain('--user USER_ID');
    expect((await run(process.execPath, [CLI, 'keys', 'list', '--help'])).stdout).toContain('keys list [--data ./data] [--user USER_ID]');
    expect((await run(process.execPath, [CLI, '--help'])).stdout).toContain('keys list');
    await expect(run(process.execPath, [CLI, 'serve', '--port', 'abc'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--port') });
    await expect(run(process.execPath, [CLI, 'keys', 'create', '--data', dir])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--name') });
    await expect(run(process.execPath, [CLI, 'serve', '--bogus'])).rejects.toMatchObject({ code: 2 });
    await expect(run(process.execPath, [CLI, 'serve', '--python-isolation', 'none'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('auto, namespaces, process') });
    await expect(run(process.execPath, [CLI, 'serve', '--npm-registry', 'file:///etc'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--npm-registry') });
    await expect(run(process.execPath, [CLI, 'serve', '--max-document-pages', 'many'])).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--max-document-pages') });
    await expect(run(process.execPath, [CLI, 'serve'], { env: { ...process.env, AGENT_PLATFORM_DOCUMENT_MEMORY_MB: '10' } })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--document-memory (AGENT_PLATFORM_DOCUMENT_MEMORY_MB) must be an integer of at least 64'),
    });
    await expect(run(process.execPath, [CLI, 'serve', '--job-lease-ms', '10'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--job-lease-ms (AGENT_PLATFORM_JOB_LEASE_MS) must be an integer from 300 to 3600000 (default 30000), got "10"'),
    });
    await expect(run(process.execPath, [CLI, 'serve', '--stream-lease-ms', '30s'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--stream-lease-ms (AGENT_PLATFORM_STREAM_LEASE_MS) must be an integer'),
    });
    await expect(run(process.execPath, [CLI, 'serve'], { env: { ...process.env, AGENT_PLATFORM_JOB_POLL_MS: '0' } })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--job-poll-ms (AGENT_PLATFORM_JOB_POLL_MS) must be an integer from 10 to 600000'),
    });
    // A `--` separator (as `pnpm start -- --port 1` passes it) is ignored.
    expect((await run(process.execPath, [CLI, 'serve', '--', '--help'])).stdout).toContain('--cors-origin');
    expect((await run(process.execPath, [CLI, '--', 'serve', '--help'])).stdout).toContain('--cors-origin');
    // Eighteen CLI starts, each loading the whole server (seconds apiece on a busy 2-core machine,
    // over five when other test runs share it).
  }, 150_000);

  it('takes the per-user caps, the history budget and the limits of its own key as flags: one more project than --max-projects-per-user is a 429 naming it', async () => {
    const { url, output, child } = await serve(['--port', '0', '--data', dir, '--max-projects-per-user', '1', '--env-key-model', 'gpt-a', '--env-key-model', 'gpt-b', '--history-tokens', '0']);
    try {
      const key = /shown only once:\n(ap_\w+)\n/.exec(output())?.[1] as string;
      const create = () =>
        fetch(`${url}/api/projects/create`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'p', model: 'gpt-c', provider: 'openai' }),
        });
      expect((await create()).status).toBe(201);
      const over = await create();
      expect(over.status).toBe(429);
      expect(await over.json()).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('--max-projects-per-user'), details: { max: 1 } });
      // The allow-list of the server's own key: gpt-c is on neither entry.
      const refused = await fetch(`${url}/api/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-c', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(refused.status).toBe(400);
      expect((await refused.json()).message).toContain('allowed: gpt-a, gpt-b; --env-key-model');
    } finally {
      child.kill('SIGTERM');
    }
    await expect(run(process.execPath, [CLI, 'serve', '--max-chats-per-user', '0'])).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--max-chats-per-user (AGENT_PLATFORM_MAX_CHATS_PER_USER) must be an integer from 1 to 1000000000 (default 10000), got "0"'),
    });
    await expect(run(process.execPath, [CLI, 'serve'], { env: { ...process.env, AGENT_PLATFORM_HISTORY_TOKENS: 'lots' } })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--history-tokens (AGENT_PLATFORM_HISTORY_TOKENS) must be an integer'),
    });
  }, 60_000);

  it('allows the stdio MCP command lines of --mcp-commands exactly, and refuses node -e', async () => {
    const file = join(dir, 'mcp-commands');
    const line = formatCommandLine(process.execPath, [EVERYTHING, 'stdio']);
    await writeFile(file, `# allowed stdio MCP servers\n\n${line}\n`);
    const { child, output, url } = await serve(['--port', '0', '--data', dir, '--mcp-commands', file]);
    try {
      const key = /shown only once:\n(ap_\w+)\n/.exec(output())?.[1] as string;
      const call = async (path: string, body: unknown) => {
        const res = await fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as { message?: string; project?: { id: string } } };
      };
      const projectId = (await call('/api/projects/create', { name: 'p', model: 'm', provider: 'openai' })).body.project?.id;
      const add = (name: string, args: string[]) => call('/api/mcp/add-server', { projectId, name, transport: 'stdio', command: process.execPath, args });
      expect((await add('everything', [EVERYTHING, 'stdio'])).status).toBe(201);
      const inline = await add('inline', ['-e', 'process.exit(7)']);
      expect(inline.status).toBe(400);
      expect(inline.body.message).toContain(`(allowed: "${line}")`);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('refuses to start on the old comma-separated AGENT_PLATFORM_MCP_COMMANDS or a bad command entry, saying why', async () => {
    const start = (args: string[], env: NodeJS.ProcessEnv = {}) => run(process.execPath, [CLI, 'serve', '--port', '0', '--data', dir, ...args], { env: { ...process.env, ...env } });
    await expect(start([], { AGENT_PLATFORM_MCP_COMMANDS: 'npx,node' })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('AGENT_PLATFORM_MCP_COMMANDS must be a JSON array of allowed command lines, e.g. ["npx -y @modelcontextprotocol/server-everything"'),
    });
    await expect(start(['--allow-mcp-command', '{"command":"node","env":["NODE_OPTIONS"]}'])).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('env NODE_OPTIONS cannot be allowed'),
    });
    const file = join(dir, 'bad-commands');
    await writeFile(file, "npx -y pkg\nnode 'unterminated\n");
    await expect(start(['--mcp-commands', file])).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining(`--mcp-commands ${file} line 2: Invalid stdio MCP command entry`) });
  });

  it('documents every flag of serve and every AGENT_PLATFORM_* variable the server reads in the README', async () => {
    const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
    const help = (await run(process.execPath, [CLI, 'serve', '--help'])).stdout;
    const flags = [...new Set(help.match(/--[a-z][a-z-]+/g))];
    expect(flags.length).toBeGreaterThan(10);
    for (const flag of flags) expect(readme, flag).toContain(`\`${flag}`);
    const sources = await Promise.all(
      ['cli.ts', 'server.ts', 'secrets.ts', 'mcp-commands.ts', 'providers/index.ts', 'document-limits.ts', 'knowledge.ts', 'lease-flags.ts', 'user-limits.ts'].map((f) =>
        readFile(new URL(`../src/${f}`, import.meta.url), 'utf8'),
      ),
    );
    const variables = [...new Set(sources.join('\n').match(/AGENT_PLATFORM_[A-Z_]+/g))];
    expect(variables.length).toBeGreaterThan(8);
    for (const variable of variables) expect(readme, variable).toContain(variable);
  });
});
