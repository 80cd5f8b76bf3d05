import { type ChildProcess, type ForkOptions, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Registers the TypeScript hooks in a process started from a `.ts` entry (the workspace's sources). */
const TYPESCRIPT = new URL('./register-typescript.js', import.meta.url);

/**
 * Starts a Node child process running the ES module `entry`: a `.js` file (built packages) as
 * it is, a `.ts` file (the workspace's sources, as tests run them) through hooks that
 * transpile TypeScript. The child gets exactly `options.execArgv` (none of this process's
 * flags: a `--cpu-prof` or an inspector port of the parent would otherwise be inherited).
 */
export function forkModule(entry: URL, options: ForkOptions = {}): ChildProcess {
  const execArgv = [...(options.execArgv ?? []), ...(entry.pathname.endsWith('.ts') ? ['--import', TYPESCRIPT.href] : [])];
  return fork(fileURLToPath(entry), [], { ...options, execArgv });
}
