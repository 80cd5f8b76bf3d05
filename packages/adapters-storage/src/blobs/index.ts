import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type BlobStore, PlatformError } from '@agent-platform/core';
import { withRelativePaths } from '@agent-platform/core/internal';

/** Keys are file names made by the platform (ids); anything that could leave the folder is refused. */
export function checkBlobKey(key: string): void {
  if (!/^[\w-][\w.-]{0,199}$/.test(key) || key === '.' || key === '..') {
    throw PlatformError.invalid(`Invalid blob key "${key}"`);
  }
}

/** Blobs in process memory (tests, embedding). */
export function memoryBlobStore(): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return {
    async put(key, bytes) {
      checkBlobKey(key);
      blobs.set(key, new Uint8Array(bytes));
    },
    async get(key) {
      const bytes = blobs.get(key);
      return bytes && new Uint8Array(bytes);
    },
    async delete(key) {
      return blobs.delete(key);
    },
  };
}

/**
 * Blobs as files in `dir` (created when missing); writes go through a temp file and a rename.
 * Errors name files as `<label>/<key>` (default label: the folder's name), never by the
 * server's absolute path: they reach API callers (a document's `error`).
 */
export function fileBlobStore(options: { dir: string; label?: string }): BlobStore {
  const { dir } = options;
  let ready: Promise<unknown> | undefined;
  const ensureDir = () => {
    ready ??= mkdir(dir, { recursive: true });
    return ready;
  };
  const relative = (error: unknown) => withRelativePaths(error, dir, options.label);
  return {
    async put(key, bytes) {
      checkBlobKey(key);
      try {
        await ensureDir();
        const temp = join(dir, `.${key}.${process.pid}.tmp`);
        await writeFile(temp, bytes);
        await rename(temp, join(dir, key));
      } catch (error) {
        throw relative(error);
      }
    },
    async get(key) {
      checkBlobKey(key);
      try {
        // The Buffer as read (a Uint8Array of its own memory): copying it again cost 40 ms of
        // the main thread for a 9 MB file here.
        return await readFile(join(dir, key));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw relative(error);
      }
    },
    async delete(key) {
      checkBlobKey(key);
      try {
        await rm(join(dir, key));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw relative(error);
      }
    },
  };
}
