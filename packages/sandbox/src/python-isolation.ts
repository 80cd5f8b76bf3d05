import { spawn } from 'node:child_process';

/**
 * How the Python host process is confined, besides Node's permission model and an empty
 * environment (which always apply):
 * - `namespaces`: new network and PID namespaces (no network interface at all, no other
 *   process visible) and, when the server runs as root, the uid `nobody`. Needs `unshare`
 *   (util-linux) and either root or unprivileged user namespaces.
 * - `process`: no namespaces; network and process functions of Node.js are replaced by ones
 *   that throw inside the host. Weaker: use it only where namespaces cannot be created.
 * - `auto` (default): `namespaces` when this machine can create them, else Python tools are
 *   refused with a message naming the reason and the `process` opt-in.
 */
export type PythonIsolation = 'auto' | 'namespaces' | 'process';

export interface IsolationChoice {
  /** Command and arguments that go before `node ...`; empty for `process`. */
  readonly prefix: readonly string[];
  /** e.g. `network and PID namespaces, uid nobody`. */
  readonly description: string;
}

const NOBODY = '65534';

/**
 * `setpriv --pdeathsig KILL` makes the kernel kill a process when its parent dies: around
 * `unshare` (for when the server dies) and again inside it, because changing the uid clears
 * the setting `unshare --kill-child` made. Without it a host busy in an endless loop would
 * outlive the server.
 */
const ORPHAN_GUARD = ['setpriv', '--pdeathsig', 'KILL', '--'];

/** The namespace variants to try, strongest first. */
function variants(isRoot: boolean): { prefix: string[]; description: string }[] {
  const base = [...ORPHAN_GUARD, 'unshare', '--net', '--pid', '--kill-child'];
  const list = [{ prefix: [...base, '--map-root-user', '--'], description: 'user, network and PID namespaces' }];
  if (isRoot) {
    list.unshift({ prefix: [...base, '--setuid', NOBODY, '--setgid', NOBODY, '--', ...ORPHAN_GUARD], description: 'network and PID namespaces, uid nobody' });
    list.push({ prefix: [...base, '--'], description: 'network and PID namespaces' });
  }
  return list;
}

/**
 * Finds the strongest confinement this machine allows for a host that must read `files`
 * (checked from inside, as the confined user). Run once per sandbox: a few short `unshare` calls.
 */
export async function chooseIsolation(mode: PythonIsolation, files: readonly string[]): Promise<IsolationChoice | { readonly refused: string }> {
  if (mode === 'process') {
    const guarded = (await run(ORPHAN_GUARD[0] as string, [...ORPHAN_GUARD.slice(1), process.execPath, '-e', '0'])).status === 0;
    return { prefix: guarded ? ORPHAN_GUARD : [], description: 'process only (in-process network guards, no namespaces)' };
  }
  const check = `const fs=require('fs');for(const f of ${JSON.stringify(files)})fs.accessSync(f,fs.constants.R_OK);if(Object.keys(require('os').networkInterfaces()).some(n=>n!=='lo'))process.exit(3)`;
  const reasons: string[] = [];
  for (const variant of variants(process.getuid?.() === 0)) {
    const [command, ...args] = variant.prefix;
    const probe = await run(command as string, [...args, process.execPath, '-e', check]);
    if (probe.status === 0) return variant;
    reasons.push(`${variant.description}: ${probe.error ?? (probe.stderr.trim().split('\n').pop() || `exit ${probe.status}`)}`);
  }
  const why = `this machine cannot confine the Python sandbox in namespaces (${reasons.join('; ')})`;
  if (mode === 'namespaces') throw new Error(why);
  return { refused: `${why}. Python tools are refused; an operator can allow them with the weaker in-process isolation (--python-isolation process)` };
}

/** Runs a command with an empty environment (10 s at most): its exit status and stderr. */
function run(command: string, args: readonly string[]): Promise<{ status: number | null; stderr: string; error?: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: {}, stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2000);
    });
    child.on('error', (error) => resolve({ status: null, stderr, error: error.message }));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}
