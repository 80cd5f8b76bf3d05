import { realpath } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join, sep } from 'node:path';
import { PlatformError } from '@agent-platform/core';
import { codeSyntaxError } from '@agent-platform/core/internal';
import { build, type Message, type Plugin } from 'esbuild';
import { type NpmSpec, packageOf } from './specs.js';

/** Bundles larger than this are refused: the sandbox evaluates the whole script on every run. */
export const MAX_BUNDLE_BYTES = 5 * 1024 * 1024;

/** The name the tool code has in esbuild's messages (it is the stdin entry, not a file). */
const ENTRY = 'tool-code.js';
const PLUGIN = 'sandbox-imports';

/**
 * Bundles tool code with the packages installed in `installDir` into one classic script
 * (an IIFE that leaves `main` on `globalThis`), as the QuickJS worker evaluates it. Refuses,
 * with `invalid_request`: code that does not parse (`codeSyntaxError`: line and column), imports from the code of
 * anything but its declared packages, Node built-ins anywhere, any file outside `installDir`,
 * and bundles over {@link MAX_BUNDLE_BYTES}.
 */
export async function bundleTool(code: string, installDir: string, specs: readonly NpmSpec[]): Promise<string> {
  const root = await realpath(installDir);
  const declared = new Set(specs.map((s) => s.name));
  const entry = join(root, ENTRY);
  const guard: Plugin = {
    name: PLUGIN,
    setup(b) {
      // What the tool code itself may import: its declared packages (and files inside them).
      b.onResolve({ filter: /.*/ }, ({ path, importer }) => {
        if (importer !== entry) return undefined;
        // npm has packages named like built-ins (buffer, events, util): declared, they are used.
        if (declared.has(packageOf(path)) && !path.startsWith('node:')) return undefined;
        if (isBuiltin(path)) return refuse(`code: the tool code imports "${path}", which the sandbox does not provide`);
        if (/^[./\\]|:/.test(path)) return refuse(`code: the tool code imports "${path}", but a tool is one file: it can import only its dependencies`);
        return refuse(`code: the tool code imports "${path}", which is not among the tool's dependencies`);
      });
      // Nothing outside the installed packages is ever read: not the server's own node_modules
      // (esbuild looks in every parent folder), not an absolute path a package names.
      b.onLoad({ filter: /.*/, namespace: 'file' }, ({ path }) => (path === entry || path.startsWith(root + sep) ? undefined : refuse('outside')));
    },
  };
  let text: string;
  try {
    const result = await build({
      stdin: { contents: `${code}\n;globalThis.main = typeof main === 'function' ? main : undefined;\n`, resolveDir: root, sourcefile: ENTRY, loader: 'js' },
      absWorkingDir: root,
      bundle: true,
      write: false,
      format: 'iife',
      // 'browser' rather than 'neutral': only then does esbuild honour the `browser` field's
      // replacements (`"browser": { "fs": false }`), which is how packages say they run without Node.
      platform: 'browser',
      target: 'es2022',
      mainFields: ['browser', 'module', 'main'],
      conditions: ['worker', 'browser'],
      define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
      // Without it esbuild reads tsconfig.json files of the parent folders (paths, baseUrl).
      tsconfigRaw: '{}',
      legalComments: 'none',
      charset: 'utf8',
      logLevel: 'silent',
      plugins: [guard],
    });
    text = result.outputFiles[0]?.text ?? '';
  } catch (error) {
    const errors = (error as { errors?: Message[] }).errors;
    if (!errors?.[0]) throw error;
    const at = errors[0].location;
    // The tool's own code does not parse: said as every sandbox's syntax check says it.
    if (at?.file === ENTRY && errors[0].detail !== PLUGIN && !/^Could not resolve /.test(errors[0].text)) {
      // esbuild counts the column in UTF-8 bytes; the sandboxes count characters.
      const column = [...Buffer.from(at.lineText).subarray(0, at.column).toString()].length + 1;
      throw codeSyntaxError({ line: at.line, column, message: errors[0].text });
    }
    throw PlatformError.invalid(describe(errors[0]));
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_BUNDLE_BYTES) {
    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    throw PlatformError.invalid(`dependencies: the tool bundled with its dependencies is ${mb(bytes)}, more than the ${mb(MAX_BUNDLE_BYTES)} a tool may have`);
  }
  return text;
}

function refuse(text: string) {
  return { errors: [{ text, detail: PLUGIN }] };
}

/** One esbuild message as a sentence that names the code line or the package at fault. */
function describe(message: Message): string {
  const at = message.location;
  const file = at?.file ?? '';
  const owner = file.includes('node_modules/') ? packageOf(file.slice(file.lastIndexOf('node_modules/') + 'node_modules/'.length)) : undefined;
  // The import path as written, e.g. `"fs"` in `require("fs")`.
  const imported = at ? at.lineText.slice(at.column, at.column + at.length).replace(/^["'`]|["'`]$/g, '') : '';
  if (message.detail === PLUGIN && message.text !== 'outside') return message.text;
  if (message.detail === PLUGIN || /^Could not resolve /.test(message.text)) {
    const name = imported || /^Could not resolve "(.*)"/.exec(message.text)?.[1] || 'a file';
    const who = owner ? `dependencies: ${owner}` : 'code: the tool code';
    if (isBuiltin(name)) return `${who} imports "${name}", which the sandbox does not provide`;
    return `${who} imports "${name}", which is not among the installed packages`;
  }
  return `dependencies: ${owner ?? 'a dependency'}${at ? ` (${file.slice(file.lastIndexOf('node_modules/'))}:${at.line})` : ''}: ${message.text}`;
}
