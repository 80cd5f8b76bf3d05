import { PlatformError } from '@agent-platform/core';
import semver from 'semver';

/** One checked dependency spec: a registry package and what to install of it. */
export interface NpmSpec {
  /** The package name, e.g. `lodash` or `@scope/name`. */
  readonly name: string;
  /** A semver range or a dist-tag; `latest` when the spec had none. */
  readonly range: string;
  /** `name@range`, the argument npm gets. */
  readonly spec: string;
}

// npm's rules for package names (validate-npm-package-name), restricted to characters that are
// safe in a URL path and on a command line: no leading `.`, `_`, `-` or `~`, at most 214
// characters. Upper case is allowed because old packages have it (JSONStream).
const NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/i;
const DIST_TAG = /^[a-z][a-z0-9._-]*$/;
// npm-package-arg reads a name or spec ending like this as a tarball file, whatever precedes it.
const TARBALL = /\.(?:tgz|tar|tar\.gz)$/i;

/**
 * Checks dependency specs (`name` or `name@range`, the range a semver range or a dist-tag) and
 * returns them sorted by name, duplicates removed. Anything else (URLs, git, `github:`, `file:`,
 * `link:`, `npm:` aliases, paths, tarballs) is refused with `invalid_request` before anything
 * runs, so npm never contacts a host but the registry and never reads a local file.
 */
export function parseNpmSpecs(dependencies: readonly string[]): NpmSpec[] {
  const byName = new Map<string, NpmSpec>();
  for (const raw of dependencies) {
    const spec = parseOne(raw);
    const earlier = byName.get(spec.name);
    if (earlier && earlier.range !== spec.range) {
      throw PlatformError.invalid(`dependencies: ${spec.name} is listed twice (${earlier.spec} and ${spec.spec})`);
    }
    byName.set(spec.name, spec);
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function parseOne(raw: string): NpmSpec {
  const refuse = () => PlatformError.invalid(`dependencies: ${JSON.stringify(raw)} is not an npm package name with an optional version range`);
  if (typeof raw !== 'string') throw refuse();
  const at = raw.indexOf('@', 1);
  const name = at < 0 ? raw : raw.slice(0, at);
  const range = at < 0 ? 'latest' : raw.slice(at + 1);
  if (name.length > 214 || !NAME.test(name) || TARBALL.test(name) || /^(?:node_modules|favicon\.ico)$/i.test(name)) throw refuse();
  const isRange = semver.validRange(range) !== null && !/[:/\\]/.test(range);
  const isTag = DIST_TAG.test(range) && !TARBALL.test(range);
  if (range.length === 0 || range.length > 256 || range.trim() !== range || !(isRange || isTag)) throw refuse();
  return { name, range, spec: `${name}@${range}` };
}

/** The package an import path names: `lodash/fp` → `lodash`, `@a/b/c` → `@a/b`. */
export function packageOf(importPath: string): string {
  const parts = importPath.split('/');
  return importPath.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? importPath);
}
