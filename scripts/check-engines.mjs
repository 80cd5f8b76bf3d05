#!/usr/bin/env node
// Fails when an installed package declares a Node version (`engines.node`) that the Node the
// README promises does not satisfy: such a package makes `pnpm install` warn on that Node, and
// may not run there. Every installed package counts (direct or not, dev or not), since a fresh
// install installs and checks them all.
//
//   node scripts/check-engines.mjs [--root DIR] [--node VERSION]
//
// VERSION defaults to the lowest version the root package.json's `engines.node` allows (the
// README states the same, e.g. Node.js 20.19). Exits 1 listing each mismatch as
// `name@version requires node RANGE`.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { parseArgs } from 'node:util';
import semver from 'semver';

/** The entries of a node_modules folder as paths (`@scope/name` ones included), without `.bin` or `.pnpm`. */
function* entries(modules) {
  for (const item of readdirSync(modules, { withFileTypes: true })) {
    if (item.name.startsWith('.')) continue;
    if (item.name.startsWith('@')) {
      for (const scoped of readdirSync(join(modules, item.name))) yield join(modules, item.name, scoped);
    } else {
      yield join(modules, item.name);
    }
  }
}

/**
 * The folder of every package installed for the workspace at `root`: what the root and each
 * workspace package link to, and what those link to, and so on (pnpm puts a package's own
 * dependencies as links beside it in `.pnpm/<id>/node_modules`). Packages a former install
 * left in the store but nothing links to any more are not counted, as a fresh install has none.
 */
function installedPackages(root) {
  const seenModules = new Set();
  const packages = new Set();
  const pending = [join(root, 'node_modules')];
  while (pending.length > 0) {
    const modules = pending.pop();
    if (seenModules.has(modules) || !existsSync(modules)) continue;
    seenModules.add(modules);
    for (const link of entries(modules)) {
      let dir;
      try {
        dir = realpathSync(link);
      } catch {
        continue; // a dangling link: nothing installed there
      }
      if (packages.has(dir) || !existsSync(join(dir, 'package.json'))) continue;
      packages.add(dir);
      // In the store its dependencies sit beside it; a workspace package has its own node_modules.
      const store = dir.lastIndexOf(`${sep}node_modules${sep}`);
      pending.push(dir.includes(`${sep}.pnpm${sep}`) && store >= 0 ? dir.slice(0, store + `${sep}node_modules`.length) : join(dir, 'node_modules'));
    }
  }
  return packages;
}

/** The lowest Node version the root package.json's `engines.node` allows. */
export function promisedNode(root) {
  const range = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines?.node;
  const min = range && semver.minVersion(range);
  if (!min) throw new Error(`${join(root, 'package.json')} has no engines.node range`);
  return min.version;
}

/** `name@version requires node RANGE` for each installed package whose engines.node `node` does not satisfy. */
export function engineMismatches(root, node = promisedNode(root)) {
  const out = new Set();
  for (const dir of installedPackages(root)) {
    let manifest;
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const range = manifest.engines?.node;
    if (typeof range !== 'string' || range.trim() === '') continue;
    if (!semver.validRange(range) || !semver.satisfies(node, range, { includePrerelease: true })) {
      out.add(`${manifest.name}@${manifest.version} requires node ${range}`);
    }
  }
  return [...out].sort();
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const { values } = parseArgs({ options: { root: { type: 'string' }, node: { type: 'string' } } });
  const root = resolve(values.root ?? join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..'));
  const node = values.node ?? promisedNode(root);
  const mismatches = engineMismatches(root, node);
  if (mismatches.length > 0) {
    console.error(`Installed packages that do not declare support for Node ${node}:\n  ${mismatches.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`Every installed package supports Node ${node}.`);
}
