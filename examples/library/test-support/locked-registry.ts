// An npm registry on 127.0.0.1 that offers exactly the packages of the workspace's lockfile, so
// that a project outside the workspace installs, with no network, the versions the workspace
// installed: pnpm resolves against it (its wire format: `GET /<name>` answers the packument) and
// finds every resolved version's files in its content-addressable store by integrity, where the
// workspace's own install put them (and the builds of native addons, in its side-effects cache).
// So no tarball is ever fetched: a request for one answers 404 and is recorded.
//
// Why not `pnpm install --offline`: without a lockfile it resolves ranges from pnpm's metadata
// cache, which holds whatever the registry listed when it was filled (newer versions than the
// lockfile's, not in the store), or nothing at all on a machine that installed from the lockfile.
import { lstat, readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface LockedRegistry {
  /** With a trailing slash, as `--registry` takes it. */
  readonly url: string;
  /** Packages served. */
  readonly packages: number;
  /** Requests for tarballs (none when the store had everything). */
  readonly tarballRequests: string[];
  close(): Promise<void>;
}

interface LockedVersion {
  readonly name: string;
  readonly version: string;
  readonly integrity: string;
  /** The lockfile's `os`, `cpu`, `libc`, `engines` of the version, for packages not installed here (other platforms' binaries). */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** Whether version `a` is above `b` (semver precedence; build metadata ignored). */
export function versionAbove(a: string, b: string): boolean {
  const parse = (v: string) => {
    const [core = '', pre] = v.split('+')[0]?.split(/-(.*)/s) ?? [];
    return { numbers: core.split('.').map(Number), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if ((x.numbers[i] ?? 0) !== (y.numbers[i] ?? 0)) return (x.numbers[i] ?? 0) > (y.numbers[i] ?? 0);
  if (x.pre === undefined || y.pre === undefined) return x.pre === undefined && y.pre !== undefined;
  return x.pre.localeCompare(y.pre, 'en', { numeric: true }) > 0;
}

/** `{node: '>=18'}` or `[x64, arm64]`, as the lockfile writes them. */
function flowValue(text: string): unknown {
  const unquote = (s: string) => s.trim().replace(/^'(.*)'$/, '$1');
  if (text.startsWith('[')) return text.slice(1, -1).split(',').map(unquote);
  if (text.startsWith('{')) {
    return Object.fromEntries(
      text
        .slice(1, -1)
        .split(/,\s*(?=[\w@'-]+:)/)
        .map((pair) => {
          const at = pair.indexOf(':');
          return [unquote(pair.slice(0, at)), unquote(pair.slice(at + 1))];
        }),
    );
  }
  return unquote(text);
}

/** The `packages:` section of pnpm-lock.yaml (lockfile v9): every resolved version with its integrity. */
export function lockedVersions(lockfile: string): LockedVersion[] {
  const start = lockfile.indexOf('\npackages:\n');
  const end = lockfile.indexOf('\nsnapshots:\n');
  if (start < 0 || end < start) throw new Error('pnpm-lock.yaml has no packages: section (lockfile v9 expected)');
  const versions: LockedVersion[] = [];
  let current: { key: string; fields: Record<string, string> } | undefined;
  const flush = () => {
    if (!current) return;
    const integrity = /integrity: ([^,}\s]+)/.exec(current.fields.resolution ?? '')?.[1];
    const at = current.key.lastIndexOf('@');
    // Entries without an integrity (a local directory or tarball) are not served.
    if (integrity && at > 0) {
      const fields = Object.fromEntries(['os', 'cpu', 'libc', 'engines'].flatMap((k) => (current?.fields[k] ? [[k, flowValue(current.fields[k] as string)]] : [])));
      versions.push({ name: current.key.slice(0, at), version: current.key.slice(at + 1), integrity, fields });
    }
  };
  for (const line of lockfile.slice(start, end).split('\n')) {
    const head = /^ {2}'?([^' ]+?)'?:$/.exec(line);
    if (head) {
      flush();
      current = { key: head[1] as string, fields: {} };
      continue;
    }
    const field = /^ {4}(\w+): (.*)$/.exec(line);
    if (field && current) current.fields[field[1] as string] = field[2] as string;
  }
  flush();
  return versions;
}

/** The manifests (package.json) of the packages installed in the workspace's virtual store, by `name@version`. */
async function installedManifests(virtualStore: string): Promise<Map<string, Record<string, unknown>>> {
  const manifests = new Map<string, Record<string, unknown>>();
  for (const entry of await readdir(virtualStore)) {
    const modules = join(virtualStore, entry, 'node_modules');
    const names = await readdir(modules).catch(() => [] as string[]);
    for (const name of names) {
      const dirs = name.startsWith('@') ? (await readdir(join(modules, name))).map((sub) => join(modules, name, sub)) : [join(modules, name)];
      for (const dir of dirs) {
        // The package itself is a folder; its dependencies beside it are links.
        if ((await lstat(dir)).isSymbolicLink()) continue;
        const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8').catch(() => '{}')) as Record<string, unknown>;
        if (typeof manifest.name === 'string' && typeof manifest.version === 'string') manifests.set(`${manifest.name}@${manifest.version}`, manifest);
      }
    }
  }
  return manifests;
}

/**
 * Starts the registry for the workspace at `root` (its pnpm-lock.yaml and node_modules/.pnpm).
 * Each version's packument entry is its installed package.json (its dependencies, peers, bin,
 * engines, ...) with the lockfile's integrity; a locked version not installed here (another
 * platform's binary) gets the lockfile's os/cpu/libc/engines, enough for pnpm to skip it.
 */
export async function startLockedRegistry(root: string): Promise<LockedRegistry> {
  const locked = lockedVersions(await readFile(join(root, 'pnpm-lock.yaml'), 'utf8'));
  const manifests = await installedManifests(join(root, 'node_modules', '.pnpm'));
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const packuments = new Map<string, { name: string; 'dist-tags': { latest: string }; versions: Record<string, unknown> }>();
  for (const { name, version, integrity, fields } of locked) {
    const packument = packuments.get(name) ?? { name, 'dist-tags': { latest: version }, versions: {} };
    const manifest = manifests.get(`${name}@${version}`) ?? { name, version, ...fields };
    packument.versions[version] = { ...manifest, _id: `${name}@${version}`, dist: { integrity, tarball: `${url}${name}/-/${name.split('/').pop()}-${version}.tgz` } };
    if (versionAbove(version, packument['dist-tags'].latest)) packument['dist-tags'].latest = version;
    packuments.set(name, packument);
  }
  const bodies = new Map([...packuments].map(([name, packument]) => [name, JSON.stringify(packument)]));

  const tarballRequests: string[] = [];
  server.on('request', (req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', url).pathname).slice(1);
    const body = bodies.get(path);
    if (req.method === 'GET' && body !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      return;
    }
    if (path.endsWith('.tgz')) tarballRequests.push(path);
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Not found"}');
  });

  return {
    url,
    packages: packuments.size,
    tarballRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
