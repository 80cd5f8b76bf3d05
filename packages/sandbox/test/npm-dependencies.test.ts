// npm dependencies of JavaScript tools, end to end: the real npm CLI installs from a fake
// registry on 127.0.0.1 (test/fixtures/npm-registry.ts, npm's wire format), esbuild bundles,
// QuickJS runs the bundle.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isPlatformError, type ToolSandbox } from '@agent-platform/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { javascriptSandbox } from '../src/javascript.js';
import { type NpmDependencies, npmDependencies } from '../src/npm-dependencies.js';
import { type FakeNpmRegistry, startNpmRegistry } from './fixtures/npm-registry.js';

let dir: string;
let registry: FakeNpmRegistry;
let deps: NpmDependencies;
let sandbox: ToolSandbox;
const marker = (name: string) => join(dir, `${name}-ran`);
const writeMarker = (name: string) => `node -e "require('fs').writeFileSync(${JSON.stringify(marker(name)).replaceAll('"', "'")}, 'ran')"`;

/** The error a promise rejects with (a PlatformError, checked). */
async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlatformError(error)) throw new Error(`expected a PlatformError, got ${String(error)}`);
  return error;
}

const run = (code: string, dependencies: string[], args: unknown = {}) => sandbox.run({ code, args, dependencies, timeoutMs: 2000, memoryBytes: 32 * 1024 * 1024 });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'npm-deps-'));
  registry = await startNpmRegistry([
    { name: 'tiny-util', version: '1.0.0', files: { 'index.js': 'exports.upper = (s) => String(s).toUpperCase();' } },
    {
      name: 'tiny-case',
      version: '1.2.0',
      manifest: { main: 'index.js', dependencies: { 'tiny-util': '^1.0.0' } },
      files: { 'index.js': 'const { upper } = require("tiny-util");\nexports.shout = (s) => upper(s) + "!";' },
    },
    {
      name: 'tiny-case',
      version: '2.0.0',
      manifest: { type: 'module', exports: { '.': { import: './index.mjs', default: './index.mjs' } }, dependencies: { 'tiny-util': '^1.0.0' } },
      files: { 'index.mjs': 'import { upper } from "tiny-util";\nexport const shout = (s) => upper(s) + "!!";' },
    },
    { name: '@fake/answer', version: '0.1.0', files: { 'index.js': 'module.exports = 42;' } },
    {
      name: 'tiny-browser',
      version: '1.0.0',
      manifest: { browser: { fs: false } },
      files: { 'index.js': 'const fs = require("fs");\nmodule.exports = () => typeof fs.readFileSync;' },
    },
    { name: 'needs-fs', version: '1.0.0', files: { 'index.js': 'const fs = require("fs");\nexports.passwd = () => fs.readFileSync("/etc/passwd", "utf8");' } },
    { name: 'tiny-gyp', version: '1.0.0', manifest: { gypfile: true }, files: { 'index.js': 'module.exports = 1;', 'binding.gyp': '{ "targets": [] }' } },
    { name: 'tiny-prebuilt', version: '1.0.0', files: { 'index.js': 'module.exports = require("./addon.node");', 'addon.node': 'not really ELF' } },
    {
      name: 'with-scripts',
      version: '1.0.0',
      manifest: { scripts: { preinstall: writeMarker('preinstall'), postinstall: writeMarker('postinstall') } },
      files: { 'index.js': 'module.exports = "installed";' },
    },
    { name: 'git-dep', version: '1.0.0', manifest: { dependencies: { sneaky: 'git+https://127.0.0.1:9/sneaky.git' } }, files: { 'index.js': 'module.exports = 1;' } },
    { name: 'too-big', version: '1.0.0', files: { 'index.js': `module.exports = "${'x'.repeat(6 * 1024 * 1024)}";` } },
  ]);
  deps = npmDependencies({ cacheDir: join(dir, 'cache'), registry: registry.url });
  sandbox = javascriptSandbox({ workers: 1, dependencies: deps });
});

afterAll(async () => {
  await sandbox?.close();
  await registry?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const SHOUT_ESM = 'import { shout } from "tiny-case";\nimport answer from "@fake/answer";\nasync function main(args) { return { text: shout(args.s), answer }; }';
const SHOUT_CJS = 'const { shout } = require("tiny-case");\nfunction main(args) { return shout(args.s); }';

describe('npm dependencies of JavaScript tools', () => {
  it('installs a declared dependency with its transitive one and runs the bundle in QuickJS (ESM import and require)', async () => {
    const dependencies = ['tiny-case@^1.0.0', '@fake/answer'];
    await sandbox.prepare?.({ code: SHOUT_ESM, dependencies });
    expect(registry.requests).toEqual(
      expect.arrayContaining(['/tiny-case', '/tiny-util', '/@fake/answer', '/tiny-case/-/tiny-case-1.2.0.tgz', '/tiny-util/-/tiny-util-1.0.0.tgz', '/@fake/answer/-/answer-0.1.0.tgz']),
    );
    expect(await run(SHOUT_ESM, dependencies, { s: 'hi' })).toMatchObject({ ok: true, result: { text: 'HI!', answer: 42 } });
    expect(await run(SHOUT_CJS, dependencies, { s: 'yo' })).toMatchObject({ ok: true, result: 'YO!' });
    // The bundle is one classic script: no require, no module loader left in it.
    const script = await deps.bundle(SHOUT_ESM, dependencies);
    expect(script).toContain('globalThis.main');
    expect(script).not.toMatch(/\brequire\("tiny-util"\)/);
  });

  it('resolves dist-tags and ranges: latest is 2.0.0 (ESM-only, exports map), ^1 is 1.2.0', async () => {
    expect(await run(SHOUT_CJS, ['tiny-case'], { s: 'a' })).toMatchObject({ ok: true, result: 'A!!' });
    expect(await run(SHOUT_CJS, ['tiny-case@latest'], { s: 'b' })).toMatchObject({ ok: true, result: 'B!!' });
    expect(await run(SHOUT_CJS, ['tiny-case@1.x'], { s: 'c' })).toMatchObject({ ok: true, result: 'C!' });
  });

  it('reuses installs and bundles: no registry request for a set installed before, also from a new instance on the same cacheDir', async () => {
    const before = registry.requests.length;
    const dependencies = ['@fake/answer', 'tiny-case@^1.0.0']; // the first test's set, in another order
    await deps.prepare(SHOUT_ESM, dependencies);
    await deps.prepare('import a from "@fake/answer"; function main() { return a + 1; }', dependencies);
    const fresh = npmDependencies({ cacheDir: join(dir, 'cache'), registry: registry.url });
    const other = javascriptSandbox({ workers: 1, dependencies: fresh });
    try {
      const outcome = await other.run({ code: SHOUT_ESM, args: { s: 'again' }, dependencies, timeoutMs: 2000, memoryBytes: 32 * 1024 * 1024 });
      expect(outcome).toMatchObject({ ok: true, result: { text: 'AGAIN!', answer: 42 } });
      // Without the bundle files the installed set is bundled again, still without npm.
      await rm(join(dir, 'cache', 'bundles'), { recursive: true });
      const again = npmDependencies({ cacheDir: join(dir, 'cache'), registry: registry.url });
      expect(await again.bundle(SHOUT_CJS, dependencies)).toContain('globalThis.main');
    } finally {
      await other.close();
    }
    expect(registry.requests.slice(before)).toEqual([]);
  });

  it('shares one install between concurrent prepares of the same set', async () => {
    const codes = [1, 2, 3].map((n) => `const f = require("tiny-browser"); function main() { return [${n}, f()]; }`);
    await Promise.all(codes.map((code) => deps.prepare(code, ['tiny-browser'])));
    expect(registry.requests.filter((p) => p === '/tiny-browser/-/tiny-browser-1.0.0.tgz')).toHaveLength(1);
    // The package's `browser` field maps fs to an empty module: it bundles and runs without it.
    expect(await run(codes[1] as string, ['tiny-browser'])).toMatchObject({ ok: true, result: [2, 'undefined'] });
  });

  it('refuses specs that are not registry packages before any npm process starts', async () => {
    const started = join(dir, 'npm-started');
    const fakeNpm = join(dir, 'fake-npm.js');
    await writeFile(fakeNpm, `require('fs').writeFileSync(${JSON.stringify(started)}, 'yes');`);
    const guarded = npmDependencies({ cacheDir: join(dir, 'cache-bad'), registry: registry.url, npmCommand: fakeNpm });
    const before = registry.requests.length;
    const bad = [
      'file:..',
      'file:/etc',
      'git+https://127.0.0.1:9/x.git',
      'github:user/repo',
      'http://127.0.0.1:9/x.tgz',
      '../x',
      '/etc',
      'a@npm:b',
      'x@file:../y',
      'x@link:../y',
      'x@git+ssh://git@127.0.0.1:x.git',
      'x@user/repo',
      'x@./y.tgz',
      'x@latest.tgz',
      'x.tgz',
      '-g',
      '--registry=http://127.0.0.1:9/',
      'tiny-case@',
      'tiny-case@ ^1',
      'Tiny Case',
      '',
    ];
    for (const spec of bad) {
      const error = await rejection(guarded.prepare('function main() {}', [spec]));
      expect(error.code, spec).toBe('invalid_request');
      expect(error.message, spec).toBe(`dependencies: ${JSON.stringify(spec)} is not an npm package name with an optional version range`);
    }
    expect(existsSync(started)).toBe(false);
    expect(existsSync(join(dir, 'cache-bad'))).toBe(false);
    expect(registry.requests.length).toBe(before);
    // The same fake npm does start for a good spec: the check above could have failed.
    await guarded.prepare('function main() {}', ['tiny-util']).catch(() => {});
    expect(existsSync(started)).toBe(true);
  });

  it('names a package the registry does not have (invalid_request)', async () => {
    const error = await rejection(deps.prepare('function main() {}', ['no-such-pkg']));
    expect(error).toMatchObject({ code: 'invalid_request', message: 'dependencies: no-such-pkg: not found in the npm registry (E404)' });
    expect(registry.requests).toContain('/no-such-pkg');
    const version = await rejection(deps.prepare('function main() {}', ['tiny-util@^7']));
    expect(version).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^dependencies: .*tiny-util@\^7.*\(ETARGET\)$/) });
  });

  it('refuses native addons: gypfile/binding.gyp and prebuilt .node files', async () => {
    expect(await rejection(deps.prepare('function main() {}', ['tiny-gyp']))).toMatchObject({
      code: 'invalid_request',
      message: 'dependencies: tiny-gyp is not pure JavaScript (it has a native addon)',
    });
    expect((await rejection(deps.prepare('function main() {}', ['tiny-prebuilt']))).message).toBe('dependencies: tiny-prebuilt is not pure JavaScript (it has a native addon)');
    // A refused set is not kept as installed.
    for (const set of await readdir(join(dir, 'cache', 'npm'))) {
      expect(existsSync(join(dir, 'cache', 'npm', set, 'node_modules', 'tiny-gyp'))).toBe(false);
      expect(existsSync(join(dir, 'cache', 'npm', set, 'node_modules', 'tiny-prebuilt'))).toBe(false);
    }
  });

  it('refuses a package that needs a Node built-in, and tool code importing built-ins, files or undeclared packages', async () => {
    const needsFs = await rejection(deps.prepare('const n = require("needs-fs"); function main() { return n.passwd(); }', ['needs-fs']));
    expect(needsFs).toMatchObject({ code: 'invalid_request', message: 'dependencies: needs-fs imports "fs", which the sandbox does not provide' });
    const dependencies = ['tiny-case@^1.0.0', '@fake/answer'];
    const cases: [string, string][] = [
      ['import fs from "fs"; function main() {}', 'code: the tool code imports "fs", which the sandbox does not provide'],
      ['const cp = require("node:child_process"); function main() {}', 'code: the tool code imports "node:child_process", which the sandbox does not provide'],
      ['import { upper } from "tiny-util"; function main() {}', 'code: the tool code imports "tiny-util", which is not among the tool\'s dependencies'],
      ['import x from "lodash"; function main() {}', 'code: the tool code imports "lodash", which is not among the tool\'s dependencies'],
      ['import x from "/etc/passwd"; function main() {}', 'code: the tool code imports "/etc/passwd", but a tool is one file: it can import only its dependencies'],
      ['import x from "../../package.json"; function main() {}', 'code: the tool code imports "../../package.json", but a tool is one file: it can import only its dependencies'],
      ['import x from "tiny-case/missing.js"; function main() {}', 'code: the tool code imports "tiny-case/missing.js", which is not among the installed packages'],
      ['function main( { return 1 }', 'code: line 1, column 25: Expected "}" but found "1"'],
      // Columns count characters, though esbuild counts UTF-8 bytes ("é" is two).
      ['function main() { const s = "é"; return s + }', 'code: line 1, column 45: Unexpected "}"'],
    ];
    for (const [code, message] of cases) {
      expect(await rejection(deps.prepare(code, dependencies)), code).toMatchObject({ code: 'invalid_request', message });
    }
  });

  it('says so when the registry cannot be reached (unavailable, a closed port on 127.0.0.1)', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const offline = npmDependencies({ cacheDir: join(dir, 'cache-offline'), registry: `http://127.0.0.1:${port}` });
    expect(offline.registry).toBe(`http://127.0.0.1:${port}/`);
    const error = await rejection(offline.prepare('function main() {}', ['tiny-util']));
    expect(error).toMatchObject({
      code: 'unavailable',
      message: `dependencies: the npm registry http://127.0.0.1:${port}/ could not be reached to install tiny-util@latest (ECONNREFUSED)`,
    });
  });

  it('never runs install scripts (a control install with scripts on shows that they would)', async () => {
    await deps.prepare('const w = require("with-scripts"); function main() { return w; }', ['with-scripts']);
    expect(await run('const w = require("with-scripts"); function main() { return w; }', ['with-scripts'])).toMatchObject({ ok: true, result: 'installed' });
    expect(existsSync(marker('preinstall'))).toBe(false);
    expect(existsSync(marker('postinstall'))).toBe(false);

    const control = join(dir, 'control');
    // Asynchronously: the fake registry answers from this process.
    await promisify(execFile)(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--no-update-notifier',
        `--registry=${registry.url}`,
        `--cache=${join(control, 'cache')}`,
        `--userconfig=${join(control, 'npmrc')}`,
        `--prefix=${control}`,
        'with-scripts',
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: control },
      },
    );
    expect(existsSync(marker('postinstall'))).toBe(true);
  });

  it('refuses a registry package that depends on git, a URL or a file', async () => {
    const error = await rejection(deps.prepare('function main() {}', ['git-dep']));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(/^dependencies: sneaky@git\+https:\/\/127\.0\.0\.1:9\/sneaky\.git: only packages from the npm registry can be installed/);
  });

  it('caps the bundle at 5 MB', async () => {
    const error = await rejection(deps.prepare('const big = require("too-big"); function main() { return big.length; }', ['too-big']));
    expect(error).toMatchObject({ code: 'invalid_request', message: 'dependencies: the tool bundled with its dependencies is 6.0 MB, more than the 5.0 MB a tool may have' });
  });

  it('answers runs whose dependencies cannot be provided with an invalid_code outcome, and prepare honours its signal', async () => {
    const outcome = await run('function main() { return 1; }', ['no-such-pkg']);
    expect(outcome).toMatchObject({ ok: false, error: { kind: 'invalid_code', message: 'dependencies: no-such-pkg: not found in the npm registry (E404)' } });
    const bad = await run('function main() { return 1; }', ['file:/etc']);
    expect(bad).toMatchObject({ ok: false, error: { kind: 'invalid_code' } });
    // Without dependencies nothing is installed or bundled: the code runs as it is.
    expect(await run('function main() { return 7; }', [])).toMatchObject({ ok: true, result: 7 });
    expect(await deps.prepare('function main() {}', [])).toBe('function main() {}');

    const aborted = await rejection(deps.prepare(SHOUT_CJS, ['tiny-case@~1.2.0'], AbortSignal.abort()));
    expect(aborted.code).toBe('aborted');
    // A sandbox without npm dependencies has no prepare, so core refuses tools with dependencies.
    const plain = javascriptSandbox({ workers: 1 });
    expect(plain.prepare).toBeUndefined();
    expect(await plain.run({ code: SHOUT_CJS, args: {}, dependencies: ['tiny-case'], timeoutMs: 1000, memoryBytes: 32 * 1024 * 1024 })).toMatchObject({
      ok: false,
      error: { kind: 'invalid_code', message: 'dependencies: this sandbox cannot provide npm dependencies' },
    });
    await plain.close();
  });

  it('names files of its cache relative to it in errors, never by their absolute path', async () => {
    const cacheDir = join(dir, 'paths-cache');
    const own = npmDependencies({ cacheDir, registry: registry.url, label: 'tools/npm' });
    // Its bundles folder a symbolic link to itself: saving the bundle fails with ELOOP.
    await mkdir(cacheDir, { recursive: true });
    await symlink(join(cacheDir, 'bundles'), join(cacheDir, 'bundles'));
    const error = await own.prepare('import { upper } from "tiny-util"; function main() { return upper("a"); }', ['tiny-util']).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("'tools/npm/bundles'");
    expect((error as Error).message).not.toContain(cacheDir);
  });

  it('keeps its cache layout (installs, bundles, npm cache and home) and leaves no temporary folder behind', async () => {
    expect((await readdir(join(dir, 'cache'))).sort()).toEqual(['bundles', 'home', 'npm', 'npm-cache', 'tmp']);
    expect(await readdir(join(dir, 'cache', 'tmp'))).toEqual([]);
  });
});
