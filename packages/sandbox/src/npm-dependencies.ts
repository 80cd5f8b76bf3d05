import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PlatformError } from '@agent-platform/core';
import { withRelativePaths } from '@agent-platform/core/internal';
import { version as esbuildVersion } from 'esbuild';
import { bundleTool } from './npm/bundle.js';
import { createNpmInstaller } from './npm/install.js';
import { parseNpmSpecs } from './npm/specs.js';

export interface NpmDependenciesOptions {
  /**
   * Folder of everything this writes (created if missing; nothing is written outside it):
   *
   * ```
   * <cacheDir>/npm/<sha256>/        one installed set of specs: package.json, package-lock.json,
   *                                 node_modules/ (sha256 of the registry and the sorted specs)
   * <cacheDir>/bundles/<sha256>.js  one bundled tool (sha256 of the code, the sorted specs and
   *                                 the bundler's version)
   * <cacheDir>/npm-cache/           npm's own cache (packuments, tarballs, _logs)
   * <cacheDir>/tmp/                 installs in progress (renamed into npm/ when complete), npm's TMPDIR
   * <cacheDir>/home/                npm's HOME (empty: no user npmrc is read)
   * ```
   */
  readonly cacheDir: string;
  /** The npm registry packages come from. Default: the server's `npm_config_registry`, else `https://registry.npmjs.org/`. */
  readonly registry?: string;
  /** The npm CLI: a command, or a path to `npm-cli.js` (run with this Node). Default: `npm` on PATH, else the npm shipped with this Node. */
  readonly npmCommand?: string;
  /** How long one `npm install` may take, in ms; it is killed then. Default 120 000. */
  readonly installTimeoutMs?: number;
  /** Characters (about bytes) of bundles kept in memory; the least recently used go first. Default 32 Mi. */
  readonly memoryCacheBytes?: number;
  /**
   * How errors name `cacheDir` (they reach API callers when a tool is saved): default the
   * folder's name; the server passes `tools/npm`. Never the absolute path.
   */
  readonly label?: string;
}

/** npm dependencies of JavaScript tools: installed once per set, bundled with the tool's code. */
export interface NpmDependencies {
  /** The registry in use, with a trailing slash. */
  readonly registry: string;
  /**
   * Checks the specs (`name` or `name@range`, the range a semver range or a dist-tag), installs
   * them (once per set, install scripts never run), bundles them with the code and caches the
   * result. Resolves to the bundled script (the code itself when there are no dependencies).
   * Rejects with a `PlatformError`: `invalid_request` naming the dependency (or code line) at
   * fault and why, `unavailable` when the registry cannot be reached, `aborted` on `signal`
   * (the install goes on for whoever else waits for it).
   */
  prepare(code: string, dependencies: readonly string[], signal?: AbortSignal): Promise<string>;
  /** The same script, from memory, else from `<cacheDir>/bundles`, else built as `prepare` does. */
  bundle(code: string, dependencies: readonly string[]): Promise<string>;
}

/** Part of every bundle's cache key: a change of the bundler or of how bundles are made changes it. */
const FORMAT = `1 esbuild ${esbuildVersion}`;

/**
 * npm dependencies for `javascriptSandbox({ dependencies })`: pure-JavaScript packages from the
 * registry, installed with the real npm CLI (`--ignore-scripts`) into a per-set cache and
 * bundled with esbuild into one script the QuickJS sandbox evaluates.
 *
 * @example
 * const sandbox = javascriptSandbox({ dependencies: npmDependencies({ cacheDir: './data/tools/npm' }) });
 * await sandbox.prepare?.({ code: 'import { camelCase } from "lodash-es"; function main(a) { return camelCase(a.s); }', dependencies: ['lodash-es@^4'] });
 */
export function npmDependencies(options: NpmDependenciesOptions): NpmDependencies {
  const cacheDir = resolve(options.cacheDir);
  const registry = registryUrl(options.registry ?? process.env.npm_config_registry ?? 'https://registry.npmjs.org/');
  const installer = createNpmInstaller({ cacheDir, registry, npmCommand: options.npmCommand, installTimeoutMs: options.installTimeoutMs ?? 120_000 });
  const memory = lru(options.memoryCacheBytes ?? 32 * 1024 * 1024);
  const building = new Map<string, Promise<string>>();

  const load = (code: string, dependencies: readonly string[]): Promise<string> => {
    const specs = parseNpmSpecs(dependencies);
    if (specs.length === 0) return Promise.resolve(code);
    const key = createHash('sha256')
      .update(JSON.stringify([FORMAT, registry, code, specs.map((s) => s.spec)]))
      .digest('hex');
    const cached = memory.get(key);
    if (cached !== undefined) return Promise.resolve(cached);
    let pending = building.get(key);
    if (!pending) {
      const file = join(cacheDir, 'bundles', `${key}.js`);
      pending = (async () => {
        let script = await readFile(file, 'utf8').catch(() => undefined);
        if (script === undefined) {
          script = await bundleTool(code, await installer.install(specs), specs);
          await mkdir(join(cacheDir, 'bundles'), { recursive: true });
          const tmp = `${file}.${randomUUID()}.tmp`;
          await writeFile(tmp, script);
          await rename(tmp, file).catch(async (error) => {
            await rm(tmp, { force: true });
            throw error;
          });
        }
        memory.set(key, script);
        return script;
      })()
        .catch((error: unknown) => {
          // File system, npm and esbuild errors name files in the cache by their absolute path.
          throw withRelativePaths(error, cacheDir, options.label);
        })
        .finally(() => building.delete(key));
      building.set(key, pending);
    }
    return pending;
  };

  return {
    registry,
    async prepare(code, dependencies, signal) {
      if (signal?.aborted) throw aborted();
      const script = load(code, dependencies);
      if (!signal) return script;
      let onAbort = () => {};
      const stop = new Promise<never>((_, fail) => {
        onAbort = () => fail(aborted());
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        return await Promise.race([script, stop]);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    },
    async bundle(code, dependencies) {
      return load(code, dependencies);
    },
  };
}

function registryUrl(value: string): string {
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError(`npmDependencies: the registry must be an http(s) URL, not ${value}`);
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

function aborted(): PlatformError {
  return new PlatformError('aborted', 'dependencies: preparing the tool was aborted');
}

/** A least-recently-used map of scripts, bounded by their total length. */
function lru(maxBytes: number) {
  const entries = new Map<string, string>();
  let bytes = 0;
  return {
    get(key: string): string | undefined {
      const value = entries.get(key);
      if (value !== undefined) {
        entries.delete(key);
        entries.set(key, value);
      }
      return value;
    },
    set(key: string, value: string): void {
      if (value.length > maxBytes) return;
      const old = entries.get(key);
      if (old !== undefined) bytes -= old.length;
      entries.delete(key);
      entries.set(key, value);
      bytes += value.length;
      for (const [oldest, script] of entries) {
        if (bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= script.length;
      }
    },
  };
}
