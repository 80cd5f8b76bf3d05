import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// What python.ts needs to know and do about its host processes (py-host.js).

const here = dirname(fileURLToPath(import.meta.url));
/** The folder of the `pyodide` npm package (real path: the permission model checks real paths). */
export const pyodideDir = dirname(createRequire(import.meta.url).resolve('pyodide/pyodide.mjs'));
export const hostScript = resolve(here, 'py-host.js');

/** The node process under `unshare --fork`: the only child of `pid`. */
export async function hostPidOf(pid: number | undefined): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  try {
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8')).trim().split(/\s+/).filter(Boolean);
    return children.length === 1 ? Number(children[0]) : pid;
  } catch {
    return undefined;
  }
}

/** Resident memory of a process in bytes (Linux /proc), undefined elsewhere. */
export async function rss(pid: number): Promise<number | undefined> {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time a process has used, in clock ticks (user + system; Linux /proc), undefined elsewhere. */
export async function cpuTicks(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

const pyodideVersion = () => (JSON.parse(readFileSync(join(pyodideDir, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The interpreter snapshot: read from `dir` when a snapshot of this Pyodide and host script is
 * there, else made by a host process that runs no tool code (and written to `dir`). Undefined
 * when it cannot be made: interpreters then start the slow way.
 */
export async function loadSnapshot(permissions: readonly string[], dir: string | undefined, timeoutMs: number): Promise<Buffer | undefined> {
  const key = createHash('sha256').update(pyodideVersion()).update(readFileSync(hostScript)).digest('hex').slice(0, 16);
  const file = dir ? join(resolve(dir), `pyodide-${pyodideVersion()}-${key}.snapshot`) : undefined;
  if (file) {
    const stored = await readFile(file).catch(() => undefined);
    if (stored && stored.length > 0) return stored;
  }
  const made = await new Promise<Buffer | undefined>((done) => {
    const child = spawn(process.execPath, [...permissions, hostScript, pyodideDir, '--make-snapshot'], { env: {}, stdio: ['ignore', 'pipe', 'ignore'], timeout: timeoutMs });
    const chunks: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024 * 1024) child.kill('SIGKILL');
      else chunks.push(chunk);
    });
    child.on('error', () => done(undefined));
    child.on('close', (code) => done(code === 0 && size > 0 ? Buffer.concat(chunks) : undefined));
  });
  if (made && file) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(`${file}.partial`, made, { mode: 0o644 });
    await rename(`${file}.partial`, file);
  }
  return made;
}
