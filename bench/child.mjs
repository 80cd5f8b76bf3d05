// Starts one server of bench/servers.mjs (or another script speaking the same protocol) in a
// child process; resolves with its URL, the first key it created (the real server on an empty
// database) and a stop().
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const servers = fileURLToPath(new URL('servers.mjs', import.meta.url));

export function startChild(kind, arg, env = {}) {
  return startServerScript(servers, kind, arg, env);
}

/**
 * Forks `script` with the arguments `kind arg`; the script sends `{ url, firstKey? }` over IPC
 * once it listens and exits when the parent disconnects.
 */
export function startServerScript(script, kind, arg, env = {}) {
  const child = fork(script, [kind, arg], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, ...env } });
  return new Promise((resolve, reject) => {
    const stop = () =>
      new Promise((r) => {
        stopping = true;
        child.once('exit', r);
        child.disconnect();
      });
    // A server that dies mid-run says so (a benchmark's next request would only see a closed socket).
    let stopping = false;
    child.once('message', () => child.once('exit', (code, signal) => stopping || console.error(`bench: the ${kind} server (pid ${child.pid}) exited: code ${code}, signal ${signal}`)));
    child.once('message', (m) => resolve({ url: m.url, firstKey: m.firstKey, pid: child.pid, stop }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited ${code}`)));
  });
}
