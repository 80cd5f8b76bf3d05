#!/usr/bin/env node
// Builds the workspace's packages whose build is missing or older than their sources, and
// nothing else: `pnpm start` and `pnpm agent-platform` run this first, so the first start after
// an install (or after a change) builds, and every later start runs the built files at once
// instead of rebuilding everything (a full build takes one to two minutes on 2 cores).
//
//   node scripts/build-if-stale.mjs [--root DIR] [--check]
//
// A package (a folder of packages/ whose package.json has a `build` script) is stale when its
// dist/ is missing or empty, or when any of its inputs was modified after the oldest file of
// dist/ (tsup and vite clean dist/ and write it anew, so the oldest file marks when the last build
// began): every file under src/ (the console keeps its index.html there too), its package.json,
// its tsup or vite config, and the shared
// tsup.base.ts and tsconfig.base.json. The stale packages are built with
// `pnpm -r --filter ... run build` (dependencies first). A package's dist imports the other
// packages' dist rather than copying them, so a package that did not change is not rebuilt.
// `--check` only lists the stale packages (exit 1 when there is one). Messages go to stderr, so
// a command's stdout (e.g. `keys create`, whose last line is the key) stays its own.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const SHARED_INPUTS = ['tsup.base.ts', 'tsconfig.base.json'];

/** Newest and oldest modification times (ms) of the files under `dir`, recursively. */
function mtimes(dir) {
  let newest = Number.NEGATIVE_INFINITY;
  let oldest = Number.POSITIVE_INFINITY;
  let files = 0;
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop();
    for (const item of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, item.name);
      if (item.isDirectory()) pending.push(path);
      else if (item.isFile()) {
        const { mtimeMs } = statSync(path);
        newest = Math.max(newest, mtimeMs);
        oldest = Math.min(oldest, mtimeMs);
        files++;
      }
    }
  }
  return { newest, oldest, files };
}

const fileMtime = (path) => (existsSync(path) ? statSync(path).mtimeMs : Number.NEGATIVE_INFINITY);

/** The packages/ folders (relative to `root`, e.g. `packages/core`) with a build script. */
export function buildablePackages(root) {
  const dir = join(root, 'packages');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((item) => item.isDirectory() && existsSync(join(dir, item.name, 'package.json')))
    .filter((item) => typeof JSON.parse(readFileSync(join(dir, item.name, 'package.json'), 'utf8')).scripts?.build === 'string')
    .map((item) => `packages/${item.name}`)
    .sort();
}

/** The buildable packages whose dist/ is missing, empty or older than one of their inputs. */
export function stalePackages(root) {
  const shared = Math.max(...SHARED_INPUTS.map((name) => fileMtime(join(root, name))));
  return buildablePackages(root).filter((pkg) => {
    const dir = join(root, pkg);
    const dist = join(dir, 'dist');
    if (!existsSync(dist)) return true;
    const built = mtimes(dist);
    if (built.files === 0) return true;
    const configs = readdirSync(dir).filter((name) => /^(tsup|vite)\.config\.[cm]?[jt]s$/.test(name));
    const inputs = Math.max(
      shared,
      fileMtime(join(dir, 'package.json')),
      ...configs.map((name) => fileMtime(join(dir, name))),
      existsSync(join(dir, 'src')) ? mtimes(join(dir, 'src')).newest : Number.NEGATIVE_INFINITY,
    );
    return inputs > built.oldest;
  });
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const { values } = parseArgs({ options: { root: { type: 'string' }, check: { type: 'boolean' } } });
  const root = resolve(values.root ?? join(new URL('.', import.meta.url).pathname, '..'));
  const stale = stalePackages(root);
  if (values.check) {
    for (const pkg of stale) console.error(`stale: ${pkg}`);
    process.exit(stale.length > 0 ? 1 : 0);
  }
  if (stale.length > 0) {
    console.error(`Building ${stale.join(', ')} (no build yet, or sources newer than the build)...`);
    const filters = stale.flatMap((pkg) => ['--filter', `./${relative(root, join(root, pkg))}`]);
    // The pnpm this runs under (`pnpm start`): a JavaScript file or, for pnpm 12, a binary.
    const execpath = process.env.npm_execpath;
    const pnpm = execpath && /pnpm/.test(execpath) ? (/\.[cm]?js$/.test(execpath) ? [process.execPath, execpath] : [execpath]) : ['pnpm'];
    const [command, ...prefix] = pnpm;
    const result = spawnSync(command, [...prefix, '-r', ...filters, 'run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
    if (result.error) throw result.error;
    process.exit(result.status ?? 1);
  }
}
