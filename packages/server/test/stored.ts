import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileBlobStore } from '@agent-platform/adapters-storage/blobs';
import type { DatabaseStorage } from '@agent-platform/adapters-storage/postgres';
import type { BlobStore } from '@agent-platform/core';
import { findServerBinaries } from '@agent-platform/core/testing';

const run = promisify(execFile);

/**
 * What a test server has stored, read beside the server as someone holding its disk or a dump
 * of its database would, whichever storage it runs on (see `TestServer.stored`).
 */
export interface StoredData {
  /**
   * Whether the stored data holds `text` anywhere: the SQLite file and its write-ahead log byte
   * for byte, or every row of the PostgreSQL database (a `pg_dump` of its data, where `bytea`
   * columns are hex: `text` is looked for as written and as hex).
   */
  holds(text: string): Promise<boolean>;
  /** The blobs of uploads and posted texts (the data folder's `files/`, or the database's `blobs` table) and their keys. */
  readonly blobs: BlobStore & { keys(): Promise<string[]> };
  close(): Promise<void>;
}

/** A SQLite server's data folder. */
export function sqliteStored(dataDir: string): StoredData {
  const files = join(dataDir, 'files');
  return {
    async holds(text) {
      const parts = ['agent-platform.db', 'agent-platform.db-wal'].map((f) => readFile(join(dataDir, f)).catch(() => Buffer.alloc(0)));
      return Buffer.concat(await Promise.all(parts)).includes(Buffer.from(text));
    },
    blobs: {
      ...fileBlobStore({ dir: files }),
      keys: async () => (await readdir(files).catch(() => [] as string[])).sort(),
    },
    close: async () => {},
  };
}

/** A PostgreSQL server's database, read with the cluster's own client programs and the real blob store. */
export function postgresStored(database: string): StoredData {
  const url = new URL(database);
  const connection = ['-h', url.hostname, '-p', url.port, '-U', decodeURIComponent(url.username), '-d', url.pathname.slice(1)];
  const bin = (name: string) => join(findServerBinaries(), name);
  let storage: Promise<DatabaseStorage> | undefined;
  const open = () => {
    storage ??= import('@agent-platform/adapters-storage/postgres').then(({ postgresStorage }) => postgresStorage({ connectionString: database }));
    return storage;
  };
  return {
    async holds(text) {
      const { stdout } = await run(bin('pg_dump'), [...connection, '--data-only', '--no-owner'], { maxBuffer: 1 << 30 });
      return stdout.includes(text) || stdout.includes(Buffer.from(text).toString('hex'));
    },
    blobs: {
      put: async (key, bytes) => (await open()).blobs.put(key, bytes),
      get: async (key) => (await open()).blobs.get(key),
      delete: async (key) => (await open()).blobs.delete(key),
      async keys() {
        const { stdout } = await run(bin('psql'), [...connection, '-XAt', '-c', 'SELECT key FROM blobs ORDER BY key']);
        return stdout.split('\n').filter(Boolean);
      },
    },
    close: async () => {
      if (storage) await (await storage).close();
    },
  };
}
