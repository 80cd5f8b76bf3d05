// Module customization hooks that let a child process run the workspace's TypeScript sources,
// which is what the tests import (the `agent-platform:source` export condition): a `.ts` file
// is transpiled by the workspace's `typescript` (types dropped, nothing checked), and a
// source's `./x.js` import finds `./x.ts`. Registered by register-typescript.js only for a
// process started from a `.ts` entry (see fork-module.ts); built packages start `.js` entries
// without them. Plain JavaScript: Node loads it before any hook exists.
//
// Loading `typescript` and its first transpile take seconds, once per process: outputs are
// kept in the temp folder under a hash of their source, so later processes skip both.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CACHE = join(tmpdir(), 'agent-platform-ts-cache');
/** Changes when the transpile options below change, so older outputs are not used. */
const OPTIONS_VERSION = '1';

let ts;

export async function resolve(specifier, context, next) {
  if (context.parentURL?.endsWith('.ts') && /^\.\.?\//.test(specifier) && specifier.endsWith('.js')) {
    const url = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
    if (existsSync(fileURLToPath(url))) return { url: url.href, format: 'module', shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const fileName = fileURLToPath(url);
  const source = await readFile(fileName, 'utf8');
  const cached = join(CACHE, `${createHash('sha256').update(OPTIONS_VERSION).update(fileName).update(source).digest('hex')}.js`);
  const hit = await readFile(cached, 'utf8').catch(() => undefined);
  if (hit !== undefined) return { format: 'module', source: hit, shortCircuit: true };
  ts ??= (await import('typescript')).default;
  const { outputText } = ts.transpileModule(source, {
    fileName,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
  });
  // Written aside and renamed: processes starting together never read half a file.
  await mkdir(CACHE, { recursive: true });
  const partial = `${cached}.${process.pid}.tmp`;
  await writeFile(partial, outputText);
  await rename(partial, cached);
  return { format: 'module', source: outputText, shortCircuit: true };
}
