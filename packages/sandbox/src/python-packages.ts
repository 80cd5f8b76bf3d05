import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** PEP 503 normalised name: `Foo_Bar.baz` → `foo-bar-baz`. */
export const normalizeName = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** Python package names as users write them (no versions, extras, URLs or paths). */
export const PACKAGE_NAME = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,98}[A-Za-z0-9])?$/;

interface LockEntry {
  readonly file_name: string;
  readonly depends?: readonly string[];
}

interface Available {
  /** Absolute wheel path. */
  readonly file: string;
  /** Normalised names of what it needs. */
  readonly depends: readonly string[];
}

/**
 * The Python packages a tool may declare: those of Pyodide's lock file whose wheel is present
 * (in the Pyodide folder or a packages folder), and every `*.whl` of the packages folders (a
 * folder may carry its own `pyodide-lock.json` for dependencies between its wheels). The npm
 * `pyodide` package ships the interpreter and the standard library but no wheels, so on a
 * default install only the standard library is available.
 */
export class PythonPackageIndex {
  readonly #packages = new Map<string, Available>();

  constructor(pyodideDir: string, packageDirs: readonly string[]) {
    for (const dir of [pyodideDir, ...packageDirs]) {
      const lock = readLock(dir);
      for (const [name, entry] of Object.entries(lock)) {
        const file = join(dir, entry.file_name);
        if (entry.file_name.endsWith('.whl') && existsSync(file)) {
          this.#packages.set(normalizeName(name), { file, depends: (entry.depends ?? []).map(normalizeName) });
        }
      }
      if (dir === pyodideDir) continue;
      for (const file of readdirSync(dir)) {
        const name = /^([^-]+)-[^-]+-.*\.whl$/.exec(file)?.[1];
        if (name && !this.#packages.has(normalizeName(name))) this.#packages.set(normalizeName(name), { file: join(dir, file), depends: [] });
      }
    }
  }

  /** Names of every available package, sorted. */
  names(): string[] {
    return [...this.#packages.keys()].sort();
  }

  /**
   * The wheels to load for `names`, dependencies first; throws naming a package that is not
   * available. Standard-library module names need nothing and are skipped.
   */
  resolve(names: readonly string[], stdlib: ReadonlySet<string>): string[] {
    const files: string[] = [];
    const seen = new Set<string>();
    const visit = (name: string, neededBy?: string) => {
      const key = normalizeName(name);
      if (seen.has(key)) return;
      seen.add(key);
      if (stdlib.has(name) || stdlib.has(key.replaceAll('-', '_'))) return;
      const found = this.#packages.get(key);
      if (!found) {
        const available = this.names();
        throw new Error(
          `python package "${name}"${neededBy ? ` (needed by ${neededBy})` : ''} is not available on this server: Python tools can use the standard library and the wheels shipped with Pyodide or placed in the Python packages folder (${available.length ? `available: ${available.join(', ')}` : 'none is there'})`,
        );
      }
      for (const dependency of found.depends) visit(dependency, name);
      files.push(found.file);
    };
    for (const name of names) visit(name);
    return files;
  }
}

function readLock(dir: string): Record<string, LockEntry> {
  const path = join(dir, 'pyodide-lock.json');
  if (!existsSync(path)) return {};
  const lock = JSON.parse(readFileSync(path, 'utf8')) as { packages?: Record<string, LockEntry> };
  return lock.packages ?? {};
}
