/** A mistake in the command line: the CLI prints it with a pointer to `--help` and exits 2. */
export class UsageError extends Error {}

/** A start that cannot go on for a reason the operator can fix (a busy port): the CLI prints its message alone and exits 1. */
export class StartError extends Error {}

/**
 * The error of a listen that failed, as one sentence naming the port and how to choose another;
 * other errors as they are.
 */
export function listenError(error: unknown, port: number, host: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const choose = 'choose another with --port PORT (or the PORT environment variable)';
  if (code === 'EADDRINUSE') return new StartError(`port ${port} on ${host} is already in use by another program: stop it, or ${choose}`);
  if (code === 'EACCES') return new StartError(`this user may not listen on port ${port} on ${host} (ports below 1024 need privileges): ${choose}`);
  if (code === 'EADDRNOTAVAIL') return new StartError(`${host} is not an address of this machine, so nothing can listen there: choose another with --host HOST (or the HOST environment variable)`);
  return error;
}
