// Peers of `pnpm bench` (bench/peers/<name>/): each is its own npm package with pinned versions
// and a lockfile, outside the pnpm workspace (pnpm-workspace.yaml lists packages/* and
// examples), so neither `pnpm install` nor the product ever installs it. The bench entry that
// needs one installs it here on first use.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));

/** The peer's server script (bench/peers/<name>/server.mjs). */
export const peerScript = (name) => join(here, name, 'server.mjs');

/**
 * Installs bench/peers/<name> with npm (`npm install --prefix ... --no-audit --no-fund`, from its
 * lockfile) when its node_modules lacks any of its dependencies, saying so on stdout; throws
 * when npm fails. Answers whether it installed now.
 */
export function ensurePeer(name) {
  const dir = join(here, name);
  const { dependencies } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const missing = Object.keys(dependencies).filter((dep) => !existsSync(join(dir, 'node_modules', dep, 'package.json')));
  if (missing.length === 0) return { installed: false };
  console.log(`  installing the ${name} peer into bench/peers/${name}/node_modules (npm, once; missing: ${missing.join(', ')})`);
  const started = performance.now();
  const npm = spawnSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (npm.status !== 0) throw new Error(`npm install of the ${name} peer failed (exit ${npm.status ?? npm.signal}); see the output above`);
  console.log(`  installed the ${name} peer in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { installed: true };
}

/** The installed version of each direct dependency of the peer. */
export function peerVersions(name) {
  const dir = join(here, name);
  const { dependencies } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  return Object.fromEntries(Object.keys(dependencies).map((dep) => [dep, JSON.parse(readFileSync(join(dir, 'node_modules', dep, 'package.json'), 'utf8')).version]));
}
