/** A mistake in the command line: the CLI prints it with a pointer to `--help` and exits 2. */
export class UsageError extends Error {}
