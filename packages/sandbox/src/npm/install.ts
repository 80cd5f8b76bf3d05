import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { accessSync, constants, existsSync } from 'node:fs';
import { lstat, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { delimiter, dirname, join, resolve } from 'node:path';
import { PlatformError } from '@agent-platform/core';
import { type NpmSpec, packageOf } from './specs.js';

export interface NpmInstallerOptions {
  /** Absolute. */
  readonly cacheDir: string;
  /** With a trailing slash. */
  readonly registry: string;
  readonly npmCommand?: string | undefined;
  readonly installTimeoutMs: number;
}

/** An installed set of packages larger than this on disk is refused. */
const MAX_INSTALL_BYTES = 256 * 1024 * 1024;
/** What is kept of npm's output (its JSON error report is small). */
const MAX_OUTPUT = 1024 * 1024;

/**
 * Installs sets of npm specs with the real npm CLI into `<cacheDir>/npm/<sha256>/` (the hash of
 * the registry and the sorted specs): npm installs into a fresh folder under `<cacheDir>/tmp/`,
 * the result is checked (registry packages only, no native addon, no symbolic link), then
 * renamed into place, so a crash never leaves a half-installed set. Concurrent installs of one
 * set share one npm process; an installed set is never installed again.
 */
export function createNpmInstaller(o: NpmInstallerOptions) {
  const inflight = new Map<string, Promise<string>>();
  let npm: { command: string; args: string[] } | undefined;
  let swept: Promise<void> | undefined;

  const installOnce = async (key: string, specs: readonly NpmSpec[]): Promise<string> => {
    const final = join(o.cacheDir, 'npm', key);
    if (await exists(final)) return final;
    swept ??= sweep(join(o.cacheDir, 'tmp'));
    await swept;
    const tmp = join(o.cacheDir, 'tmp', `${key.slice(0, 16)}-${randomUUID()}`);
    await mkdir(tmp, { recursive: true });
    await mkdir(join(o.cacheDir, 'home'), { recursive: true });
    try {
      npm ??= findNpm(o.npmCommand);
      await runNpm(npm, tmp, specs, o);
      await checkInstalled(tmp);
      await mkdir(dirname(final), { recursive: true });
      try {
        await rename(tmp, final);
      } catch (error) {
        // Another process installed the same set meanwhile: keep theirs.
        if (!(await exists(final))) throw error;
      }
      return final;
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  };

  return {
    /** The folder holding `node_modules` of the set (installing it first if needed). */
    install(specs: readonly NpmSpec[]): Promise<string> {
      const key = createHash('sha256')
        .update(`${o.registry}\n${specs.map((s) => s.spec).join('\n')}`)
        .digest('hex');
      let pending = inflight.get(key);
      if (!pending) {
        pending = installOnce(key, specs).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending;
    },
  };
}

/** Removes what installs that crashed (or npm's own temporary files) left there over an hour ago. */
async function sweep(tmpRoot: string): Promise<void> {
  const names = await readdir(tmpRoot).catch(() => [] as string[]);
  const old = Date.now() - 3_600_000;
  for (const name of names) {
    const path = join(tmpRoot, name);
    const info = await lstat(path).catch(() => undefined);
    if (info && info.mtimeMs < old) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

/** `npmCommand`, else `npm` on PATH, else the npm that ships with this Node. */
function findNpm(npmCommand: string | undefined): { command: string; args: string[] } {
  const viaNode = (cli: string) => ({ command: process.execPath, args: [cli] });
  if (npmCommand) return /\.[cm]?js$/.test(npmCommand) ? viaNode(npmCommand) : { command: npmCommand, args: [] };
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, 'npm'), constants.X_OK);
      return { command: join(dir, 'npm'), args: [] };
    } catch {}
  }
  const bundled = resolve(dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js');
  return existsSync(bundled) ? viaNode(bundled) : { command: 'npm', args: [] };
}

function runNpm(npm: { command: string; args: string[] }, prefix: string, specs: readonly NpmSpec[], o: NpmInstallerOptions): Promise<void> {
  const home = join(o.cacheDir, 'home');
  const args = [
    ...npm.args,
    'install',
    // Install scripts are code of whoever published the package: they never run here.
    '--ignore-scripts',
    // Only registry packages: a dependency on git, a URL, a file or a folder is refused by npm
    // before it is fetched (npm versions with these settings; with older ones the lockfile
    // check below refuses the install afterwards).
    '--allow-git=none',
    '--allow-remote=none',
    '--allow-file=none',
    '--allow-directory=none',
    '--omit=dev',
    // Optional dependencies are mostly platform-specific native builds.
    '--omit=optional',
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
    '--no-bin-links',
    '--json',
    '--color=false',
    '--loglevel=error',
    '--fetch-retries=2',
    '--fetch-retry-mintimeout=500',
    '--fetch-retry-maxtimeout=2000',
    `--registry=${o.registry}`,
    `--cache=${join(o.cacheDir, 'npm-cache')}`,
    // Neither the server user's npmrc (tokens) nor the machine's is read.
    `--userconfig=${join(home, '.npmrc')}`,
    `--globalconfig=${join(home, 'global-npmrc')}`,
    `--prefix=${prefix}`,
    '--',
    ...specs.map((s) => s.spec),
  ];
  // A minimal environment: no server secrets, no npm_config_* of the server's shell.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: join(o.cacheDir, 'tmp') };
  // The operator's CA bundle and proxy (the registry may only be reachable through it).
  for (const name of ['NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  return new Promise((done, fail) => {
    const child = spawn(npm.command, args, { cwd: prefix, env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, o.installTimeoutMs);
    const list = specs.map((s) => s.spec).join(', ');
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      fail(new PlatformError('unavailable', `dependencies: npm could not be started (${error.code ?? error.message}); set the sandbox's npmCommand`, { cause: error }));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) fail(new PlatformError('unavailable', `dependencies: installing ${list} took longer than ${Math.round(o.installTimeoutMs / 1000)} s`, { retryable: true }));
      else if (code === 0) done();
      else fail(npmFailure(stdout, stderr, list, o.registry));
    });
  });
}

const NETWORK =
  /^(?:E(?:CONN\w+|AI_\w+|NOTFOUND|HOSTUNREACH|NETUNREACH|NETDOWN|TIMEDOUT|SOCKETTIMEDOUT|PIPE|PROTO)|ERR_SOCKET_TIMEOUT|E5\d\d|UNABLE_TO_\w+|CERT_\w+|SELF_SIGNED_\w+|DEPTH_ZERO_\w+|EINTEGRITY)$/;

/** npm's failure (its `--json` error report, else the `npm error` lines) as a clear error. */
function npmFailure(stdout: string, stderr: string, list: string, registry: string): PlatformError {
  let report: { code?: string; summary?: string; detail?: string } = {};
  try {
    report = (JSON.parse(stdout.slice(stdout.indexOf('{'))) as { error?: typeof report }).error ?? {};
  } catch {
    report = { code: /npm error code (\S+)/.exec(stderr)?.[1], summary: /npm error (?!code )(.+)/.exec(stderr)?.[1] };
  }
  const code = report.code ?? 'unknown';
  const summary = (report.summary ?? '').split('\n')[0]?.trim() || 'npm failed';
  if (code === 'E404') {
    const name = /'(.+)@[^@']*' could not be found/.exec(report.detail ?? '')?.[1] ?? /GET \S+\/([^/\s]+) /.exec(summary)?.[1] ?? list;
    return PlatformError.invalid(`dependencies: ${decodeURIComponent(name)}: not found in the npm registry (E404)`);
  }
  if (code === 'ETARGET') return PlatformError.invalid(`dependencies: ${summary.replace(/\.$/, '')} (ETARGET)`);
  if (/^EALLOW/.test(code)) {
    const what = /Refusing to fetch "(.+)"/.exec(report.detail ?? '')?.[1];
    return PlatformError.invalid(`dependencies: ${what ? `${what}: ` : ''}only packages from the npm registry can be installed, not from git, URLs, files or folders (${code})`);
  }
  if (NETWORK.test(code)) {
    return new PlatformError('unavailable', `dependencies: the npm registry ${registry} could not be reached to install ${list} (${code})`, { retryable: true });
  }
  return PlatformError.invalid(`dependencies: npm could not install ${list}: ${summary} (${code})`);
}

/**
 * Refuses what npm installed when a package is not plain JavaScript from the registry: a native
 * addon (`gypfile`, `binding.gyp`, `.node` files), a link to a local folder, a package resolved
 * from anything but http(s), a symbolic link, or more than {@link MAX_INSTALL_BYTES} in all.
 */
async function checkInstalled(prefix: string): Promise<void> {
  const lock = JSON.parse(await readFile(join(prefix, 'package-lock.json'), 'utf8').catch(() => '{}')) as {
    packages?: Record<string, { link?: boolean; resolved?: string }>;
  };
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!path) continue;
    const name = ownerOf(path);
    if (entry.link || (entry.resolved !== undefined && !/^https?:\/\//.test(entry.resolved))) {
      throw PlatformError.invalid(`dependencies: ${name} does not come from the npm registry (${entry.resolved ?? 'a local folder'})`);
    }
  }
  let bytes = 0;
  const walk = async (dir: string, relative: string): Promise<void> => {
    for (const item of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, item.name);
      const rel = relative ? `${relative}/${item.name}` : item.name;
      const owner = ownerOf(rel);
      if (item.isSymbolicLink()) throw PlatformError.invalid(`dependencies: ${owner} contains a symbolic link (${rel}), which the sandbox does not install`);
      if (item.isDirectory()) {
        await walk(path, rel);
        continue;
      }
      bytes += (await lstat(path)).size;
      if (item.name.endsWith('.node') || item.name === 'binding.gyp' || (item.name === 'package.json' && isPackageRoot(relative) && (await gyp(path)))) {
        throw PlatformError.invalid(`dependencies: ${owner} is not pure JavaScript (it has a native addon)`);
      }
    }
  };
  await walk(join(prefix, 'node_modules'), 'node_modules');
  if (bytes > MAX_INSTALL_BYTES)
    throw PlatformError.invalid(`dependencies: the packages take ${Math.round(bytes / 1024 / 1024)} MB installed, more than the ${MAX_INSTALL_BYTES / 1024 / 1024} MB allowed`);
}

/** The package a path inside node_modules belongs to. */
function ownerOf(path: string): string {
  const at = path.lastIndexOf('node_modules/');
  return at < 0 ? path : packageOf(path.slice(at + 'node_modules/'.length));
}

function isPackageRoot(relative: string): boolean {
  return /(?:^|\/)node_modules\/(?:@[^/]+\/)?[^/@]+$/.test(relative);
}

async function gyp(packageJson: string): Promise<boolean> {
  try {
    return (JSON.parse(await readFile(packageJson, 'utf8')) as { gypfile?: unknown }).gypfile === true;
  } catch {
    return false;
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
