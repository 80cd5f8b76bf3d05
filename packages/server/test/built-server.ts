import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The built command line (`pnpm build` first). */
export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** `keys create` on a data folder: the new user's key (the last line printed). */
export async function createKey(dir: string, name: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'keys', 'create', '--name', name, '--data', dir]);
  return stdout.trim().split('\n').at(-1) as string;
}

/** The built server on a data folder (any port), resolved once it says where it listens. */
export function serveBuilt(dir: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data', dir, ...args], { env: { ...process.env, LOG_LEVEL: 'silent', ...env } });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve({ child, url: m[1] });
    });
    child.on('exit', (code, signal) => reject(new Error(`serve exited ${code ?? signal}: ${out}`)));
  });
}

/** A JSON call with a key: its status and parsed body. */
export async function keyCall(url: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json() };
}
