import { execFile, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A test run folder's record of its cluster (a `PostgresCluster`, or `{ error }` when it could not start). */
export const CLUSTER_FILE = 'cluster.json';

/** A private PostgreSQL server started for a test run (see `startPostgresCluster`). */
export interface PostgresCluster {
  /** The folder holding the data folder, the socket and the server's log. */
  readonly dir: string;
  /** TCP port on 127.0.0.1. */
  readonly port: number;
  /** Process id of the postmaster, as this process sees it. */
  readonly pid: number;
}

/**
 * The folder of the server binaries: the newest version under `roots` (Debian puts each major
 * version in /usr/lib/postgresql/VERSION/bin), else the folder on `path` holding `initdb`.
 * Throws, naming the package to install, when there is none.
 */
export function findServerBinaries(roots: readonly string[] = ['/usr/lib/postgresql'], path = process.env.PATH ?? ''): string {
  for (const root of roots) {
    const versions = existsSync(root)
      ? readdirSync(root)
          .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
          .sort((a, b) => Number(b) - Number(a))
      : [];
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  for (const dir of path.split(':')) if (dir && existsSync(join(dir, 'initdb'))) return dir;
  throw new Error(
    `PostgreSQL is not installed: no ${roots.map((r) => `${r}/*/bin/initdb`).join(', ')} and no initdb on PATH. ` +
      'The PostgreSQL tests start a private server from these binaries: install them (Debian: apt-get install -y postgresql; .ci/run does it).',
  );
}

/**
 * How to run a server binary. The server refuses to run as root. As root in the machine's own
 * user namespace, `runuser -u postgres` switches user. Inside `scripts/isolated.sh` the tests are
 * root of a user namespace that maps root alone, where no other user exists to switch to: a
 * nested user namespace then maps the `postgres` uid onto ours, so the server sees itself (and
 * the files it creates) as `postgres` while the kernel keeps our own uid.
 */
async function asServerUser(): Promise<{ wrap: (argv: string[]) => string[]; chownTo?: { uid: number; gid: number } }> {
  if (process.getuid?.() !== 0) return { wrap: (argv) => argv };
  const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
    throw new Error('Running as root, the PostgreSQL tests need the `postgres` user (the Debian `postgresql` package creates it).');
  });
  const uid = Number(stdout.trim());
  const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
  const fullMap = /^\s*0\s+0\s+4294967295\s*$/.test(readFileSync('/proc/self/uid_map', 'utf8'));
  if (fullMap) return { wrap: (argv) => ['runuser', '-u', 'postgres', '--', ...argv], chownTo: { uid, gid } };
  return { wrap: (argv) => ['unshare', '--user', `--map-user=${uid}`, `--map-group=${gid}`, '--', ...argv] };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function spawnCommand(argv: string[], options: SpawnOptions) {
  const [command, ...args] = argv as [string, ...string[]];
  return spawn(command, args, options);
}

/**
 * Starts a private PostgreSQL server: `initdb` in a new folder (mode 0755, owned by the server's
 * user), the server on 127.0.0.1 at a free port with its socket in that folder, durability off
 * (fsync, full-page writes: a test cluster dies with its data). `settings` are more `-c
 * name=value` server settings (e.g. `shared_preload_libraries=pg_stat_statements` for a
 * benchmark); they come last, so they override these. Resolves once it accepts connections;
 * `stopPostgresCluster` stops it and removes the folder.
 */
export async function startPostgresCluster(options: { parent?: string; settings?: readonly string[] } = {}): Promise<PostgresCluster> {
  const bin = findServerBinaries();
  const user = await asServerUser();
  const dir = await mkdtemp(join(options.parent ?? tmpdir(), 'ap-pg-'));
  await chmod(dir, 0o755);
  if (user.chownTo) await chown(dir, user.chownTo.uid, user.chownTo.gid);
  const data = join(dir, 'data');
  try {
    const [command, ...args] = user.wrap([join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await run(command as string, args, { cwd: dir });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(error as { stderr?: string }).stderr ?? error}`);
  }
  const port = await freePort();
  const log = openSync(join(dir, 'postgres.log'), 'a');
  const settings = ['listen_addresses=127.0.0.1', 'fsync=off', 'full_page_writes=off', 'synchronous_commit=off', 'max_connections=300', ...(options.settings ?? [])];
  const server = spawnCommand(user.wrap([join(bin, 'postgres'), '-D', data, '-p', String(port), '-k', dir, ...settings.flatMap((s) => ['-c', s])]), {
    cwd: dir,
    detached: true,
    stdio: ['ignore', log, log],
  });
  server.unref();
  let exited: number | null | undefined;
  server.once('exit', (code) => {
    exited = code;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await run(join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)]).then(
      () => true,
      () => false,
    );
    if (ready) break;
    if (exited !== undefined || Date.now() > deadline) {
      if (exited === undefined) server.kill('SIGKILL');
      const tail = (await readFile(join(dir, 'postgres.log'), 'utf8').catch(() => '')).slice(-2000);
      await rm(dir, { recursive: true, force: true });
      throw new Error(`PostgreSQL did not start on 127.0.0.1:${port}: ${tail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The postmaster's own pid (runuser keeps a parent process), from the file the server wrote.
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  return { dir, port, pid };
}

/** Whether a process with this pid exists (signal 0). */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops the server (fast shutdown, SIGKILL after 10 s) and removes its folder. */
export async function stopPostgresCluster(cluster: PostgresCluster): Promise<void> {
  if (processAlive(cluster.pid)) {
    process.kill(cluster.pid, 'SIGINT');
    const deadline = Date.now() + 10_000;
    while (processAlive(cluster.pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (processAlive(cluster.pid)) process.kill(cluster.pid, 'SIGKILL');
  }
  await rm(cluster.dir, { recursive: true, force: true });
}

/** Creates an empty database on the cluster; answers its connection string. */
export async function createPostgresDatabase(cluster: PostgresCluster, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Not a plain database name: ${name}`);
  await run(join(findServerBinaries(), 'createdb'), ['-h', '127.0.0.1', '-p', String(cluster.port), '-U', 'postgres', name]);
  return `postgres://postgres@127.0.0.1:${cluster.port}/${name}`;
}
