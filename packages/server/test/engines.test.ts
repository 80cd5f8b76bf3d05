import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Every installed package must declare support for the Node version the README promises
// (`engines.node` of the root package.json, e.g. >=20.19): a package that does not makes
// `pnpm install` warn on that Node, and may not run there. scripts/check-engines.mjs checks
// the installed tree; this runs it on the workspace itself and on a made-up one.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'check-engines.mjs');
const run = promisify(execFile);

async function check(root: string, node?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, '--root', root, ...(node ? ['--node', node] : [])]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('engines of installed packages', () => {
  it('the README and the root package.json promise the same Node version', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=20.19');
    expect(await readFile(join(ROOT, 'README.md'), 'utf8')).toContain('Node.js 20.19');
  });

  it('every package installed in this workspace supports Node 20.19', async () => {
    const result = await check(ROOT);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('Every installed package supports Node 20.19.0.\n');
    expect(result.code).toBe(0);
    // The check sees the tree: at Node 18 some packages do not qualify (they ask for >=20).
    expect((await check(ROOT, '18.0.0')).code).toBe(1);
  });

  describe('on a made-up install', () => {
    let root: string;
    /** A package in the pnpm store, linked from `from` (a node_modules folder) unless `orphan`. */
    const install = async (from: string | undefined, name: string, version: string, engines?: string) => {
      const dir = join(root, 'node_modules', '.pnpm', `${name}@${version}`, 'node_modules', name);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version, ...(engines ? { engines: { node: engines } } : {}) }));
      if (from) await symlink(dir, join(from, name));
      return join(root, 'node_modules', '.pnpm', `${name}@${version}`, 'node_modules');
    };

    beforeAll(async () => {
      root = await mkdtemp(join(tmpdir(), 'ap-engines-'));
      await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'ws', engines: { node: '>=20.19' } }));
      await mkdir(join(root, 'node_modules'), { recursive: true });
      const direct = await install(join(root, 'node_modules'), 'direct', '1.0.0', '^18 || >=20');
      // A dependency of a dependency, linked beside it in the store.
      await install(direct, 'deep', '6.0.2', '^22 || ^24 || >=26');
      await install(direct, 'plain', '1.0.0');
      // Left in the store by an earlier install; nothing links to it.
      await install(undefined, 'orphan', '7.0.0', '>=22');
    });
    afterAll(async () => {
      await rm(root, { recursive: true, force: true });
    });

    it('fails naming each installed package that asks for a newer Node, deep ones included', async () => {
      const result = await check(root);
      expect(result.code).toBe(1);
      expect(result.stderr).toBe('Installed packages that do not declare support for Node 20.19.0:\n  deep@6.0.2 requires node ^22 || ^24 || >=26\n');
    });

    it('passes on a Node that every installed package supports', async () => {
      expect((await check(root, '22.12.0')).code).toBe(0);
    });
  });
});
