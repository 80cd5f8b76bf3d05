import { execFile } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// `pnpm start` runs scripts/build-if-stale.mjs before the server: it builds the packages whose
// dist is missing or older than their sources, and nothing when every build is current. Run
// here on a workspace of its own in a temp folder, whose packages' build scripts log each build.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'build-if-stale.mjs');
const run = promisify(execFile);

let ws: string;
const log = () => join(ws, 'builds.log');
const builds = async () => (await readFile(log(), 'utf8').catch(() => '')).split('\n').filter(Boolean);

/** Runs the script on the temp workspace; `check` only reports. Resolves with its exit code. */
async function buildIfStale(check = false): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, [SCRIPT, '--root', ws, ...(check ? ['--check'] : [])]);
    return { code: 0, stderr };
  } catch (error) {
    const e = error as { code?: number; stderr?: string };
    return { code: e.code ?? -1, stderr: e.stderr ?? '' };
  }
}

/** Sets every file under `dir` a minute back, as if everything was written and built a minute ago. */
async function age(dir: string) {
  const past = new Date(Date.now() - 60_000);
  for (const name of await readdir(dir, { recursive: true })) await utimes(join(dir, name), past, past);
}

beforeEach(async () => {
  ws = await mkdtemp(join(tmpdir(), 'ap-start-'));
  await writeFile(join(ws, 'package.json'), JSON.stringify({ name: 'ws', private: true }));
  await writeFile(join(ws, 'pnpm-workspace.yaml'), 'packages:\n  - packages/*\n');
  await writeFile(join(ws, 'tsup.base.ts'), 'export const packageBuild = {};\n');
  await writeFile(join(ws, 'tsconfig.base.json'), '{}\n');
  for (const name of ['a', 'b']) {
    const dir = join(ws, 'packages', name);
    await mkdir(join(dir, 'src'), { recursive: true });
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name, scripts: { build: 'node build.mjs' } }));
    await writeFile(join(dir, 'tsup.config.ts'), 'export default {};\n');
    await writeFile(join(dir, 'src', 'index.ts'), 'export const x = 1;\n');
    await writeFile(
      join(dir, 'build.mjs'),
      `import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';\nmkdirSync('dist', { recursive: true });\nwriteFileSync('dist/index.js', 'export const x = 1;');\nappendFileSync(${JSON.stringify(log())}, '${name}\\n');\n`,
    );
  }
  // A folder without a build script is never built.
  await mkdir(join(ws, 'packages', 'docs'), { recursive: true });
  await writeFile(join(ws, 'packages', 'docs', 'package.json'), JSON.stringify({ name: 'docs' }));
});
afterEach(async () => {
  await rm(ws, { recursive: true, force: true });
});

describe('the build check of pnpm start', () => {
  it('builds every package without a dist, then nothing while the builds are current', async () => {
    expect((await buildIfStale(true)).code).toBe(1);
    expect((await buildIfStale()).code).toBe(0);
    expect((await builds()).sort()).toEqual(['a', 'b']);
    expect(await buildIfStale(true)).toEqual({ code: 0, stderr: '' });
    expect((await buildIfStale()).code).toBe(0);
    expect((await builds()).sort()).toEqual(['a', 'b']);
  });

  it('rebuilds only the package whose source changed after its build', async () => {
    await buildIfStale();
    await age(ws);
    await appendFile(join(ws, 'packages', 'b', 'src', 'index.ts'), 'export const y = 2;\n');
    const check = await buildIfStale(true);
    expect(check.code).toBe(1);
    expect(check.stderr).toBe('stale: packages/b\n');
    expect((await buildIfStale()).code).toBe(0);
    const order = await builds();
    expect(order).toHaveLength(3);
    expect(order[2]).toBe('b');
    expect((await buildIfStale(true)).code).toBe(0);
  });

  it('rebuilds every package when a shared build input changes, and a package whose dist is empty', async () => {
    await buildIfStale();
    await age(ws);
    await writeFile(join(ws, 'tsconfig.base.json'), '{ "compilerOptions": {} }\n');
    expect((await buildIfStale(true)).stderr).toBe('stale: packages/a\nstale: packages/b\n');
    await buildIfStale();
    await rm(join(ws, 'packages', 'a', 'dist'), { recursive: true });
    await mkdir(join(ws, 'packages', 'a', 'dist'));
    expect((await buildIfStale(true)).stderr).toBe('stale: packages/a\n');
  });

  it('rebuilds a Vite package (the console) when its vite config changes', async () => {
    await writeFile(join(ws, 'packages', 'a', 'vite.config.ts'), 'export default {};\n');
    await buildIfStale();
    await age(ws);
    await writeFile(join(ws, 'packages', 'a', 'vite.config.ts'), "export default { base: '/console/' };\n");
    expect((await buildIfStale(true)).stderr).toBe('stale: packages/a\n');
  });

  it('is what the root start and agent-platform scripts run, instead of a full build', async () => {
    const { scripts } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe('node scripts/build-if-stale.mjs && node packages/server/dist/cli.js serve');
    expect(scripts['agent-platform']).toBe('node scripts/build-if-stale.mjs && node packages/server/dist/cli.js');
  });
});
