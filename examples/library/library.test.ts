import { type ExecFileOptions, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeChatServer, startFakeChatServer } from '../../packages/adapters-models/test/openai-chat-server.js';
import { type LockedRegistry, startLockedRegistry } from './test-support/locked-registry.js';
import { extractSnippets, type Snippet, snippetFileName } from './test-support/snippets.js';

// The packages as a user gets them: packed with `pnpm pack`, installed from the tarballs into a
// folder outside the workspace (no workspace links, no `agent-platform:source` condition), then
// this example compiled there with tsc and run with node, in memory and on SQLite; and the
// TypeScript and JavaScript blocks of README.md and docs/*.md type-checked against the same
// installed packages. The tests run with no network: the install resolves against a loopback
// registry of the workspace's locked versions and takes every file from pnpm's store
// (test-support/locked-registry.ts).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('./', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], options: ExecFileOptions = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 120_000, maxBuffer: 16 * 1024 * 1024, ...options }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const pnpm = (args: readonly string[], options: ExecFileOptions) => run('pnpm', args, options);

const manifestOf = async (dir: string) => JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as Record<string, unknown> & { name: string; version: string };

let dir: string;
let app: string;
let registry: LockedRegistry | undefined;
let chat: FakeChatServer;
/** The TypeScript and JavaScript blocks of README.md and docs/*.md. */
let snippets: Snippet[] = [];
/** What tsc said of the example, the snippets and the probe. */
let checked = '';
/** npm name → tarball file name, of every workspace package. */
const tarballs = new Map<string, string>();
/** What each step took, in ms (printed: the budget of this file is a few tens of seconds). */
const took: Record<string, number> = {};
const timed = async <T>(step: string, work: () => Promise<T>): Promise<T> => {
  const start = performance.now();
  try {
    return await work();
  } finally {
    took[step] = Math.round(performance.now() - start);
  }
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ap-library-'));
  app = join(dir, 'app');
  const packages = (await readdir(join(ROOT, 'packages'))).map((name) => join(ROOT, 'packages', name));
  for (const pkg of packages) {
    const manifest = await manifestOf(pkg);
    const built = Object.values((manifest.exports ?? {}) as Record<string, { import?: string } | string>).flatMap((target) => (typeof target === 'object' && target.import ? [target.import] : []));
    for (const file of built) if (!existsSync(join(pkg, file))) throw new Error(`${manifest.name} is not built (${file} is missing): run pnpm build first`);
  }

  // Pack every package as a user (or a registry) gets it.
  const packed = await timed('pack', () => pnpm(['-r', '--filter', './packages/*', 'pack', '--pack-destination', join(dir, 'tarballs')], { cwd: ROOT }));
  if (packed.code !== 0) throw new Error(`pnpm pack failed:\n${packed.stdout}\n${packed.stderr}`);
  for (const pkg of packages) {
    const { name, version } = await manifestOf(pkg);
    tarballs.set(name, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  }

  // The example's own package.json, with the packages taken from the tarballs (also where one
  // package depends on another), plus what the documentation's snippets import.
  await mkdir(app, { recursive: true });
  for (const file of ['main.ts', 'tsconfig.json']) await copyFile(join(EXAMPLE, file), join(app, file));
  const manifest = await manifestOf(EXAMPLE);
  const fromTarball = (name: string) => `file:../tarballs/${tarballs.get(name)}`;
  const dependencies: Record<string, string> = { ...(manifest.dependencies as Record<string, string>) };
  for (const name of tarballs.keys()) dependencies[name] = fromTarball(name);
  // The typed client's snippets use the openai client, at the version the client is tested with.
  dependencies.openai = ((await manifestOf(join(ROOT, 'packages', 'client'))).devDependencies as Record<string, string>).openai as string;
  // The MCP snippets use the MCP SDK's client, at the version the mcp package depends on.
  dependencies['@modelcontextprotocol/sdk'] = ((await manifestOf(join(ROOT, 'packages', 'mcp'))).dependencies as Record<string, string>)['@modelcontextprotocol/sdk'] as string;
  await writeFile(join(app, 'package.json'), JSON.stringify({ ...manifest, dependencies }, null, 2));
  // The workspace's approvals of dependency build scripts (pnpm 12 refuses unapproved ones).
  const workspaceYaml = await readFile(join(ROOT, 'pnpm-workspace.yaml'), 'utf8');
  const allowBuilds = /^allowBuilds:\n(?:[ #].*\n|\n)*/m.exec(workspaceYaml)?.[0] ?? '';
  const overrides = [...tarballs.keys()].map((name) => `  "${name}": ${fromTarball(name)}`).join('\n');
  await writeFile(join(app, 'pnpm-workspace.yaml'), `${allowBuilds}\noverrides:\n${overrides}\n`);

  registry = await startLockedRegistry(ROOT);
  // The store the workspace's install used (pnpm adds its layout's folder, v11, to --store-dir).
  const storeDir = /"storeDir": "([^"]+)"/.exec(await readFile(join(ROOT, 'node_modules', '.modules.yaml'), 'utf8'))?.[1];
  if (!storeDir) throw new Error('node_modules/.modules.yaml names no storeDir: run pnpm install first');
  const installed = await timed('install', () =>
    pnpm(['install', '--registry', registry?.url as string, '--store-dir', dirname(storeDir), '--config.cache-dir', join(dir, 'pnpm-cache'), '--reporter', 'append-only'], { cwd: app }),
  );
  if (installed.code !== 0) throw new Error(`pnpm install from the tarballs failed:\n${installed.stdout}\n${installed.stderr}`);
  expect(registry.tarballRequests).toEqual([]);

  // The example (emitted to dist/, as its own tsconfig.json would) and the documentation's
  // snippets, type-checked against the installed packages in two programs: the snippets that
  // import the typed client's additions to the openai package's types (global to a program),
  // and the others with the example, where a probe shows that without them the openai
  // client's own types refuse chatId (so the check is not vacuous).
  const files = ['README.md', ...(await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  snippets = (await Promise.all(files.map(async (file) => extractSnippets(file, await readFile(join(ROOT, file), 'utf8'))))).flat();
  const typed = (snippet: Snippet) => /['"]@agent-platform\/client\/openai['"]/.test(snippet.code);
  for (const snippet of snippets.filter((s) => !s.fragment)) {
    const folder = join(app, typed(snippet) ? 'typed' : 'plain');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, snippetFileName(snippet)), snippet.code);
  }
  await mkdir(join(app, 'plain'), { recursive: true });
  await writeFile(
    join(app, 'plain', 'probe.ts'),
    "import OpenAI from 'openai';\nconst client = new OpenAI({ apiKey: 'k' });\nawait client.chat.completions.create({ model: 'm', messages: [], chatId: 'chat_1' });\n",
  );
  const { compilerOptions } = JSON.parse(await readFile(join(EXAMPLE, 'tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
  const program = (include: string[], more: Record<string, unknown>) => JSON.stringify({ compilerOptions: { ...compilerOptions, allowJs: true, checkJs: true, ...more }, include });
  await writeFile(join(app, 'tsconfig.plain.json'), program(['main.ts', 'plain/*.ts', 'plain/*.mjs'], { rootDir: '.' }));
  await writeFile(join(app, 'tsconfig.typed.json'), program(['typed/*.ts', 'typed/*.mjs'], { noEmit: true }));
  const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  const check = (config: string) => run(process.execPath, [tsc, '-p', config], { cwd: app });
  checked = await timed('tsc', async () => {
    const [plain, typedRun] = await Promise.all([check('tsconfig.plain.json'), existsSync(join(app, 'typed')) ? check('tsconfig.typed.json') : undefined]);
    return `${plain.stdout}${typedRun?.stdout ?? ''}`;
  });
  if (!existsSync(join(app, 'dist', 'main.js'))) throw new Error(`the example did not compile:\n${checked}`);
  chat = await startFakeChatServer();
}, 300_000);

afterAll(async () => {
  console.log(
    `library example: ${Object.entries(took)
      .map(([step, ms]) => `${step} ${ms} ms`)
      .join(', ')}`,
  );
  await registry?.close();
  await chat?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed packages, installed outside the workspace', () => {
  it('pack to versions: no tarball depends on "workspace:"; npm pack is refused, naming pnpm pack', async () => {
    for (const file of tarballs.values()) {
      const listed = await run('tar', ['-xzOf', join(dir, 'tarballs', file), 'package/package.json']);
      expect(listed.code).toBe(0);
      expect(listed.stdout, file).not.toContain('workspace:');
    }
    // As a user runs it: not under `pnpm test`, whose npm_config_* variables (its user agent
    // among them) npm would take as its own configuration.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
    const refused = await run('npm', ['pack', '--dry-run', '--ignore-scripts=false'], { cwd: join(ROOT, 'packages', 'adapters-storage'), env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("@agent-platform/adapters-storage: Agent Platform's packages are packed with pnpm (`pnpm pack`)");
  });

  it('the example runs in memory: project, document, search, a completion citing it; it never loads better-sqlite3; exit 0', async () => {
    // A resolve hook that fails the process if anything imports better-sqlite3.
    const noSqlite = `data:text/javascript,${encodeURIComponent(
      "import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, next) { if (s === \"better-sqlite3\") throw new Error(\"better-sqlite3 was loaded\"); return next(s, c); }'));",
    )}`;
    const result = await timed('memory run', () =>
      run(process.execPath, ['--import', noSqlite, 'dist/main.js', 'memory'], { cwd: app, env: { ...process.env, OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-test' } }),
    );
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^project: Support bot \(proj_\w+\), storage: memory$/);
    expect(lines[1]).toMatch(/^indexed: refunds\.md \(doc_\w+\)$/);
    expect(lines[2]).toMatch(/^documents: refunds\.md completed, [1-9] chunks?$/);
    expect(lines[3]).toMatch(/^search: refunds\.md (0\.\d\d|1\.00) "# Refunds\\n\\nRefunds are paid back to the/);
    expect(lines).toContain('answer: You said: How long do refunds take?');
    expect(lines.at(-1)).toBe('sources: [1] refunds.md');
    expect(result.code).toBe(0);
    // The model was given the excerpt.
    expect(JSON.stringify(chat.lastRequest()?.body)).toContain('Refunds are paid back to the card within 30 days');
  });

  it('the example runs on SQLite in a data folder (database, vectors, document texts), and again on the same folder; exit 0', async () => {
    const env = { ...process.env, OPENAI_BASE_URL: chat.url, OPENAI_API_KEY: 'sk-test' };
    for (const round of [1, 2]) {
      const result = await timed(`sqlite run ${round}`, () => run(process.execPath, ['dist/main.js', 'sqlite', './data'], { cwd: app, env }));
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^project: Support bot \(proj_\w+\), storage: sqlite\n/);
      expect(result.stdout).toMatch(/\nsources: \[1\] refunds\.md\n$/);
      expect(result.code).toBe(0);
    }
    for (const path of ['agent-platform.db', 'vectors', 'files']) expect(existsSync(join(app, 'data', path)), path).toBe(true);
  });

  it('every export of every package loads, or fails only for want of an optional peer dependency it declares', async () => {
    const script = `
      import { readFileSync } from 'node:fs';
      const results = [];
      for (const name of ${JSON.stringify([...tarballs.keys()])}) {
        const manifest = JSON.parse(readFileSync(new URL('./node_modules/' + name + '/package.json', import.meta.url), 'utf8'));
        const optional = Object.keys(manifest.peerDependenciesMeta ?? {});
        for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
          if (typeof target !== 'object' || !target.import) continue;
          const specifier = name + subpath.slice(1);
          try {
            await import(specifier);
            results.push([specifier, 'ok']);
          } catch (error) {
            const missing = /Cannot find (?:package|module) '([^']+)'/.exec(error.message)?.[1];
            const peer = missing && optional.find((p) => missing === p || missing.startsWith(p + '/'));
            results.push([specifier, peer ? 'needs ' + peer : 'FAILED: ' + error.message]);
          }
        }
      }
      console.log(JSON.stringify(results));
      process.exit(0);`;
    await writeFile(join(app, 'exports.mjs'), script);
    const result = await run(process.execPath, ['exports.mjs'], { cwd: app });
    expect(result.code).toBe(0);
    const results = JSON.parse(result.stdout) as [string, string][];
    expect(results.filter(([, outcome]) => outcome.startsWith('FAILED'))).toEqual([]);
    const outcome = Object.fromEntries(results);
    // What a library user imports loads without any optional peer.
    for (const specifier of [
      '@agent-platform/core',
      '@agent-platform/core/schemas',
      '@agent-platform/adapters-storage',
      '@agent-platform/adapters-storage/memory',
      '@agent-platform/adapters-storage/sqlite',
      '@agent-platform/adapters-vector/builtin',
      '@agent-platform/adapters-embedding/builtin',
      '@agent-platform/adapters-models/openai',
      '@agent-platform/client/openai',
      '@agent-platform/server',
    ]) {
      expect(outcome[specifier], specifier).toBe('ok');
    }
  });
});

describe('the TypeScript and JavaScript in README.md and docs/*.md', () => {
  it('type-check against the installed packages (blocks marked `fragment` excepted); without the typed client, chatId is an error', async () => {
    const whole = snippets.filter((snippet) => !snippet.fragment);
    // The README's completion example and its library use are among them: the latter is this example, word for word.
    expect(whole.filter((snippet) => snippet.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    expect(whole.map((snippet) => snippet.code)).toContain(await readFile(join(EXAMPLE, 'main.ts'), 'utf8'));
    const names = new Map(snippets.map((snippet) => [snippetFileName(snippet), snippet]));
    // Each error with the Markdown file and line it comes from.
    const errors = checked
      .split('\n')
      .filter((line) => /error TS\d+/.test(line))
      .map((line) => {
        const at = /^(?:plain|typed)\/([^(]+)\((\d+),(\d+)\): (.*)$/.exec(line);
        const snippet = at ? names.get(at[1] as string) : undefined;
        return snippet && at ? `${snippet.file}:${snippet.line + Number(at[2]) - 1}:${at[3]}: ${at[4]}` : line;
      });
    expect(errors.filter((line) => !line.startsWith('plain/probe.ts'))).toEqual([]);
    expect(errors.filter((line) => line.startsWith('plain/probe.ts'))).toEqual([expect.stringMatching(/^plain\/probe\.ts\(3,\d+\): error TS2769: No overload matches this call\./)]);
    expect(checked).toMatch(/'chatId' does not exist in type/);
  });
});
