import { basename, resolve } from 'node:path';

/**
 * Rewrites messages so they name files in `dir` relative to it, as `<label>/<rest>`, never by
 * the server's absolute path: messages reach API callers (a document's `error`, a 400), and an
 * absolute path tells them where the server keeps its data. `label` is how the folder is named
 * (e.g. `files`, `models/bge-small`); default its own name.
 *
 * @example
 * relativePaths('/srv/agent/data/files', 'files')("ENOENT: no such file or directory, open '/srv/agent/data/files/doc_1'");
 * // "ENOENT: no such file or directory, open 'files/doc_1'"
 */
export function relativePaths(dir: string, label = basename(resolve(dir))): (message: string) => string {
  const absolute = resolve(dir);
  return (message) => message.split(absolute).join(label);
}

/**
 * The error of a file operation in `dir`, its message naming paths relative to the folder (see
 * {@link relativePaths}). The same error object is answered, with its `code`, `errno` and
 * `syscall` kept, so callers that test them still can; its `path` stays absolute for logs.
 */
export function withRelativePaths<T>(error: T, dir: string, label?: string): T {
  if (error instanceof Error) {
    const relative = relativePaths(dir, label)(error.message);
    if (relative !== error.message) error.message = relative;
  }
  return error;
}
